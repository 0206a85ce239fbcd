// The pipeline's stages as the engine and the memory model see them: which stages differ, how
// many layers each holds and which parameters a GPU of each keeps. One owner for these facts.
#pragma once

#include "madmax/scenario.hpp"

#include <array>

namespace madmax {

/// One kind of pipeline stage. The first holds the embedding, the last the final norm, LM head
/// and loss; stages in between hold only layers. With pp = 1 a single stage is both.
struct PipelineStage {
    int index = 0;  ///< 0-based stage number (a middle stage is represented by stage 1)
    int layers = 0; ///< transformer layers it holds
    int moeLayers = 0; ///< of which MoE layers (the rest have a dense MLP)
    bool first = false;
    bool last = false;
    int frozenLayers = 0;    ///< of its layers, frozen (workload.frozen)
    int frozenMoeLayers = 0; ///< of which MoE layers
    /// Of its layers, those whose backward recomputes their forward (recompute "full": all, or
    /// with strategy.recompute_layers = n the first n of each of its model chunks).
    int recomputedLayers = 0;
    int recomputedMoeLayers = 0; ///< of which MoE layers
};

/// The stages whose work differs, in the order ties are resolved: first, last, then a middle one
/// (and, when layers are frozen, the other end of the middle stages: it can hold fewer frozen).
struct PipelineStages {
    std::array<PipelineStage, 4> stage{};
    int count = 0;
    const PipelineStage* begin() const { return stage.data(); }
    const PipelineStage* end() const { return stage.data() + count; }
};

/// The stage holding layers [begin, begin + layers), with its MoE and frozen layer counts.
/// `physical`: the stage's real number when `index` stands for a middle stage (-1: index);
/// with the interleaved schedule its frozen layers are counted over its chunks.
PipelineStage stageOf(const Scenario& s, int index, int begin, int layers, bool first, bool last,
                      int physical = -1);

/// Layers per stage: an even split of l / pp, or Llama-3-style first/last stage counts with the
/// rest split evenly over the other stages. The scenario must be valid. MoE layers are counted
/// with stages holding consecutive layers (the leading dense layers sit on the first stage);
/// the middle stage counts those of the last middle stage, the one with the most MoE layers.
PipelineStages distinctStages(const Scenario& s);

/// The largest number of layers one model chunk holds: L / (pp·vp) for an even split, else
/// the largest of the first, middle and last stages' layers over vp.
int largestChunkLayers(const Scenario& s);

/// Recomputed layers over the whole model, summed over every stage's chunks (hardware FLOPs).
struct RecomputedLayers {
    int layers = 0, moeLayers = 0;
};
RecomputedLayers modelRecomputedLayers(const Scenario& s);

/// Parameters one GPU of a stage holds, by how they are split and sharded: the dense part
/// (attention, dense MLPs, shared experts, router, embedding, head: ÷ TP, data-parallel over
/// DP × CP) and the routed experts (÷ EP × ETP, data-parallel over EDP).
struct StageParams {
    double dense = 0;
    double expert = 0;
    double total() const { return dense + expert; }
};
StageParams stageParamSplit(const Model& m, const Strategy& st, const PipelineStage& stage);

/// Parameters one GPU of a stage trains (workload.frozen removed): what has gradients, is
/// reduced over data parallelism and has optimizer state.
StageParams stageTrainableParamSplit(const Model& m, const Strategy& st, const Frozen& f,
                                     const PipelineStage& stage);

/// Parameters one GPU of `stage` holds (÷ TP): its layers, the embedding on the first stage, the
/// final norm and the LM head (or, with tied embeddings and pp > 1, a copy of the embedding) on
/// the last.
double stageParamsPerGpu(const Model& m, const Strategy& st, const PipelineStage& stage);
/// Parameters of one layer a GPU holds: a dense layer, or a MoE layer (both parts).
StageParams layerParamsPerGpu(const Model& m, const Strategy& st, bool moeLayer);
/// Parameters a GPU holds of `denseLayers` dense and `moeLayers` MoE layers (no edges).
StageParams layersParams(const Model& m, const Strategy& st, int denseLayers, int moeLayers);

} // namespace madmax
