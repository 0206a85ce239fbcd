// A dense layer's ops costed (docs/developer/model.md §§1-2): attention projections (GQA, MLA), the attention
// core (FlashAttention or unfused), the MLP, LoRA adapters, QLoRA dequantisation, context
// parallelism's merges, the TP, CP and FSDP collectives; and a language model's stage edges.
#include "transformer/layer.hpp"

#include "madmax/flops.hpp"
#include "madmax/layer_gemms.hpp"
#include "madmax/memory.hpp"

#include <algorithm>

namespace madmax::detail {

namespace {

/// DeepSpeed's stage-3 prefetch bucket up to v0.5.10 (stage3_prefetch_bucket_size, default
/// 5·10⁷ elements; deepspeed/runtime/zero/stage3.py at v0.5.0).
constexpr double kDeepSpeedPrefetchBucket = 5e7;

/// DeepSpeed's legacy ZeRO-3 gathers: one all-gather per linear's weight (16-bit, this TP
/// rank's shard; norms and biases, under the 10⁵-element param_persistence_threshold, stay
/// whole). A prefetch takes the next weights in trace order until it holds a bucket, and
/// _allgather_param synchronises the device before each weight's all-gather, so of a bucket
/// of k weights k − 1 run one after another with the GPU idle and only the last overlaps the
/// module's compute: the serial share 1 − 1/k, k = max(1, bucket / mean weight).
void zeroLegacyGathers(const Scenario& s, const Shape& sh, const Groups& g, LayerCosts& c) {
    const Model& m = s.model;
    const AttentionGemms ag = attentionGemms(m, sh.t);
    double projections = 0;
    for (int i = 0; i < ag.count; ++i) projections += ag.projections[i].n * ag.projections[i].k;
    const MlpGemms mlp = mlpGemms(m, sh.f, sh.t);
    const double out = ag.output.n * ag.output.k, up = mlp.up.n * mlp.up.k,
                 down = mlp.down.n * mlp.down.k;
    auto gather = [&](double elements) {
        return collectiveTime(s.system, g.dpShard, Collective::AllGather, elements * 2.0);
    };
    c.zeroQkv = gather(projections);
    c.zeroOut = gather(out);
    c.zeroUp = gather(up);
    c.zeroDown = gather(down);
    const double mean = (projections + out + up + down) / 4.0;
    c.zeroFetch.serialShare = 1.0 - 1.0 / std::max(1.0, kDeepSpeedPrefetchBucket / mean);
    // After each synchronise the GPU waits while the host runs the hook and launches again:
    // one host op (the calibration's eager-mode launch time; none under CUDA graphs).
    c.zeroFetch.hookS = s.strategy.cudaGraphs ? 0.0 : s.system.gpu.calibration.hostOpS;
}


/// The attention projections' GEMMs (madmax/layer_gemms.hpp) over the micro-batch's rows.
double attentionProjections(const AttentionGemms& g, const Shape& sh, const OpCoster& oc) {
    double t = 0;
    for (int i = 0; i < g.count; ++i) t += oc.gemm(sh.T, g.projections[i].n, g.projections[i].k);
    return t;
}

/// The attention core: FlashAttention (Dao 2022) or the unfused kernels (Megatron 2021-22).
void attentionCore(const Scenario& s, const Shape& sh, const OpCoster& oc, LayerCosts& c) {
    const Model& m = s.model;
    const double heads = m.heads / sh.t;
    if (s.workload.attention == AttentionKernel::Flash) {
        // Causal kernels skip the masked half; the backward pass recomputes the scores, 2.5×
        // the forward FLOPs (FlashAttention-2 §3.1). One exponential per score, forward and
        // again backward (P is recomputed).
        const double scores = sh.T * sh.keys * heads;
        const double fwd = scores * attentionFlopsPerScore(m);
        c.attention = oc.flashAttention(fwd, scores);
        c.attentionBwd = oc.flashAttention(2.5 * fwd, scores, true);
        return;
    }
    // Batched QKᵀ and AV GEMMs over the full square, and the scaled-masked softmax + dropout
    // reading and writing the score matrix (≈11 B/element).
    const Strategy& st = s.strategy;
    const double scores = heads * st.microBatch * (sh.T / st.microBatch) * sh.context;
    const double gemms = 2.0 * oc.gemm(sh.T, sh.context, sh.qDim);
    c.attention = gemms + oc.elementwise(11.0 * scores);
    c.attentionBwd = 2.0 * gemms + oc.elementwise(2.0 * 11.0 * scores);
}

/// Fine-tuning's extra ops: QLoRA's dequantisation of the stored base weights, and the LoRA
/// adapters (column-parallel layers — Q, K, V, MLP up — split their outputs over TP,
/// row-parallel ones — output projection, MLP down — their inputs; the rank-r side is whole).
void fineTuningCosts(const Model& m, const Frozen& f, const Shape& sh, const OpCoster& oc,
                     LayerCosts& c) {
    c.loraAttn = c.loraMlp = 0;
    c.dequantAttn = c.dequantMlp = 0;
    if (!f.lora()) return;
    if (f.loraBaseBytes < 2.0) {
        const double perWeight = f.loraBaseBytes + 2.0;
        c.dequantAttn = oc.elementwise((m.attentionParamsPerLayer() / sh.t) * perWeight);
        if (m.denseLayerCount() > 0)
            c.dequantMlp = oc.elementwise((m.mlpParamsPerLayer() / sh.t) * perWeight);
    }
    const double r = f.loraRank;
    auto adapter = [&](double in, double out) {
        return oc.gemm(sh.T, r, in) + oc.gemm(sh.T, out, r);
    };
    const double kvOut = double(m.kvHeads) * m.vHeadDim() / sh.t;
    if (f.loraTargets != LoraTargets::Mlp)
        c.loraAttn = adapter(sh.h, sh.qDim) + adapter(sh.h, sh.kvDim) + adapter(sh.h, kvOut) +
                     adapter(double(m.heads) * m.vHeadDim() / sh.t, sh.h);
    if (f.loraTargets != LoraTargets::Attention && m.denseLayerCount() > 0)
        c.loraMlp =
            (m.gatedMlp ? 2.0 : 1.0) * adapter(sh.h, sh.f / sh.t) + adapter(sh.f / sh.t, sh.h);
}

/// The layer's collectives: TP (all-reduce, or reduce-scatter under SP), CP's K/V all-gather
/// and ring-attention merges, and ZeRO-3's parameter gather and gradient reduce-scatter.
void layerCollectives(const Scenario& s, const Shape& sh, const OpCoster& oc, const Groups& g,
                      LayerCosts& c) {
    const Model& m = s.model;
    const Strategy& st = s.strategy;
    const double act = 2.0; // 16-bit activations
    const double tpBytes = sh.T * sh.h * act;
    c.tpComm = collectiveTime(
        s.system, g.tp, st.sequenceParallel ? Collective::ReduceScatter : Collective::AllReduce,
        tpBytes);
    c.cpComm =
        collectiveTime(s.system, g.cp, Collective::AllGather, 2.0 * sh.T * sh.kvDim * act * st.cp);
    c.cpMerge = c.cpMergeBwd = 0;
    if (st.cp > 1) {
        // Ring attention (Transformer Engine's CP, Liu et al. 2023) computes attention in cp
        // steps, one K/V block each, and merges the partial results: every step's output is
        // rescaled by its log-sum-exp into an fp32 accumulator (read the bf16 partial, read and
        // write the fp32 sum: 10 B per element); the backward accumulates dQ, dK and dV the
        // same way. With causal load balancing the diagonal step covers all local queries and
        // each other step, on average, three quarters of them.
        const double rows = sh.T * (1.0 + 0.75 * (st.cp - 1));
        c.cpMerge = oc.elementwise(rows * sh.qDim * 10.0);
        c.cpMergeBwd = oc.elementwise(rows * (sh.qDim + 2.0 * sh.kvDim) * 10.0);
    }
    const double layerParams = m.paramsPerLayer() / sh.t;
    if (st.fsdpStyle == FsdpStyle::DeepSpeedLegacy) {
        zeroLegacyGathers(s, sh, g, c);
        // The gradients fill DeepSpeed's reduce bucket (5·10⁸ elements, more than a layer)
        // and are reduce-scattered together: one collective per layer's worth.
        c.fsdpReduce = collectiveTime(s.system, g.dpShard, Collective::ReduceScatter,
                                      layerParams * bytesPerElement(s.workload.gradReducePrecision));
        c.fsdpGather = c.zeroQkv + c.zeroOut + c.zeroUp + c.zeroDown;
        return;
    }
    // Per weight tensor (DeepSpeed ZeRO-3 unbucketed): QKV as three, the output projection,
    // the MLP's two or three matrices and two norms, each its own collective and latency.
    const double tensors = st.fsdpPerTensor ? (m.gatedMlp ? 9.0 : 8.0) : 1.0;
    c.fsdpGather = tensors * collectiveTime(s.system, g.dpShard, Collective::AllGather,
                                            layerParams * 2.0 / tensors);
    c.fsdpReduce = tensors * collectiveTime(
                                 s.system, g.dpShard, Collective::ReduceScatter,
                                 layerParams * bytesPerElement(s.workload.gradReducePrecision) /
                                     tensors);
}

} // namespace

LayerCosts layerCosts(const Scenario& s, const Shape& sh, const OpCoster& oc, const Groups& g) {
    const Model& m = s.model;
    const Workload& w = s.workload;
    LayerCosts c{};
    const double act = 2.0; // 16-bit activations
    c.norm = oc.elementwise(2.0 * sh.hSp * act);
    const AttentionGemms ag = attentionGemms(m, sh.t);
    c.qkv = attentionProjections(ag, sh, oc);
    c.projGemms = !m.mla ? 1 : m.mlaShape.qLoraRank > 0 ? 4 : 3;
    // Below 16 bits every GEMM input is quantised first, forward and backward (Transformer
    // Engine's Linear and GroupedLinear: the input, then in the backward the output gradient
    // once for both gradient GEMMs). One cast kernel, three under current scaling: the amax,
    // the scale from it, then the cast (Float8CurrentScalingQuantizer::quantize_impl:
    // nvte_compute_amax_with_config, nvte_compute_scale_from_amax, nvte_quantize_v2); the
    // amax's extra read is in castBytesPerElement.
    c.casts = bytesPerElement(w.precision) >= 2.0                     ? 0
              : w.lowPrecisionScaling == LowPrecisionScaling::Current ? 3
                                                                      : 1;
    if (m.mla)
        c.mlaUp = oc.gemm(sh.T, ag.queryUp.n, ag.queryUp.k) +
                  oc.gemm(sh.T, ag.keyValueUp.n, ag.keyValueUp.k);
    attentionCore(s, sh, oc, c);
    c.outProj = oc.gemm(sh.T, ag.output.n, ag.output.k);
    c.residual = oc.elementwise(7.0 * sh.hSp * act * 0.5 + 2.0 * sh.hSp * act);
    if (m.denseLayerCount() > 0) {
        const MlpGemms mlp = mlpGemms(m, sh.f, sh.t);
        c.mlpUp = oc.gemm(sh.T, mlp.up.n, mlp.up.k);
        c.activation = oc.elementwise((mlp.up.n + mlp.down.k) * sh.T * act);
        c.mlpDown = oc.gemm(sh.T, mlp.down.n, mlp.down.k);
    }
    layerCollectives(s, sh, oc, g, c);
    fineTuningCosts(m, w.frozen, sh, oc, c);
    return c;
}

Shape layerShape(const Scenario& s) {
    const Model& m = s.model;
    const Strategy& st = s.strategy;
    const Workload& w = s.workload;
    Shape sh{};
    sh.t = st.tp;
    sh.T = double(st.microBatch) * w.seqLen / st.cp;
    sh.h = double(m.hidden);
    sh.f = double(m.ffnHidden);
    sh.qDim = double(m.heads) * m.headDim / st.tp;
    sh.kvDim = double(m.kvHeads) * m.headDim / st.tp;
    sh.context = w.seqLen;
    sh.hSp = sh.T * sh.h / (st.sequenceParallel ? st.tp : 1);
    // Keys per query: causal full attention sees s/2 on average; a causal window of W < s
    // sees W(1 − W/2s); windowed layers are a share of all (GPT-OSS alternates).
    {
        const double seq = w.seqLen, win = double(m.slidingWindow);
        const double full = m.causal ? 0.5 * seq : seq;
        const double windowed =
            win > 0 && win < seq ? (m.causal ? win * (1.0 - win / (2.0 * seq)) : win) : full;
        const double frac = windowedLayerFraction(m);
        sh.keys = (1.0 - frac) * full + frac * windowed;
    }
    if (m.isMoe()) {
        sh.moeSend = sh.T * st.etp / st.tp;
        sh.moeCopies = moeRoutedCopiesPerGpu(m, st, sh.T);
    }
    return sh;
}

HeadBackward headBackward(const Scenario& s) {
    const Frozen& f = s.workload.frozen;
    const bool belowTrains = f.belowHeadTrains(s.model.layers);
    return {belowTrains, (f.head ? 0.0 : 1.0) + (belowTrains ? 1.0 : 0.0)};
}

EdgeCosts edgeCollectives(const Scenario& s) {
    EdgeCosts e;
    const bool sp = s.strategy.sequenceParallel;
    e.embedKind = sp ? Collective::ReduceScatter : Collective::AllReduce;
    e.headKind = sp ? Collective::AllGather : Collective::AllReduce;
    return e;
}

EdgeCosts edgeCosts(const Scenario& s, const Shape& sh, const OpCoster& oc, const Groups& g) {
    const Frozen& f = s.workload.frozen;
    EdgeCosts e = edgeCollectives(s);
    const double act = 2.0;
    const auto [belowTrains, headPasses] = headBackward(s);
    // Vocab-parallel embedding: gather rows, then combine over TP (Shoeybi et al. 2019).
    e.embedFwd = oc.elementwise(2.0 * sh.T * sh.h * act);
    e.embedBwd = f.embedding ? 0.0 : oc.elementwise(3.0 * sh.T * sh.h * act);
    e.embedComm = collectiveTime(s.system, g.tp, e.embedKind, sh.T * sh.h * act);
    // Vocab-parallel LM head: final norm, GEMM (16-bit under FP8: OpCoster::gemm16), fused
    // cross-entropy over fp32 logits.
    const double vocab = double(s.model.vocab) / sh.t;
    const double headGemm = oc.gemmAtLeast16(sh.T, vocab, sh.h);
    e.headFwd = oc.elementwise(2.0 * sh.hSp * act) + headGemm +
                oc.elementwise(sh.T * vocab * (act + 4.0));
    e.headBwd = headPasses * headGemm +
                oc.elementwise(sh.T * vocab * (4.0 + act)) +
                (belowTrains ? oc.elementwise(4.0 * sh.hSp * act) : 0.0);
    e.headComm = belowTrains ? collectiveTime(s.system, g.tp, e.headKind, sh.T * sh.h * act) : 0.0;
    return e;
}

} // namespace madmax::detail
