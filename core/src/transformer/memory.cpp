#include "madmax/memory.hpp"

#include "madmax/pipeline_schedule.hpp"
#include "madmax/flops.hpp"
#include "transformer/layer.hpp"

#include <algorithm>

namespace madmax {

double moeRoutedCopiesPerGpu(const Model& m, const Strategy& st, double tokens) {
    // Parallel folding: the stage's tokens × k copies spread over its TP·CP·DP GPUs, each
    // expert-TP group holding its copies in full (ETP splits the width, not the tokens). The
    // critical rank takes the imbalance factor more, capped by the capacity factor.
    return tokens * m.moe.topK * double(st.etp) / st.tp * m.moe.criticalLoad(st.ep);
}

double layerActivationBytes(const Model& m, const Strategy& st, const Workload& w, bool moeLayer) {
    return layerActivationBytes(m, st, w, moeLayer, st.recompute);
}

double layerActivationBytes(const Model& m, const Strategy& st, const Workload& w, bool moeLayer,
                            Recompute recompute) {
    // Korthikanti et al. 2022, §4 and Table 2, generalised: element counts per layer for one
    // micro-batch, with 16-bit activations (2 bytes) and 1-byte dropout masks.
    const double s = double(w.seqLen) / st.cp; // CP splits the sequence
    const double b = st.microBatch, h = double(m.hidden);
    const double dqk = double(m.qkHeadDim()), dv = double(m.vHeadDim());
    const double f = double(m.ffnHidden), t = st.tp;
    const double sb = s * b;

    if (recompute == Recompute::Full) {
        // Only each layer's input is kept (2sbh), split by TP when SP shards it.
        return 2.0 * sb * h / (st.sequenceParallel ? t : 1.0);
    }
    // Tensors TP always splits: Q (2sbad), K and V (4sbgd; MLA: the up-projected per-head K and
    // V), the output projection's input (2sbad) and the MLP intermediates (4sbf plain: GeLU
    // input + fc2 input; 6sbf gated).
    // Selective recompute of an MLA layer also recomputes its up-projections (Megatron-Core
    // recompute module mla_up_proj): the per-head Q, K, V are rebuilt from the kept latents.
    const bool selective = recompute == Recompute::Selective;
    const double kv =
        m.mla ? (selective ? 0.0 : 2.0 * sb * m.heads * (dqk + dv)) : 4.0 * sb * m.kvHeads * dqk;
    double split =
        (m.mla && selective ? 0.0 : 2.0 * sb * m.heads * dqk) + kv + 2.0 * sb * m.heads * dv;
    if (!moeLayer)
        split += (m.gatedMlp ? 6.0 : 4.0) * sb * f;
    else // shared experts: a dense MLP of width shared × f_e
        split += (m.gatedMlp ? 6.0 : 4.0) * sb * double(m.moe.sharedExperts) * m.moe.expertFfn;
    // The attention score matrices (softmax output 2, dropout mask 1, dropout output 2 bytes per
    // element: 5as² per sample) exist only with an unfused kernel and no selective recompute.
    if (w.attention == AttentionKernel::Unfused && !selective)
        split += 5.0 * m.heads * s * double(w.seqLen) * b;
    // Tensors replicated across TP unless sequence parallelism splits them: two norm inputs
    // (4sbh), QKV and MLP inputs (4sbh), two dropout masks (2sbh); MLA's latents (2sb(d_q+d_c)).
    double replicated = 10.0 * sb * h;
    if (m.mla) replicated += 2.0 * sb * double(m.mlaShape.qLoraRank + m.mlaShape.kvLoraRank);
    double bytes = split / t + replicated / (st.sequenceParallel ? t : 1.0);
    if (moeLayer) {
        // Each routed copy keeps its dispatched input (2h B: the up-projection's weight-gradient
        // input) and the expert's up-projection output and activation (2 × 2f_e/ETP B gated +
        // 2f_e/ETP, Megatron-Core grouped GEMM); the router keeps fp32 logits (4E B per token).
        // Nothing of the expert's output: the router's probabilities are applied inside the
        // activation (Megatron-Core's experts take permuted_probs into weighted_bias_swiglu /
        // _quick_geglu), so the combine is a plain sum that saves no tensor for its backward.
        // Selective recompute also recomputes the expert activation (module moe_act): its
        // output (2f_e/ETP B) is not kept.
        // A clamped activation (GPT-OSS) on Megatron-Core's unfused path also keeps the clamped
        // and concatenated copy of the up-projection output that its fused kernel saves (4f_e
        // B), besides the up-projection output the clamps save; recomputing the activation
        // keeps neither.
        const double fe = double(m.moe.expertFfn) / st.etp;
        const bool clampCopy = m.moe.gluClamp > 0 && m.gatedMlp && !st.moeFusedMlp && !selective;
        const double keptFfn =
            (m.gatedMlp ? 6.0 : 4.0) - (selective ? 2.0 : 0.0) + (clampCopy ? 4.0 : 0.0);
        const double perCopy = 2.0 * h + keptFfn * fe;
        bytes += moeRoutedCopiesPerGpu(m, st, sb) * perCopy + 4.0 * sb * m.moe.experts / t;
    }
    return bytes;
}

double inFlightMicroBatches(const Strategy& st, int microBatches, int stage) {
    return scheduleModel(st.schedule).inFlight(st, microBatches, stage);
}

MemoryBreakdown stageMemory(const Scenario& s, int stage, int layersOnStage) {
    const int begin = std::min(stage * layersOnStage, s.model.layers);
    return stageMemory(
        s, stageOf(s, stage, begin, layersOnStage, stage == 0, stage == s.strategy.pp - 1));
}

namespace {

/// Mixed-precision training state (Rajbhandari et al. SC20 §3): 16-bit weights, gradients in
/// the reduction precision, and fp32 master weights + moments (Adam 12 B, SGD-momentum 8 B).
/// The dense part shards over the ZeRO ranks (DP × CP); routed experts over the expert-data-
/// parallel ranks (EDP), as Megatron-Core's distributed optimizer does for expert params.
void trainingState(const Scenario& s, const PipelineStage& stage, MemoryBreakdown& mem) {
    const Model& m = s.model;
    const Strategy& st = s.strategy;
    const Workload& w = s.workload;
    const double t = st.tp;
    const int layersOnStage = stage.layers;
    const StageParams params = stageParamSplit(m, st, stage);
    const double weightB = 2.0;
    const double gradB = bytesPerElement(w.gradReducePrecision);
    const double optB = w.optimizer == Optimizer::Adam ? 12.0 : 8.0;
    const double shard = double(st.zeroShardRanks());
    const double eshard = double(expertShardRanks(st));
    // Fine-tuning: frozen weights are held, but only trained ones have gradients and state.
    const StageParams trained =
        w.frozen.any() ? stageTrainableParamSplit(m, st, w.frozen, stage) : params;
    auto sharded = [&](const StageParams& p, double bytesPerParam, int fromStage) {
        return p.dense * bytesPerParam / (st.zeroStage >= fromStage ? shard : 1.0) +
               p.expert * bytesPerParam / (st.zeroStage >= fromStage ? eshard : 1.0);
    };

    mem.weightsBytes = sharded(params, weightB, 3);
    if (w.frozen.lora() && w.frozen.loraBaseBytes < weightB) {
        // A quantized base (QLoRA): the layers' weights at their stored width; the embedding and
        // head stay 16-bit.
        const StageParams layers =
            layersParams(m, st, layersOnStage - stage.moeLayers, stage.moeLayers);
        mem.weightsBytes -= sharded(layers, weightB - w.frozen.loraBaseBytes, 3);
    }
    if (w.frozen.lora()) // the adapters' own weights, split over TP like their base layers
        mem.weightsBytes +=
            loraParamsOf(m, w.frozen, layersOnStage - stage.moeLayers, stage.moeLayers) / t *
            weightB;
    if (st.zeroStage >= 3 && shard > 1) { // the gathered layer in use and the one prefetched
        const bool moe = stage.moeLayers > 0;
        const StageParams layer = layerParamsPerGpu(m, st, moe);
        mem.weightsBytes += std::min(2, layersOnStage) * layer.total() * weightB;
    }
    mem.gradsBytes = sharded(trained, gradB, 2);
    mem.optimizerBytes = sharded(trained, optB, 1);

}

/// Activations the stage keeps at its peak: its layers' for the micro-batches in flight (less
/// what recompute and offloading drop), one rebuilt layer under full recompute, the MoE
/// all-to-all buffers and the last stage's logits.
double stageActivations(const Scenario& s, const PipelineStage& stage) {
    const Model& m = s.model;
    const Strategy& st = s.strategy;
    const Workload& w = s.workload;
    const double t = st.tp;
    const int layersOnStage = stage.layers;
    const int mbs = microBatchesPerStep(s);
    const double inFlight = inFlightMicroBatches(st, mbs, stage.index);
    // Layers that run no backward (frozen, nothing below them trains) keep no activations.
    const bool frozenKeep = w.frozen.frozenLayersNeedDgrad();
    const int moeKept = stage.moeLayers - (frozenKeep ? 0 : stage.frozenMoeLayers);
    const int denseKept = layersOnStage - stage.moeLayers -
                          (frozenKeep ? 0 : stage.frozenLayers - stage.frozenMoeLayers);
    double act = 0;
    if (st.recompute == Recompute::Full && st.recomputeLayers > 0) {
        // The first recompute_layers of each chunk keep their input, the others everything
        // (nothing is frozen: validation refuses recompute_layers with frozen layers).
        const int recMoe = stage.recomputedMoeLayers;
        const int recDense = stage.recomputedLayers - recMoe;
        act = ((denseKept - recDense) * layerActivationBytes(m, st, w, false, Recompute::None) +
               recDense * layerActivationBytes(m, st, w, false, Recompute::Full) +
               (moeKept - recMoe) * layerActivationBytes(m, st, w, true, Recompute::None) +
               recMoe * layerActivationBytes(m, st, w, true, Recompute::Full)) *
              inFlight;
    } else {
        act = (denseKept * layerActivationBytes(m, st, w, false) +
               moeKept * layerActivationBytes(m, st, w, true)) *
              inFlight;
    }
    if (st.offloadLayers > 0) {
        // Activation offloading (PP 1, nothing frozen, no recompute: the scenario check): the
        // first n layers' activations leave for host memory during the forward pass. At the
        // turn to backward the GPU holds the other layers' and one offloaded layer's, the last
        // one sent, whose copy the last layer's forward waits for and whose return the
        // backward starts with (Transformer Engine's double buffer: "at most two activation
        // groups" on the GPU when all but the last layer are offloaded).
        const int n = st.offloadLayers;
        const int moeOff = m.moeLayersBefore(n), denseOff = n - moeOff;
        const bool lastMoe = m.isMoeLayer(n - 1);
        act -= ((denseOff - (lastMoe ? 0 : 1)) * layerActivationBytes(m, st, w, false) +
                (moeOff - (lastMoe ? 1 : 0)) * layerActivationBytes(m, st, w, true)) *
               inFlight;
    }
    if (st.recompute == Recompute::Full && layersOnStage > 0 &&
        stage.recomputedLayers >= layersOnStage) {
        // Every layer recomputed: backward rebuilds one layer at a time, so that layer's full
        // activations exist beside the kept inputs (its own input is one of them). With some
        // layers kept, their backward runs first and frees more than a rebuilt layer holds.
        const bool moe = stage.moeLayers > 0;
        act += layerActivationBytes(m, st, w, moe, Recompute::None) -
               layerActivationBytes(m, st, w, moe, Recompute::Full);
    }
    if (stage.moeLayers > 0) { // all-to-all send and receive buffers of one layer
        const double tokens = st.microBatch * double(w.seqLen) / st.cp;
        act += 2.0 * moeRoutedCopiesPerGpu(m, st, tokens) * double(m.hidden) * 2.0;
    }
    if (stage.last) // fp32 logits of the micro-batch being processed, for the loss
        act += m.vit ? 4.0 * st.microBatch * double(m.vitShape.classes) // one per image
                     : 4.0 * st.microBatch * double(w.seqLen) / st.cp * double(m.vocab) / t;
    return act;
}

} // namespace

MemoryBreakdown stageMemory(const Scenario& s, const PipelineStage& stage) {
    MemoryBreakdown mem;
    trainingState(s, stage, mem);
    mem.activationsBytes = stageActivations(s, stage);
    mem.reserveBytes = s.system.reserveBytes;
    mem.capacityBytes = s.system.gpu.hbmBytes;
    return mem;
}

MemoryBreakdown detail::transformerMemory(const Scenario& s) {
    // The first stage holds the most micro-batches in flight, the last the logits; with an
    // uneven split a middle stage (p-1 in flight, a middle stage's layers) can top both.
    MemoryBreakdown worst;
    bool any = false;
    for (const PipelineStage& stage : distinctStages(s)) {
        const MemoryBreakdown m = stageMemory(s, stage);
        if (!any || m.totalBytes() > worst.totalBytes()) worst = m;
        any = true;
    }
    return worst;
}

} // namespace madmax
