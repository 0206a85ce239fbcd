// The cost engine: scenario -> result, through the workload registry (workloads/registry.cpp).
// Pure, allocation-free unless a timeline is asked for.
#pragma once

#include "madmax/moe.hpp"
#include "madmax/result.hpp"
#include "madmax/scenario.hpp"

namespace madmax {

/// Predict one training step. The scenario must be valid (see explainInvalid); every evaluation
/// of a valid scenario returns finite, positive times.
Result evaluate(const Scenario& scenario, const EvaluateOptions& options = {});

/// Memory per GPU of the fullest pipeline stage (what evaluate() reports), on its own: cheap,
/// for filtering configurations that cannot fit before timing them.
MemoryBreakdown peakMemory(const Scenario& scenario);

} // namespace madmax
