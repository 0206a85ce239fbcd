// Memory per GPU (docs/developer/model.md §5): ZeRO sharding (Rajbhandari et al. SC20) and activations
// (Korthikanti et al. 2022), with the in-flight micro-batches of the pipeline schedule.
#pragma once

#include "madmax/pipeline.hpp"
#include "madmax/result.hpp"
#include "madmax/scenario.hpp"

namespace madmax {

/// Activation bytes one transformer layer keeps for backward, for one micro-batch on one GPU.
/// Generalises Korthikanti et al. Table 2 to GQA and gated MLPs; with the paper's shapes
/// (g = a, f = 4h) it reduces to sbh(34 + 5as/h) and its TP/SP/recompute variants.
/// `moeLayer`: a MoE layer (attention, shared experts, k routed copies of each token, router).
double layerActivationBytes(const Model& m, const Strategy& st, const Workload& w,
                            bool moeLayer = false);
/// The same under recompute `r` instead of the strategy's (a layer that is or is not among the
/// recomputed ones with strategy.recompute_layers).
double layerActivationBytes(const Model& m, const Strategy& st, const Workload& w, bool moeLayer,
                            Recompute r);

/// Routed token copies one GPU's experts process for `tokens` tokens of its micro-batch:
/// tokens · k · ETP / TP, times the load imbalance (capped by the capacity factor).
double moeRoutedCopiesPerGpu(const Model& m, const Strategy& st, double tokens);

/// Micro-batches whose activations a stage holds at peak: 1F1B holds min(p - stage, m);
/// interleaving multiplies the first stage's by 1 + (p-1)/(p·v) (Narayanan et al. SC21 §2.2).
double inFlightMicroBatches(const Strategy& st, int microBatches, int stage);

/// Memory of pipeline stage `stage` (0-based), given the layers it holds.
MemoryBreakdown stageMemory(const Scenario& s, const PipelineStage& stage);
/// The same for stage number `stage` holding `layersOnStage` layers.
MemoryBreakdown stageMemory(const Scenario& s, int stage, int layersOnStage);

} // namespace madmax
