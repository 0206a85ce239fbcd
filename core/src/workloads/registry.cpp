// The workload registry: which room evaluates a scenario, reports its memory and checks its
// rules. Adding a workload is its own room plus one line in kRooms (docs/architecture.md).
#include "madmax/engine.hpp"

#include "dlrm/dlrm_engine.hpp"
#include "engine/scenario_rules.hpp"
#include "serving/inference.hpp"
#include "training/step.hpp"
#include "madmax/error.hpp"

#include <cmath>
#include <string>

namespace madmax {

namespace {

using Why = std::optional<std::string>;

struct WorkloadRoom {
    const char* name;
    bool (*owns)(const Scenario&);
    Result (*evaluate)(const Scenario&, const EvaluateOptions&);
    MemoryBreakdown (*memory)(const Scenario&);
    Why (*explainInvalid)(const Scenario&); ///< after the frozen-range rules every room shares
};

/// First match wins; the last room takes every scenario the others do not.
constexpr WorkloadRoom kRooms[] = {
    {"dlrm", [](const Scenario& s) { return s.model.isDlrm(); }, detail::evaluateDlrm,
     [](const Scenario& s) { return detail::dlrmMemory(s); },
     [](const Scenario& s) -> Why {
         if (auto why = detail::explainInvalidSystem(s)) return why;
         return detail::explainInvalidDlrm(s);
     }},
    {"serving", [](const Scenario& s) { return s.workload.kind == WorkloadKind::Inference; },
     [](const Scenario& s, const EvaluateOptions& o) {
         return detail::evaluateInference(s, o.prefillMemo);
     },
     [](const Scenario& s) { return detail::evaluateInference(s).memory; },
     detail::explainInvalidLayered},
    {"training", [](const Scenario&) { return true; }, detail::evaluateTraining,
     detail::transformerMemory, detail::explainInvalidLayered},
};

const WorkloadRoom& roomOf(const Scenario& s) {
    for (const WorkloadRoom& room : kRooms)
        if (room.owns(s)) return room;
    return kRooms[std::size(kRooms) - 1];
}

} // namespace

/// No prediction leaves the engine unless it is a number (issue #30): inputs inside their
/// ranges can still combine into an overflow, and a NaN or an infinite step must be an error
/// that says so, never a printed "-nan" with exit 0.
static void requireFinite(const Scenario& s, const Result& r) {
    const double figures[] = {r.stepTimeS, r.tokensPerS, r.samplesPerS, r.mfu,
                              r.memory.totalBytes(), r.inference.ttftS};
    for (double v : figures)
        if (!std::isfinite(v) || v < 0)
            throw InputError(s.name.empty() ? "scenario" : s.name, "",
                             "the prediction is not a finite number (step " +
                                 std::to_string(r.stepTimeS) +
                                 " s): a rate, size or count is outside what a machine or model "
                                 "could have; check the system's rates and the workload's sizes");
    if (!(r.stepTimeS > 0) || r.stepTimeS > 1e12)
        throw InputError(s.name.empty() ? "scenario" : s.name, "",
                         "the predicted step (" + std::to_string(r.stepTimeS) +
                             " s) is outside (0, 10^12 s]: a rate or size is outside what a "
                             "machine could have");
}

Result evaluate(const Scenario& s, const EvaluateOptions& options) {
    Result r = roomOf(s).evaluate(s, options);
    requireFinite(s, r);
    return r;
}

MemoryBreakdown peakMemory(const Scenario& s) {
    return roomOf(s).memory(s);
}

std::optional<std::string> explainInvalid(const Scenario& s) {
    if (auto why = detail::explainInvalidFrozen(s)) return why;
    if (auto why = detail::explainInvalidContext(s)) return why;
    return roomOf(s).explainInvalid(s);
}

} // namespace madmax
