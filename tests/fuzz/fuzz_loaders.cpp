// libFuzzer target for every loader that reads user files: scenarios (with presets and
// overrides, then the engine on what parses), model / GPU / system presets, validation files and
// the search / sweep outputs `madmax merge` reads, the seed's model/system/task files and the
// nccl-tests output and PyTorch profiler traces `madmax calibrate` reads. The first input byte picks the loader, the
// rest is the file. An InputError is the expected answer to bad input; anything else — a crash,
// another exception, a sanitizer report, a non-finite prediction — is a finding.
// Build and run: see docs/reference/input-errors.md "Fuzzing".
#include "madmax/calibrate.hpp"
#include "madmax/codesign.hpp"
#include "madmax/engine.hpp"
#include "madmax/error.hpp"
#include "madmax/scenario_io.hpp"
#include "madmax/search_io.hpp"
#include "madmax/seed.hpp"
#include "madmax/validation.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

using namespace madmax;

namespace {

void requireFinite(const Result& r) {
    if (!std::isfinite(r.stepTimeS) || !(r.stepTimeS > 0) || !std::isfinite(r.memory.totalBytes()))
        std::abort(); // a valid scenario must predict finite, positive times
}

void loadScenarioText(const std::string& text) {
    const PresetLibrary& lib = PresetLibrary::builtin();
    const nlohmann::json doc = parseJsonText(text, "fuzz.json");
    const Scenario s = parseScenario(resolveScenario(doc, lib, "fuzz.json"), "fuzz.json");
    requireFinite(evaluate(s));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) return 0;
    const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
    try {
        switch (data[0] % 10) {
        case 0:
            loadScenarioText(text);
            break;
        case 1:
            parseModel(parseJsonText(text, "m.json"), "m.json", "model");
            break;
        case 2:
            parseGpu(parseJsonText(text, "g.json"), "g.json", "gpu");
            break;
        case 3:
            parseSystem(parseJsonText(text, "s.json"), "s.json", "system");
            break;
        case 4:
            runValidation(parseJsonText(text, "v.json"), PresetLibrary::builtin(), "v.json");
            break;
        case 5: {
            const std::vector<SearchResult> parts = {
                searchFromJson(parseJsonText(text, "r.json"), "r.json")};
            checkSearchShards(parts, {"r.json"}); // `madmax merge` checks, then merges
            mergeResults(parts, 10);
            break;
        }
        case 6:
            mergeSweeps({sweepFromJson(parseJsonText(text, "w.json"), "w.json")});
            break;
        case 8: {
            // nccl-tests output for `madmax calibrate`: parse, print back, parse again.
            const NcclTable t = parseNcclTests(text, "all_reduce_perf.txt");
            const NcclTable back = parseNcclTests(formatNcclTests(t), "again.txt");
            if (back.rows.size() != t.rows.size() || back.ranks != t.ranks) std::abort();
            break;
        }
        case 7: {
            // The seed's three files in one document: the reference engine, and the native
            // engine on what converts.
            const nlohmann::json doc = parseJsonText(text, "seed.json");
            if (!doc.is_object() || !doc.contains("model") || !doc.contains("system") ||
                !doc.contains("task"))
                break;
            const seed::Model m = seed::parseModel(doc["model"], "model.json");
            const seed::System sys = seed::parseSystem(doc["system"], "system.json");
            const seed::Task t = seed::parseTask(doc["task"], "task.json");
            const seed::ReferenceResult r = seed::runReference(m, sys, t, "task.json");
            if (!std::isfinite(r.iterationS) || !(r.iterationS > 0)) std::abort();
            std::vector<std::string> assumed;
            const Scenario s = parseScenario(
                seed::toScenarioJson(m, sys, t, PresetLibrary::builtin(), assumed, "model.json"),
                "converted");
            requireFinite(evaluate(s));
            break;
        }
        case 9: {
            // A PyTorch profiler trace for `madmax calibrate --kineto`: parse, write back, parse
            // again (the same GEMMs), then fit the H100 preset's GEMM curve to it.
            const KinetoTrace t = parseKinetoTrace(parseJsonText(text, "trace.json"), "trace.json");
            const KinetoTrace back =
                parseKinetoTrace(parseJsonText(formatKinetoTrace(t), "again.json"), "again.json");
            if (back.gemms.size() != t.gemms.size()) std::abort();
            CalibrationInputs in;
            in.kineto.push_back(t);
            nlohmann::json sysDoc = {{"system", "dgx-h100-superpod"}};
            resolvePresetRefs(sysDoc, PresetLibrary::builtin(), "fuzz");
            const CalibrationReport r = calibrate(
                "h100-sxm5-80gb", parseSystem(sysDoc["system"], "fuzz", "system"), in, "fuzzed");
            for (const auto& x : r.residuals)
                if (!std::isfinite(x.after) || !std::isfinite(x.before)) std::abort();
            break;
        }
        }
    } catch (const InputError&) {
        // The expected answer to bad input.
    }
    return 0;
}
