#pragma once

#include "madmax/result.hpp"
#include "madmax/scenario.hpp"

namespace madmax::detail {

namespace serving {
class PrefillMemo;
}

/// The serving model; evaluate() dispatches here for inference workloads (with a serving
/// search's memo of prefill passes, EvaluateOptions::prefillMemo, when it has one).
Result evaluateInference(const Scenario& s, serving::PrefillMemo* memo = nullptr);

} // namespace madmax::detail
