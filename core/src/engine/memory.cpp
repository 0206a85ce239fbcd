#include "madmax/memory.hpp"

#include "madmax/engine.hpp"
#include "serving/inference.hpp"

#include <algorithm>

namespace madmax {

double layerActivationBytes(const Model& m, const Strategy& st, const Workload& w) {
    // Korthikanti et al. 2022, §4 and Table 2, generalised: element counts per layer for one
    // micro-batch, with 16-bit activations (2 bytes) and 1-byte dropout masks.
    const double s = double(w.seqLen) / st.cp; // CP splits the sequence
    const double b = st.microBatch, h = double(m.hidden), d = double(m.headDim);
    const double f = double(m.ffnHidden), t = st.tp;
    const double sb = s * b;

    if (st.recompute == Recompute::Full) {
        // Only each layer's input is kept (2sbh), split by TP when SP shards it.
        return 2.0 * sb * h / (st.sequenceParallel ? t : 1.0);
    }
    // Tensors TP always splits: Q (2sbad), K and V (4sbgd), the output projection's input
    // (2sbad) and the MLP intermediates (4sbf plain: GeLU input + fc2 input; 6sbf gated).
    double split = 2.0 * sb * m.heads * d + 4.0 * sb * m.kvHeads * d + 2.0 * sb * m.heads * d +
                   (m.gatedMlp ? 6.0 : 4.0) * sb * f;
    // The attention score matrices (softmax output 2, dropout mask 1, dropout output 2 bytes per
    // element: 5as² per sample) exist only with an unfused kernel and no selective recompute.
    if (w.attention == AttentionKernel::Unfused && st.recompute != Recompute::Selective)
        split += 5.0 * m.heads * s * double(w.seqLen) * b;
    // Tensors replicated across TP unless sequence parallelism splits them: two norm inputs
    // (4sbh), QKV and MLP inputs (4sbh), two dropout masks (2sbh).
    const double replicated = 10.0 * sb * h;
    return split / t + replicated / (st.sequenceParallel ? t : 1.0);
}

double inFlightMicroBatches(const Strategy& st, int microBatches, int stage) {
    const double held = std::min(st.pp - stage, microBatches);
    if (st.schedule == PipelineSchedule::Interleaved && st.pp > 1)
        return held * (1.0 + double(st.pp - 1) / (double(st.pp) * st.vp));
    return held;
}

MemoryBreakdown stageMemory(const Scenario& s, int stage, int layersOnStage) {
    return stageMemory(s, PipelineStage{stage, layersOnStage, stage == 0,
                                        stage == s.strategy.pp - 1});
}

MemoryBreakdown stageMemory(const Scenario& s, const PipelineStage& stage) {
    const Model& m = s.model;
    const Strategy& st = s.strategy;
    const Workload& w = s.workload;
    const double t = st.tp;
    const int layersOnStage = stage.layers;
    const double params = stageParamsPerGpu(m, st, stage);

    // Mixed-precision training state (Rajbhandari et al. SC20 §3): 16-bit weights, gradients in
    // the reduction precision, and fp32 master weights + moments (Adam 12 B, SGD-momentum 8 B).
    const double weightB = 2.0;
    const double gradB = bytesPerElement(w.gradReducePrecision);
    const double optB = w.optimizer == Optimizer::Adam ? 12.0 : 8.0;
    const double shard = double(st.zeroShardRanks());

    MemoryBreakdown mem;
    mem.weightsBytes = params * weightB / (st.zeroStage >= 3 ? shard : 1.0);
    if (st.zeroStage >= 3 && shard > 1) // the gathered layer in use and the one being prefetched
        mem.weightsBytes += std::min(2, layersOnStage) * m.paramsPerLayer() / t * weightB;
    mem.gradsBytes = params * gradB / (st.zeroStage >= 2 ? shard : 1.0);
    mem.optimizerBytes = params * optB / (st.zeroStage >= 1 ? shard : 1.0);

    const int mbs = microBatchesPerStep(s);
    double act = layerActivationBytes(m, st, w) * layersOnStage *
                 inFlightMicroBatches(st, mbs, stage.index);
    if (st.recompute == Recompute::Full && layersOnStage > 0) {
        // Backward recomputes one layer at a time: its full activations exist transiently.
        Strategy none = st;
        none.recompute = Recompute::None;
        act += layerActivationBytes(m, none, w);
    }
    if (stage.last) // fp32 logits of the micro-batch being processed, for the loss
        act += 4.0 * st.microBatch * double(w.seqLen) / st.cp * double(m.vocab) / t;
    mem.activationsBytes = act;
    mem.reserveBytes = s.system.reserveBytes;
    mem.capacityBytes = s.system.gpu.hbmBytes;
    return mem;
}

MemoryBreakdown peakMemory(const Scenario& s) {
    if (s.workload.kind == WorkloadKind::Inference) return detail::evaluateInference(s).memory;
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
