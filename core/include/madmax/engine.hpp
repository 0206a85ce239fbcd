// The cost engine: scenario -> result. Pure, allocation-free unless a timeline is asked for.
#pragma once

#include "madmax/result.hpp"
#include "madmax/scenario.hpp"

namespace madmax {

struct EvaluateOptions {
    bool timeline = false; ///< also lay out the critical stage's ops for a chart (allocates)
};

/// Predict one training step. The scenario must be valid (see explainInvalid); every evaluation
/// of a valid scenario returns finite, positive times.
Result evaluate(const Scenario& scenario, const EvaluateOptions& options = {});

/// Memory per GPU of the fullest pipeline stage (what evaluate() reports), on its own: cheap,
/// for filtering configurations that cannot fit before timing them.
MemoryBreakdown peakMemory(const Scenario& scenario);

/// Share of routed token copies a capacity factor drops, for expert loads spread evenly between
/// (2 − I) and I times the mean (I = the load imbalance); 0 when dropless or balanced.
double tokenDropRate(const MoeShape& moe);

} // namespace madmax
