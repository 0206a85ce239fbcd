// The step assembly of layered models (dense and MoE transformers, ViT): one layer of each kind
// simulated on the streams from its blocks, the stages' passes, the pipeline schedule, the
// data-parallel synchronisation, the optimizer and the step's totals (docs/developer/model.md §4). The blocks
// themselves live in their rooms (transformer/, moe/, vit/); BlockKind picks them here.
#pragma once

#include "madmax/pipeline.hpp"
#include "madmax/result.hpp"
#include "madmax/scenario.hpp"
#include "moe/moe_layer.hpp"
#include "transformer/layer.hpp"

#include <optional>

namespace madmax::detail {

/// What every step needs and no step changes: the op coster, the communication groups, the
/// shape of one micro-batch on one GPU.
struct StepContext {
    OpCoster oc;
    Groups groups;
    Shape shape;
    int microBatches;
};

StepContext makeContext(const Scenario& s);

/// One layer of each kind (dense MLP, MoE) forward and backward, scheduled on the streams, and
/// the stage edges.
struct LayerSchedule {
    StreamSim fwd, bwd;       ///< a dense layer
    StreamSim moeFwd, moeBwd; ///< a MoE layer (MoE models only)
    /// Frozen layers' backward (input gradients only): built only when frozen layers pass
    /// gradients down; without it they run no backward.
    std::optional<StreamSim> bwdFrozen, moeBwdFrozen;
    /// With strategy.recompute_layers: the backward of the layers that keep their activations
    /// (bwd and moeBwd then recompute); nothing is frozen then (the scenario check refuses it).
    std::optional<StreamSim> bwdKept, moeBwdKept;
    LayerCosts costs{};
    MoeLayerCosts moe{}; ///< MoE models only
    EdgeCosts edge;

    /// Every backward a stage runs per micro-batch, in the order it runs them: `fn(sim, count)`
    /// for its MoE then dense layers, trainable ones in full (with recompute_layers, the kept
    /// ones before the recomputed first layers of the chunk), frozen ones by input gradient.
    template <typename Fn> void forEachBackward(const PipelineStage& stage, Fn fn) const {
        const int moeFrozen = stage.frozenMoeLayers;
        const int denseFrozen = stage.frozenLayers - moeFrozen;
        const int dense = stage.layers - stage.moeLayers;
        const int moeRec = stage.recomputedMoeLayers;
        const int denseRec = stage.recomputedLayers - moeRec;
        if (moeBwdKept) {
            fn(*moeBwdKept, stage.moeLayers - moeRec);
            fn(moeBwd, moeRec);
        } else {
            fn(moeBwd, stage.moeLayers - moeFrozen);
        }
        if (moeBwdFrozen) fn(*moeBwdFrozen, moeFrozen);
        if (bwdKept) {
            fn(*bwdKept, dense - denseRec);
            fn(bwd, denseRec);
        } else {
            fn(bwd, dense - denseFrozen);
        }
        if (bwdFrozen) fn(*bwdFrozen, denseFrozen);
    }
};

/// Costs every block of the model once and simulates one layer of each kind.
void simulateLayer(const Scenario& s, const StepContext& ctx, LayerSchedule& out);

/// One micro-batch's forward and backward wall time on one kind of stage.
struct StagePass {
    PipelineStage stage;
    double fwd = 0, bwd = 0;
    double offloadFwd = 0, offloadBwd = 0; ///< of fwd and bwd: waits for activation offload
};

struct PipelineTimes {
    double microBatchWallS; ///< one micro-batch's forward + backward + p2p on the critical stage
    double bubbleS;
};

inline void addTable(CommTable& into, const CommTable& from, double times) {
    for (int d = 0; d < kParallelDimCount; ++d)
        for (int c = 0; c < kCollectiveCount; ++c) {
            into[d][c].serializedS += from[d][c].serializedS * times;
            into[d][c].exposedS += from[d][c].exposedS * times;
        }
}

inline void addComm(CommTable& t, ParallelDim d, Collective c, double serialized, double exposed) {
    t[int(d)][int(c)].serializedS += serialized;
    t[int(d)][int(c)].exposedS += exposed;
}

/// Data-parallel synchronisation of the critical stage, once per step; the exposed seconds.
double dataParallelSync(const Scenario& s, const StepContext& ctx, const StagePass& crit,
                        CommTable& comm);
/// The optimizer step's HBM-bound time on the critical stage.
double optimizerStep(const Scenario& s, const StepContext& ctx, const StagePass& crit);
/// Step time = compute + exposed communication + bubble (+ stated overheads); sets the totals.
double stepTotals(const Scenario& s, const CommTable& comm, double bubbleS, Result& r);
/// Throughput and FLOP utilisation of a step whose totals stepTotals() set.
void finishStep(const Scenario& s, Result& r);
/// One micro-batch on the critical stage op by op, then the step-level phases (allocates).
void appendStepTimeline(Result& r, const StepContext& ctx, const LayerSchedule& l,
                        const StagePass& crit, const PipelineTimes& pipe, double dpExposed);

/// One training step of a layered model (the registry's evaluate for these workloads).
Result evaluateTraining(const Scenario& s, const EvaluateOptions& options);

} // namespace madmax::detail
