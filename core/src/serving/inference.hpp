#pragma once

#include "madmax/result.hpp"
#include "madmax/scenario.hpp"

namespace madmax::detail {

/// The serving model; evaluate() dispatches here for inference workloads.
Result evaluateInference(const Scenario& s);

} // namespace madmax::detail
