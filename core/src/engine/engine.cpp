// The cost engine (MODEL.md §§1–5): per-op costs, a two-stream simulation of one layer's forward
// and backward, the pipeline schedule of the slowest stage, data-parallel gradient reduction,
// the optimizer step and memory.
#include "madmax/engine.hpp"

#include "serving/inference.hpp"
#include "madmax/collectives.hpp"
#include "madmax/flops.hpp"
#include "madmax/memory.hpp"
#include "madmax/pipeline.hpp"
#include "engine/op_cost.hpp"
#include "engine/stream_sim.hpp"
#include "dlrm/dlrm_engine.hpp"

#include <algorithm>
#include <utility>
#include <optional>
#include <cmath>

namespace madmax {

using detail::CommTable;
using detail::OpCoster;
using detail::Phase;
using detail::SimOp;
using detail::StreamSim;

namespace {

struct Groups {
    GroupLayout tp, cp, dpShard, dpReplicas, gradReduce;
    // MoE (parallel folding): the expert grid is ETP, EP, EDP innermost first on a stage's ranks.
    GroupLayout ep, edpReduce, edpShard, edpReplicas;
    long long ppStride = 1;
};

long long strideOf(const Strategy& st, ParallelDim dim) {
    long long stride = 1;
    for (ParallelDim d : st.placement) {
        if (d == dim) break;
        stride *= st.degree(d);
    }
    return stride;
}

Groups makeGroups(const Scenario& s) {
    const Strategy& st = s.strategy;
    Groups g;
    g.tp = layoutGroup(s.system, st.tp, strideOf(st, ParallelDim::TP));
    g.cp = layoutGroup(s.system, st.cp, strideOf(st, ParallelDim::CP));
    // Gradients are reduced over DP × CP (each CP rank saw different tokens). The ZeRO shard
    // group is its innermost `shardGroup × cp` ranks; hybrid sharding replicates across the rest.
    const long long dpStride = strideOf(st, ParallelDim::DP);
    const long long cpStride = strideOf(st, ParallelDim::CP);
    const long long innerStride = st.cp > 1 ? std::min(dpStride, cpStride) : dpStride;
    const int shard = st.effectiveShardGroup();
    g.gradReduce = layoutGroup(s.system, st.gradReduceRanks(), innerStride);
    g.dpShard = layoutGroup(s.system, st.zeroShardRanks(), innerStride);
    g.dpReplicas = layoutGroup(s.system, st.dp / shard, dpStride * shard);
    g.ppStride = strideOf(st, ParallelDim::PP);
    if (s.model.isMoe()) {
        const long long edp = std::max(1LL, st.expertDataParallel());
        const int eshard = expertShardRanks(st);
        const long long epStride = st.etp, edpStride = 1LL * st.etp * st.ep;
        g.ep = layoutGroup(s.system, st.ep, epStride);
        g.edpReduce = layoutGroup(s.system, int(edp), edpStride);
        g.edpShard = layoutGroup(s.system, eshard, edpStride);
        g.edpReplicas = layoutGroup(s.system, int(edp / eshard), edpStride * eshard);
    }
    return g;
}

/// Sizes of one micro-batch's work on one GPU.
struct Shape {
    double T; ///< tokens per micro-batch per GPU (b·s/cp)
    double h, f, t;
    double qDim;    ///< a·d / t
    double kvDim;   ///< g·d / t
    double context; ///< keys each query sees (full sequence)
    double hSp;     ///< T·h elements held per GPU between TP regions (÷t with SP)
    double keys;    ///< keys each query attends to, averaged over layers (causal, windows)
    double moeSend;   ///< MoE: tokens this GPU dispatches (T·ETP/TP)
    double moeCopies; ///< MoE: routed copies the critical rank's experts process
};

/// Durations of the ops of one layer, forward direction.
struct LayerCosts {
    double norm, qkv, attention, attentionBwd, outProj, residual, mlpUp, activation, mlpDown;
    double mlaUp; ///< MLA: the up-projections from the latents (part of qkv)
    double tpComm; ///< one TP collective (all-reduce, or reduce-scatter / all-gather with SP)
    double cpComm; ///< all-gather of K and V over the CP group (reduce-scatter of dK, dV back)
    /// CP > 1: merging the attention's per-step partial results (forward: the outputs rescaled
    /// by their log-sum-exp; backward: dQ, dK, dV accumulated in fp32).
    double cpMerge, cpMergeBwd;
    /// LoRA: the adapters of the attention projections and of the MLP, forward (two skinny
    /// GEMMs each, x·A then ·B); their backward costs twice (input and weight gradients).
    double loraAttn, loraMlp;
    /// QLoRA: dequantizing one layer's base weights to bf16 before they are used (read the
    /// stored width, write 16-bit): attention's and the MLP's, once per use.
    double dequantAttn, dequantMlp;
    double fsdpGather, fsdpReduce; ///< ZeRO-3: one layer's weights gathered / gradients scattered
    // MoE layer (forward direction; the backward GEMMs cost twice).
    double router, permute, expertUp, expertAct, expertDown, unpermute, shared;
    /// Megatron-Core's flat all-to-all dispatcher with more than one local expert: the received
    /// tokens regrouped by local expert after the dispatch, and back before the combine.
    double sortChunks;
    double dispatch, combine; ///< one all-to-all each (backward: both in 16-bit, as combine)
    int localExperts; ///< E / EP
    /// Launches of `gemms` GEMMs below 16 bits (Transformer Engine): forward, each GEMM after
    /// the quantisation of its input; backward, the quantisation of its output gradient, which
    /// its `passes` data- and weight-gradient GEMMs share, then those GEMMs. `casts`: the
    /// launches of one quantisation (0 for 16-bit GEMMs).
    int casts;
    int gemmKernels(int gemms) const { return gemms * (1 + casts); }
    int gemmBwdKernels(int gemms, int passes) const { return gemms * (casts + passes); }
    /// The attention projections' GEMMs (QKV as one; MLA's down- and up-projections).
    int projGemms;
    /// Unfused expert extras (Megatron-Core's path for clamped, biased experts): the clamp of
    /// the activation's inputs, forward and backward, and the down projection's bias scaled
    /// by the routing weight, forward and backward; launches of the bias ops.
    double expertClamp, expertClampBwd, expertBias, expertBiasBwd;
    int expertBiasKernels, expertBiasBwdKernels;
    double fsdpGatherMoe, fsdpReduceMoe;
    MoeA2aTraffic dispatchTraffic, combineTraffic;
};

/// MLA's up-projections: queries from their latent, per-head K and V from the KV latent.
double mlaUpProjections(const Model& m, const Shape& sh, const OpCoster& oc) {
    const MlaShape& a = m.mlaShape;
    const double heads = m.heads / sh.t;
    return oc.gemm(sh.T, heads * double(a.qkNopeDim + a.qkRopeDim),
                   a.qLoraRank > 0 ? double(a.qLoraRank) : sh.h) +
           oc.gemm(sh.T, heads * double(a.qkNopeDim + a.vHeadDim), double(a.kvLoraRank));
}

double attentionProjections(const Model& m, const Shape& sh, const OpCoster& oc) {
    if (!m.mla) return oc.gemm(sh.T, sh.qDim + 2.0 * sh.kvDim, sh.h);
    // MLA (DeepSeek-V2 §2.1): down-projections replicated over TP, up-projections split by
    // heads: W_DQ, W_UQ, W_DKV+W_KR, W_UK+W_UV.
    const MlaShape& a = m.mlaShape;
    const double heads = m.heads / sh.t;
    double t = oc.gemm(sh.T, heads * double(a.qkNopeDim + a.qkRopeDim),
                       a.qLoraRank > 0 ? double(a.qLoraRank) : sh.h);
    if (a.qLoraRank > 0) t += oc.gemm(sh.T, double(a.qLoraRank), sh.h);
    t += oc.gemm(sh.T, double(a.kvLoraRank + a.qkRopeDim), sh.h);
    t += oc.gemm(sh.T, heads * double(a.qkNopeDim + a.vHeadDim), double(a.kvLoraRank));
    return t;
}

void moeCosts(const Scenario& s, const Shape& sh, const OpCoster& oc, const Groups& g,
              LayerCosts& c) {
    const Model& m = s.model;
    const Strategy& st = s.strategy;
    const Workload& w = s.workload;
    const double act = 2.0;
    const MoeShape& moe = m.moe;
    const double fe = double(moe.expertFfn) / st.etp;
    const double up = (m.gatedMlp ? 2.0 : 1.0) * fe;
    const int local = moe.experts / st.ep;
    // A single expert needs no router and no permutation: the block is a dense MLP.
    const bool routed = moe.experts > 1;
    c.router = routed ? oc.gemm(sh.T, double(moe.experts), sh.h) +
                            oc.elementwise(sh.T * moe.experts * 8.0)
                      : 0.0;
    // Permute: gather each copy's row into expert order; unpermute: scatter back, weighted sum.
    c.permute = routed ? oc.elementwise(2.0 * sh.moeSend * moe.topK * sh.h * act) : 0.0;
    c.expertUp = oc.groupedGemm(sh.moeCopies, up, sh.h, local);
    c.expertAct = oc.elementwise((up + fe) * sh.moeCopies * act);
    c.expertDown = oc.groupedGemm(sh.moeCopies, sh.h, fe, local);
    if (st.moeFusedMlp) {
        // The grouped GEMM's epilogue applies the activation with its clamp, bias and routing
        // weight, and the down projection's dgrad epilogue its gradient (NVIDIA, "Boosting MoE
        // Training Throughput with Advanced Fusion Kernels", 2026): no pass of their own.
        c.expertAct = 0;
    } else {
        if (moe.gluClamp > 0 && m.gatedMlp) {
            // Megatron-Core's weighted quick-GeGLU (fusions/fused_bias_geglu.py) clamps the gate
            // and linear halves into new tensors and concatenates them before its fused kernel:
            // read and write fe each, then read and write 2fe. Their backward: each half's
            // gradient through its clamp mask, reading gradient and input, writing one.
            c.expertClamp = oc.elementwise(8.0 * fe * sh.moeCopies * act);
            c.expertClampBwd = oc.elementwise(6.0 * fe * sh.moeCopies * act);
        }
        if (moe.expertBias) {
            // The down projection's bias times the routing weight, added outside the GEMM per
            // local expert and concatenated (TEGroupedMLP._apply_bias: t + b·p): the product
            // written (h), the sum read (2h) and written (h), the concatenation read and
            // written (2h). Backward: the bias and weight gradients, each a product (read and
            // write h) and a reduction (read h).
            c.expertBias = oc.elementwise(6.0 * sh.h * sh.moeCopies * act);
            c.expertBiasBwd = oc.elementwise(6.0 * sh.h * sh.moeCopies * act);
            c.expertBiasKernels = 2 * local + 1;
            c.expertBiasBwdKernels = 4 * local;
        }
    }
    c.unpermute = c.permute;
    // MoEAlltoAllTokenDispatcher (moe/token_dispatcher.py): the dispatch's output arrives
    // grouped by source rank, so with more than one local expert `sort_chunks_by_idxs` regroups
    // it by expert (a read and a write of every received copy), and the combine's input goes
    // back the same way. The per-node (flex / DeepEP) dispatcher permutes once, after the
    // dispatch, which `permute` already counts.
    c.sortChunks = routed && local > 1 && st.dispatcher == MoeDispatcher::AllToAll
                       ? oc.elementwise(2.0 * sh.moeCopies * sh.h * act)
                       : 0.0;
    // Grouped GEMMs run one GEMM per local expert (Transformer Engine GroupedLinear), each
    // quantising its own input (LayerCosts::gemmKernels).
    c.localExperts = local;
    if (moe.sharedExperts > 0) {
        const double fs = double(moe.sharedExperts) * moe.expertFfn / sh.t;
        const double sUp = (m.gatedMlp ? 2.0 : 1.0) * fs;
        c.shared = oc.gemm(sh.T, sUp, sh.h) + oc.elementwise((sUp + fs) * sh.T * act) +
                   oc.gemm(sh.T, sh.h, fs);
    }
    // The critical rank receives its share × the load it carries (imbalance, capped by the
    // capacity factor): its all-to-all bytes scale with it.
    const double load = moe.capacityFactor > 0 ? std::min(moe.loadImbalance, moe.capacityFactor)
                                               : moe.loadImbalance;
    MoeA2aRequest req;
    req.tokens = sh.moeSend * load;
    req.topK = moe.topK;
    req.dedupPerNode = st.dispatcher == MoeDispatcher::DeepEp;
    req.experts = moe.experts;
    req.nodeLimit = st.moeNodeLimit;
    req.overheadS = s.system.gpu.calibration.allToAllOverheadS;
    // FP8 dispatch: one byte per element plus an fp32 scale per 128 (DeepEP).
    req.bytesPerToken = st.moeFp8Dispatch ? sh.h * (1.0 + 4.0 / 128.0) : sh.h * act;
    c.dispatchTraffic = moeAllToAll(s.system, g.ep, req);
    req.bytesPerToken = sh.h * act;
    c.combineTraffic = moeAllToAll(s.system, g.ep, req);
    c.dispatch = c.dispatchTraffic.timeS;
    c.combine = c.combineTraffic.timeS;
    const StageParams lp = layerParamsPerGpu(m, st, true);
    const double gradB = bytesPerElement(w.gradReducePrecision);
    c.fsdpGatherMoe =
        collectiveTime(s.system, g.dpShard, Collective::AllGather, lp.dense * 2.0) +
        collectiveTime(s.system, g.edpShard, Collective::AllGather, lp.expert * 2.0);
    c.fsdpReduceMoe =
        collectiveTime(s.system, g.dpShard, Collective::ReduceScatter, lp.dense * gradB) +
        collectiveTime(s.system, g.edpShard, Collective::ReduceScatter, lp.expert * gradB);
}

LayerCosts layerCosts(const Scenario& s, const Shape& sh, const OpCoster& oc, const Groups& g) {
    const Model& m = s.model;
    const Strategy& st = s.strategy;
    const Workload& w = s.workload;
    LayerCosts c{};
    const double act = 2.0; // 16-bit activations
    c.norm = oc.elementwise(2.0 * sh.hSp * act);
    c.qkv = attentionProjections(m, sh, oc);
    c.projGemms = !m.mla ? 1 : m.mlaShape.qLoraRank > 0 ? 4 : 3;
    // Below 16 bits every GEMM input is quantised first, forward and backward (Transformer
    // Engine's Linear and GroupedLinear: the input, then in the backward the output gradient
    // once for both gradient GEMMs). One cast kernel, three under current scaling: the amax,
    // the scale from it, then the cast (Float8CurrentScalingQuantizer::quantize_impl:
    // nvte_compute_amax_with_config, nvte_compute_scale_from_amax, nvte_quantize_v2); the
    // amax's extra read is in castBytesPerElement.
    c.casts = bytesPerElement(w.precision) >= 2.0                       ? 0
              : w.lowPrecisionScaling == LowPrecisionScaling::Current ? 3
                                                                      : 1;
    if (m.mla) c.mlaUp = mlaUpProjections(m, sh, oc);
    const double heads = m.heads / sh.t;
    if (w.attention == AttentionKernel::Flash) {
        // FlashAttention (Dao 2022): causal kernels skip the masked half; the backward pass
        // recomputes the scores, 2.5× the forward FLOPs (FlashAttention-2 §3.1).
        // One exponential per score, forward and again backward (P is recomputed).
        const double scores = sh.T * sh.keys * heads;
        const double fwd = scores * attentionFlopsPerScore(m);
        c.attention = oc.flashAttention(fwd, scores);
        c.attentionBwd = oc.flashAttention(2.5 * fwd, scores, true);
    } else {
        // Unfused (Megatron 2021-22): batched QKᵀ and AV GEMMs over the full square, and the
        // scaled-masked softmax + dropout reading and writing the score matrix (≈11 B/element).
        const double scores = heads * st.microBatch * (sh.T / st.microBatch) * sh.context;
        const double gemms = 2.0 * oc.gemm(sh.T, sh.context, sh.qDim);
        c.attention = gemms + oc.elementwise(11.0 * scores);
        c.attentionBwd = 2.0 * gemms + oc.elementwise(2.0 * 11.0 * scores);
    }
    c.outProj = oc.gemm(sh.T, sh.h, heads * double(m.vHeadDim()));
    c.residual = oc.elementwise(7.0 * sh.hSp * act * 0.5 + 2.0 * sh.hSp * act);
    if (m.denseLayerCount() > 0) {
        const double up = (m.gatedMlp ? 2.0 : 1.0) * sh.f / sh.t;
        c.mlpUp = oc.gemm(sh.T, up, sh.h);
        c.activation = oc.elementwise((up + sh.f / sh.t) * sh.T * act);
        c.mlpDown = oc.gemm(sh.T, sh.h, sh.f / sh.t);
    }

    const double tpBytes = sh.T * sh.h * act;
    c.tpComm = collectiveTime(
        s.system, g.tp, st.sequenceParallel ? Collective::ReduceScatter : Collective::AllReduce,
        tpBytes);
    c.cpComm =
        collectiveTime(s.system, g.cp, Collective::AllGather, 2.0 * sh.T * sh.kvDim * act * st.cp);
    c.cpMerge = c.cpMergeBwd = 0;
    c.loraAttn = c.loraMlp = 0;
    c.dequantAttn = c.dequantMlp = 0;
    if (const Frozen& f = w.frozen; f.lora() && f.loraBaseBytes < 2.0) {
        const double perWeight = f.loraBaseBytes + 2.0;
        c.dequantAttn = oc.elementwise((m.attentionParamsPerLayer() / sh.t) * perWeight);
        if (m.denseLayerCount() > 0)
            c.dequantMlp = oc.elementwise((m.mlpParamsPerLayer() / sh.t) * perWeight);
    }
    if (const Frozen& f = w.frozen; f.lora()) {
        // Column-parallel layers (Q, K, V, MLP up) split their outputs over TP, row-parallel
        // ones (output projection, MLP down) their inputs; the rank-r side is whole.
        const double r = f.loraRank;
        auto adapter = [&](double in, double out) {
            return oc.gemm(sh.T, r, in) + oc.gemm(sh.T, out, r);
        };
        const double kvOut = double(m.kvHeads) * m.vHeadDim() / sh.t;
        if (f.loraTargets != LoraTargets::Mlp)
            c.loraAttn = adapter(sh.h, sh.qDim) + adapter(sh.h, sh.kvDim) + adapter(sh.h, kvOut) +
                         adapter(double(m.heads) * m.vHeadDim() / sh.t, sh.h);
        if (f.loraTargets != LoraTargets::Attention && m.denseLayerCount() > 0)
            c.loraMlp = (m.gatedMlp ? 2.0 : 1.0) * adapter(sh.h, sh.f / sh.t) +
                        adapter(sh.f / sh.t, sh.h);
    }
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
    // Per weight tensor (DeepSpeed ZeRO-3 unbucketed): QKV as three, the output projection,
    // the MLP's two or three matrices and two norms, each its own collective and latency.
    const double tensors = st.fsdpPerTensor ? (m.gatedMlp ? 9.0 : 8.0) : 1.0;
    c.fsdpGather = tensors * collectiveTime(s.system, g.dpShard, Collective::AllGather,
                                            layerParams * 2.0 / tensors);
    c.fsdpReduce = tensors * collectiveTime(s.system, g.dpShard, Collective::ReduceScatter,
                                            layerParams * bytesPerElement(w.gradReducePrecision) /
                                                tensors);
    if (m.isMoe()) moeCosts(s, sh, oc, g, c);
    return c;
}

/// Builds a layer's op list with the stream rules of MODEL.md §4.
class LayerBuilder {
  public:
    LayerBuilder(StreamSim& sim, const Strategy& st) : sim_(sim), st_(st) {}

    /// `kernels`: launches the host issues for it; `hostSync`: the host waits for it to finish.
    int compute(const char* label, double dur, Phase phase, int kernels = 1,
                bool hostSync = false) {
        SimOp op;
        op.label = label;
        op.lane = Lane::Compute;
        op.phase = phase;
        op.durationS = dur;
        op.kernels = kernels;
        op.hostSync = hostSync;
        op.deps = {lastCompute_, waitBeforeNext_};
        waitBeforeNext_ = waitAfterNext_;
        waitAfterNext_ = -1;
        lastCompute_ = sim_.add(op);
        return lastCompute_;
    }
    /// A TP collective next to a GEMM: blocking, or (TP-comm overlap) hidden behind that GEMM.
    /// `beforeGemm`: the collective feeds the next GEMM (all-gather); else it follows the last.
    void tpCollective(const char* label, double dur, Collective kind, bool beforeGemm) {
        if (dur <= 0) return;
        if (!st_.tpCommOverlap) {
            waitBeforeNext_ = comm(label, Lane::Comm, dur, ParallelDim::TP, kind, lastCompute_);
        } else if (beforeGemm) {
            // Chunked all-gather pipelined with the GEMM it feeds (Wang et al. ASPLOS 2023).
            waitAfterNext_ = comm(label, Lane::Comm, dur, ParallelDim::TP, kind, lastCompute_);
        } else {
            // Reduce-scatter pipelined with the GEMM just placed: starts with it.
            const int before = lastCompute_ >= 0 ? sim_.op(lastCompute_).deps[0] : -1;
            waitBeforeNext_ = comm(label, Lane::Comm, dur, ParallelDim::TP, kind, before);
        }
    }
    /// A collective that runs beside the next compute op and must finish before the one after.
    void besideNext(const char* label, Lane lane, double dur, ParallelDim dim, Collective kind) {
        if (dur <= 0) return;
        waitAfterNext_ = comm(label, lane, dur, dim, kind, lastCompute_);
    }
    /// A collective the next compute op waits for.
    void blocking(const char* label, double dur, ParallelDim dim, Collective kind) {
        if (dur <= 0) return;
        waitBeforeNext_ = comm(label, Lane::Comm, dur, dim, kind, lastCompute_);
    }
    /// A collective overlapped with another micro-batch's compute (DualPipe-style): it runs on
    /// the communication lane after the previous such one, and only the layer's end waits.
    void detached(const char* label, double dur, ParallelDim dim, Collective kind) {
        if (dur <= 0) return;
        detached_ = comm(label, Lane::Comm, dur, dim, kind, detached_);
    }
    /// A collective issued at the start of the layer that must finish by its end (prefetch).
    int background(const char* label, double dur, ParallelDim dim, Collective kind) {
        if (dur <= 0) return -1;
        return comm(label, Lane::DataParallelComm, dur, dim, kind, -1);
    }
    /// The next compute op waits for `op` (e.g. an unprefetched FSDP gather).
    void blockOn(int op) {
        if (op >= 0) waitBeforeNext_ = op;
    }
    /// Close the layer: the next layer starts only when every pending collective is done.
    void finish(int waitA, int waitB) {
        for (int w : {waitBeforeNext_, waitAfterNext_, waitA, waitB, detached_}) {
            if (w < 0) continue;
            SimOp op;
            op.label = "layer end";
            op.kernels = 0; // a marker, not a kernel
            op.deps = {lastCompute_, w};
            lastCompute_ = sim_.add(op);
        }
        waitBeforeNext_ = waitAfterNext_ = detached_ = -1;
    }

  private:
    int comm(const char* label, Lane lane, double dur, ParallelDim dim, Collective kind, int dep) {
        SimOp op;
        op.label = label;
        op.lane = lane;
        op.durationS = dur;
        op.dim = dim;
        op.collective = kind;
        op.deps = {dep, -1};
        return sim_.add(op);
    }
    StreamSim& sim_;
    const Strategy& st_;
    int lastCompute_ = -1;
    int waitBeforeNext_ = -1;
    int waitAfterNext_ = -1;
    int detached_ = -1;
};

/// The gradient GEMMs of a backward of `g` forward GEMM passes: 2 (input and weight
/// gradients), or 1 for a frozen layer (the input gradient only).
int gradientGemms(double g) { return g > 1.5 ? 2 : 1; }

// Each block kind yields its ops onto the streams; a layer is its model's sequence of blocks.

void attentionForward(LayerBuilder& b, const Scenario& s, const LayerCosts& c, Phase phase) {
    const Strategy& st = s.strategy;
    const bool sp = st.sequenceParallel;
    b.compute("norm (attention)", c.norm, phase);
    if (sp) b.tpCollective("TP all-gather", c.tpComm, Collective::AllGather, true);
    b.compute("QKV GEMM", c.qkv, phase, c.gemmKernels(c.projGemms));
    if (c.loraAttn > 0) b.compute("LoRA adapters (attention)", c.loraAttn, phase);
    if (c.dequantAttn > 0) b.compute("dequantize base weights (attention)", c.dequantAttn, phase);
    if (st.cp > 1)
        b.besideNext("CP all-gather K,V", Lane::Comm, c.cpComm, ParallelDim::CP,
                     Collective::AllGather);
    b.compute("attention core", c.attention, phase);
    if (c.cpMerge > 0) b.compute("CP partial-output merge", c.cpMerge, phase);
    b.compute("output projection", c.outProj, phase, c.gemmKernels(1));
    b.tpCollective(sp ? "TP reduce-scatter" : "TP all-reduce", c.tpComm,
                   sp ? Collective::ReduceScatter : Collective::AllReduce, false);
}

void mlpForward(LayerBuilder& b, const Scenario& s, const LayerCosts& c, Phase phase) {
    const bool sp = s.strategy.sequenceParallel;
    b.compute("residual + norm (MLP)", c.residual + c.norm, phase);
    if (sp) b.tpCollective("TP all-gather", c.tpComm, Collective::AllGather, true);
    b.compute("MLP up GEMM", c.mlpUp, phase, c.gemmKernels(1));
    b.compute("activation", c.activation, phase);
    b.compute("MLP down GEMM", c.mlpDown, phase, c.gemmKernels(1));
    if (c.loraMlp > 0) b.compute("LoRA adapters (MLP)", c.loraMlp, phase);
    if (c.dequantMlp > 0) b.compute("dequantize base weights (MLP)", c.dequantMlp, phase);
    b.tpCollective(sp ? "TP reduce-scatter" : "TP all-reduce", c.tpComm,
                   sp ? Collective::ReduceScatter : Collective::AllReduce, false);
    b.compute("residual", c.residual, phase);
}

/// `g`: GEMM passes of a backward, 2 (input and weight gradients) or 1 (a frozen layer: the
/// input gradient only).
void mlpBackward(LayerBuilder& b, const Scenario& s, const LayerCosts& c, double g) {
    const bool sp = s.strategy.sequenceParallel;
    b.compute("residual (bwd)", c.residual, Phase::Backward);
    if (sp) b.tpCollective("TP all-gather (bwd)", c.tpComm, Collective::AllGather, true);
    const int passes = gradientGemms(g);
    b.compute("MLP down GEMM (bwd)", g * c.mlpDown, Phase::Backward, c.gemmBwdKernels(1, passes));
    if (c.loraMlp > 0) b.compute("LoRA adapters (MLP, bwd)", 2.0 * c.loraMlp, Phase::Backward);
    if (c.dequantMlp > 0)
        b.compute("dequantize base weights (MLP, bwd)", c.dequantMlp, Phase::Backward);
    b.compute("activation (bwd)", 2.0 * c.activation, Phase::Backward);
    b.compute("MLP up GEMM (bwd)", g * c.mlpUp, Phase::Backward, c.gemmBwdKernels(1, passes));
    b.tpCollective(sp ? "TP reduce-scatter (bwd)" : "TP all-reduce (bwd)", c.tpComm,
                   sp ? Collective::ReduceScatter : Collective::AllReduce, false);
}

void attentionBackward(LayerBuilder& b, const Scenario& s, const LayerCosts& c, double g) {
    const Strategy& st = s.strategy;
    const bool sp = st.sequenceParallel;
    b.compute("residual + norm (bwd)", 2.0 * (c.residual + c.norm), Phase::Backward);
    if (sp) b.tpCollective("TP all-gather (bwd)", c.tpComm, Collective::AllGather, true);
    const int passes = gradientGemms(g);
    b.compute("output projection (bwd)", g * c.outProj, Phase::Backward,
              c.gemmBwdKernels(1, passes));
    if (st.recompute == Recompute::Selective) {
        if (s.model.mla)
            b.compute("MLA up-projections (recompute)", c.mlaUp, Phase::Recompute,
                      c.gemmKernels(2));
        b.compute("attention core (recompute)", c.attention, Phase::Recompute);
        if (c.cpMerge > 0) b.compute("CP partial-output merge", c.cpMerge, Phase::Recompute);
    }
    if (st.cp > 1)
        b.besideNext("CP reduce-scatter dK,dV", Lane::Comm, c.cpComm, ParallelDim::CP,
                     Collective::ReduceScatter);
    b.compute("attention core (bwd)", c.attentionBwd, Phase::Backward);
    if (c.cpMergeBwd > 0) b.compute("CP gradient accumulation", c.cpMergeBwd, Phase::Backward);
    b.compute("QKV GEMM (bwd)", g * c.qkv, Phase::Backward, c.gemmBwdKernels(c.projGemms, passes));
    if (c.loraAttn > 0)
        b.compute("LoRA adapters (attention, bwd)", 2.0 * c.loraAttn, Phase::Backward);
    if (c.dequantAttn > 0)
        b.compute("dequantize base weights (attention, bwd)", c.dequantAttn, Phase::Backward);
    b.tpCollective(sp ? "TP reduce-scatter (bwd)" : "TP all-reduce (bwd)", c.tpComm,
                   sp ? Collective::ReduceScatter : Collective::AllReduce, false);
    b.compute("norm (bwd)", 2.0 * c.norm, Phase::Backward);
}

/// An MoE all-to-all: blocking, or overlapped with another micro-batch's compute.
void moeA2a(LayerBuilder& b, const Scenario& s, const char* label, double dur) {
    if (s.strategy.moeA2aOverlap)
        b.detached(label, dur, ParallelDim::EP, Collective::AllToAll);
    else
        b.blocking(label, dur, ParallelDim::EP, Collective::AllToAll);
}

/// While overlapped all-to-all kernels run they hold a share of the SMs (DeepEP: 20 of 132):
/// the compute beside them slows by that share of their duration.
void smContention(LayerBuilder& b, const Scenario& s, double a2aS, Phase phase) {
    if (s.strategy.moeA2aOverlap && s.strategy.moeCommSmFraction > 0)
        b.compute("SMs held by all-to-all kernels", s.strategy.moeCommSmFraction * a2aS, phase);
}

/// The expert activation (forward, or its recompute): the clamp of its inputs first when the
/// model has one. Megatron-Core's clamped GeGLU then builds its offset tensor from a Python
/// float on every call, a blocking host-to-device copy: the host waits for the clamp to finish.
void expertActivation(LayerBuilder& b, const LayerCosts& c, Phase phase) {
    const bool recompute = phase == Phase::Recompute;
    if (c.expertClamp > 0)
        b.compute(recompute ? "expert activation clamp (recompute)" : "expert activation clamp",
                  c.expertClamp, phase, 3, true);
    if (c.expertAct > 0)
        b.compute(recompute ? "expert activation (recompute)" : "expert activation", c.expertAct,
                  phase);
}

/// Router → permute → dispatch → experts → combine → unpermute (Megatron-Core MoE layer); the
/// shared experts run beside the dispatch (shared-expert overlap).
void moeForward(LayerBuilder& b, const Scenario& s, const LayerCosts& c, Phase phase) {
    const bool sp = s.strategy.sequenceParallel;
    const bool overlap = s.strategy.moeA2aOverlap;
    b.compute("residual + norm (MoE)", c.residual + c.norm, phase);
    if (sp) b.tpCollective("TP all-gather", c.tpComm, Collective::AllGather, true);
    // Dropless routing sizes the buffers from the token counts: the host waits for the router.
    // Fused grouped-MLP kernels keep the counts on the GPU: no sync (sync-free MoE).
    b.compute("router", c.router, phase, 4,
              s.model.moe.capacityFactor <= 0 && !s.strategy.moeFusedMlp);
    b.compute("permute tokens", c.permute, phase);
    if (c.shared > 0 && !overlap) {
        b.besideNext("EP dispatch all-to-all", Lane::Comm, c.dispatch, ParallelDim::EP,
                     Collective::AllToAll);
        b.compute("shared experts", c.shared, phase, c.gemmKernels(2) + 1);
    } else {
        moeA2a(b, s, "EP dispatch all-to-all", c.dispatch);
        if (c.shared > 0) b.compute("shared experts", c.shared, phase, c.gemmKernels(2) + 1);
    }
    if (c.sortChunks > 0) b.compute("sort by local expert", c.sortChunks, phase);
    b.compute("expert up GEMMs", c.expertUp, phase, c.gemmKernels(c.localExperts));
    expertActivation(b, c, phase);
    b.compute("expert down GEMMs", c.expertDown, phase, c.gemmKernels(c.localExperts));
    if (c.expertBias > 0)
        b.compute("expert output bias", c.expertBias, phase, c.expertBiasKernels);
    if (c.sortChunks > 0) b.compute("unsort by local expert", c.sortChunks, phase);
    moeA2a(b, s, "EP combine all-to-all", c.combine);
    b.compute("unpermute + combine", c.unpermute, phase);
    smContention(b, s, c.dispatch + c.combine, phase);
    b.tpCollective(sp ? "TP reduce-scatter" : "TP all-reduce", c.tpComm,
                   sp ? Collective::ReduceScatter : Collective::AllReduce, false);
    b.compute("residual", c.residual, phase);
}

void moeBackward(LayerBuilder& b, const Scenario& s, const LayerCosts& c, double g) {
    const bool sp = s.strategy.sequenceParallel;
    const bool overlap = s.strategy.moeA2aOverlap;
    b.compute("residual (bwd)", c.residual, Phase::Backward);
    if (sp) b.tpCollective("TP all-gather (bwd)", c.tpComm, Collective::AllGather, true);
    b.compute("unpermute + combine (bwd)", c.unpermute, Phase::Backward);
    // The output gradients travel back to the experts (combine's mirror), 16-bit.
    moeA2a(b, s, "EP combine all-to-all (bwd)", c.combine);
    if (c.sortChunks > 0) b.compute("unsort by local expert (bwd)", c.sortChunks, Phase::Backward);
    if (c.expertBias > 0)
        b.compute("expert output bias (bwd)", c.expertBiasBwd, Phase::Backward,
                  c.expertBiasBwdKernels);
    if (s.strategy.recompute == Recompute::Selective) expertActivation(b, c, Phase::Recompute);
    const int passes = gradientGemms(g);
    b.compute("expert down GEMMs (bwd)", g * c.expertDown, Phase::Backward,
              c.gemmBwdKernels(c.localExperts, passes));
    if (c.expertAct > 0) b.compute("expert activation (bwd)", 2.0 * c.expertAct, Phase::Backward);
    if (c.expertClampBwd > 0)
        b.compute("expert activation clamp (bwd)", c.expertClampBwd, Phase::Backward, 2);
    b.compute("expert up GEMMs (bwd)", g * c.expertUp, Phase::Backward,
              c.gemmBwdKernels(c.localExperts, passes));
    if (c.sortChunks > 0) b.compute("sort by local expert (bwd)", c.sortChunks, Phase::Backward);
    if (c.shared > 0 && !overlap) {
        b.besideNext("EP dispatch all-to-all (bwd)", Lane::Comm, c.combine, ParallelDim::EP,
                     Collective::AllToAll);
        b.compute("shared experts (bwd)", g * c.shared, Phase::Backward,
                  c.gemmBwdKernels(2, passes) + 1);
    } else {
        moeA2a(b, s, "EP dispatch all-to-all (bwd)", c.combine);
        if (c.shared > 0)
            b.compute("shared experts (bwd)", g * c.shared, Phase::Backward,
                      c.gemmBwdKernels(2, passes) + 1);
    }
    b.compute("permute tokens (bwd)", c.permute, Phase::Backward);
    b.compute("router (bwd)", g * c.router, Phase::Backward);
    smContention(b, s, 2.0 * c.combine, Phase::Backward);
    b.tpCollective(sp ? "TP reduce-scatter (bwd)" : "TP all-reduce (bwd)", c.tpComm,
                   sp ? Collective::ReduceScatter : Collective::AllReduce, false);
}

void blockForward(BlockKind k, LayerBuilder& b, const Scenario& s, const LayerCosts& c,
                  Phase phase) {
    switch (k) {
    case BlockKind::Attention:
        attentionForward(b, s, c, phase);
        break;
    case BlockKind::Mlp:
        mlpForward(b, s, c, phase);
        break;
    case BlockKind::Moe:
        moeForward(b, s, c, phase);
        break;
    case BlockKind::Embedding:
    case BlockKind::LmHead:
        break; // stage edges, costed by edgeCosts()
    }
}

void blockBackward(BlockKind k, LayerBuilder& b, const Scenario& s, const LayerCosts& c,
                   double g) {
    switch (k) {
    case BlockKind::Attention:
        attentionBackward(b, s, c, g);
        break;
    case BlockKind::Mlp:
        mlpBackward(b, s, c, g);
        break;
    case BlockKind::Moe:
        moeBackward(b, s, c, g);
        break;
    case BlockKind::Embedding:
    case BlockKind::LmHead:
        break;
    }
}

/// `layer`: a representative layer of its kind (dense or MoE).
void buildForward(StreamSim& sim, const Scenario& s, const LayerCosts& c, int layer) {
    LayerBuilder b(sim, s.strategy);
    const bool fsdp = s.strategy.zeroStage >= 3;
    const bool moe = s.model.isMoeLayer(layer);
    const bool prefetch = s.strategy.fsdpPrefetch > 0;
    const int gather =
        fsdp ? b.background(prefetch ? "FSDP all-gather (next layer)" : "FSDP all-gather",
                            moe ? c.fsdpGatherMoe : c.fsdpGather, ParallelDim::DP,
                            Collective::AllGather)
             : -1;
    if (!prefetch) b.blockOn(gather); // gathered just before this layer runs
    for (BlockKind k : s.model.layerBlocks(layer))
        blockForward(k, b, s, c, Phase::Forward);
    b.finish(prefetch ? gather : -1, -1);
}

/// `frozen`: a frozen layer that passes gradients down: input gradients only, nothing to reduce.
/// `recompute`: the layer's forward runs again first (full recompute of this layer).
void buildBackward(StreamSim& sim, const Scenario& s, const LayerCosts& c, int layer,
                   bool frozen, bool recompute) {
    const Strategy& st = s.strategy;
    LayerBuilder b(sim, st);
    const bool fsdp = st.zeroStage >= 3;
    const bool moe = s.model.isMoeLayer(layer);
    const bool prefetch = st.fsdpPrefetch > 0;
    const int gather = fsdp ? b.background(prefetch ? "FSDP all-gather (bwd, next layer)"
                                                    : "FSDP all-gather (bwd)",
                                           moe ? c.fsdpGatherMoe : c.fsdpGather, ParallelDim::DP,
                                           Collective::AllGather)
                            : -1;
    if (!prefetch) b.blockOn(gather);
    const int reduce = fsdp && !frozen ? b.background("FSDP reduce-scatter (previous layer)",
                                           moe ? c.fsdpReduceMoe : c.fsdpReduce, ParallelDim::DP,
                                           Collective::ReduceScatter)
                            : -1;
    const LayerBlocks blocks = s.model.layerBlocks(layer);
    if (recompute)
        for (BlockKind k : blocks)
            blockForward(k, b, s, c, Phase::Recompute);
    for (int i = blocks.count - 1; i >= 0; --i)
        blockBackward(blocks.kinds[i], b, s, c, frozen ? 1.0 : 2.0);
    b.finish(prefetch ? gather : -1, reduce);
}

/// Exposed time of a bucketed gradient reduction overlapping a backward pass of `overlapS`:
/// buckets become ready at an even rate and are reduced one at a time; what outlasts the
/// backward pass is exposed (PyTorch DDP, Li et al. VLDB 2020).
double bucketedExposed(double totalCommS, int buckets, double overlapS) {
    if (totalCommS <= 0) return 0;
    const double per = totalCommS / buckets;
    const double finish = std::max(overlapS + per, overlapS / buckets + totalCommS);
    return std::min(totalCommS, finish - overlapS);
}

/// The stage work that is not transformer layers: embedding (first) and LM head + loss (last).
struct EdgeCosts {
    double embedFwd = 0, embedBwd = 0, headFwd = 0, headBwd = 0;
    double embedComm = 0, headComm = 0; ///< TP collectives (blocking), per direction
    Collective embedKind = Collective::AllReduce; ///< forward: combine the looked-up rows
    Collective headKind = Collective::AllReduce;  ///< backward: the input gradient of the head
};

EdgeCosts edgeCosts(const Scenario& s, const Shape& sh, const OpCoster& oc, const Groups& g) {
    const Strategy& st = s.strategy;
    const Frozen& f = s.workload.frozen;
    EdgeCosts e;
    const double act = 2.0;
    // Fine-tuning: the head's backward computes its weight gradient unless frozen, and its input
    // gradient (and the final norm's) unless nothing below it trains (a linear probe).
    const bool belowTrains = f.belowHeadTrains(s.model.layers);
    const double headPasses = (f.head ? 0.0 : 1.0) + (belowTrains ? 1.0 : 0.0);
    e.embedKind = st.sequenceParallel ? Collective::ReduceScatter : Collective::AllReduce;
    e.headKind = st.sequenceParallel ? Collective::AllGather : Collective::AllReduce;
    if (s.model.vit) {
        // ViT: the patch projection (a GEMM of C·p² → h per patch, replicated over TP) and the
        // position embeddings added; the backward needs its weight gradient only. The
        // classifier on the class token: norm, a GEMM per image, softmax + cross-entropy.
        const VitShape& v = s.model.vitShape;
        const double patch = double(v.channels) * v.patchSize * v.patchSize;
        const double rows = sh.T - st.microBatch; // the class tokens are not patches
        e.embedFwd = oc.gemm(rows, sh.h, patch) + oc.elementwise(3.0 * sh.T * sh.h * act);
        e.embedBwd = oc.gemm(patch, sh.h, rows) + oc.elementwise(2.0 * sh.T * sh.h * act);
        if (f.embedding) e.embedBwd = 0; // its weight gradient is all it computes
        const double images = st.microBatch, classes = double(v.classes);
        e.headFwd = oc.elementwise(2.0 * images * sh.h * act) + oc.gemm(images, classes, sh.h) +
                    oc.elementwise(images * classes * (act + 4.0));
        e.headBwd = headPasses * oc.gemm(images, classes, sh.h) +
                    oc.elementwise(images * classes * (4.0 + act)) +
                    (belowTrains ? oc.elementwise(4.0 * images * sh.h * act) : 0.0);
        return e; // nothing vocabulary-parallel: no TP collective at the edges
    }
    // Vocab-parallel embedding: gather rows, then combine over TP (Shoeybi et al. 2019).
    e.embedFwd = oc.elementwise(2.0 * sh.T * sh.h * act);
    e.embedBwd = f.embedding ? 0.0 : oc.elementwise(3.0 * sh.T * sh.h * act);
    e.embedComm = collectiveTime(s.system, g.tp, e.embedKind, sh.T * sh.h * act);
    // Vocab-parallel LM head: final norm, GEMM, fused cross-entropy over fp32 logits.
    const double vocab = double(s.model.vocab) / sh.t;
    e.headFwd = oc.elementwise(2.0 * sh.hSp * act) + oc.gemm(sh.T, vocab, sh.h) +
                oc.elementwise(sh.T * vocab * (act + 4.0));
    e.headBwd = headPasses * oc.gemm(sh.T, vocab, sh.h) +
                oc.elementwise(sh.T * vocab * (4.0 + act)) +
                (belowTrains ? oc.elementwise(4.0 * sh.hSp * act) : 0.0);
    e.headComm =
        belowTrains ? collectiveTime(s.system, g.tp, e.headKind, sh.T * sh.h * act) : 0.0;
    return e;
}

void addTable(CommTable& into, const CommTable& from, double times) {
    for (int d = 0; d < kParallelDimCount; ++d)
        for (int c = 0; c < kCollectiveCount; ++c) {
            into[d][c].serializedS += from[d][c].serializedS * times;
            into[d][c].exposedS += from[d][c].exposedS * times;
        }
}

void addComm(CommTable& t, ParallelDim d, Collective c, double serialized, double exposed) {
    t[int(d)][int(c)].serializedS += serialized;
    t[int(d)][int(c)].exposedS += exposed;
}

void appendTimeline(std::vector<TimelineEvent>& out, const StreamSim& sim, double offset) {
    for (int i = 0; i < sim.size(); ++i) {
        const SimOp& op = sim.op(i);
        if (op.durationS <= 0) continue;
        const TimelineKind kind = op.isComm()                    ? TimelineKind::Comm
                                  : op.hostIdle                  ? TimelineKind::HostIdle
                                  : op.phase == Phase::Backward  ? TimelineKind::Backward
                                  : op.phase == Phase::Recompute ? TimelineKind::Recompute
                                                                 : TimelineKind::Forward;
        std::string label = op.label;
        if (op.phase == Phase::Recompute && label.find("recompute") == std::string::npos)
            label += " (recompute)";
        TimelineEvent e{std::move(label),
                        op.lane,
                        kind,
                        offset + sim.start(i),
                        offset + sim.end(i),
                        op.isComm(),
                        op.dim,
                        op.collective};
        out.push_back(std::move(e));
    }
}

// ---------------------------------------------------------------------------------------------
// The steps of one evaluation, in order. None allocates unless a timeline is asked for.

/// What every step needs and no step changes: the op coster, the communication groups, the
/// shape of one micro-batch on one GPU.
struct StepContext {
    OpCoster oc;
    Groups groups;
    Shape shape;
    int microBatches;
};

StepContext makeContext(const Scenario& s) {
    const Model& m = s.model;
    const Strategy& st = s.strategy;
    const Workload& w = s.workload;
    const Gpu& gpu = s.system.gpu;
    const OpCoster oc = detail::trainingOpCoster(gpu, w);
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
    return {oc, makeGroups(s), sh, microBatchesPerStep(s)};
}

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
    EdgeCosts edge;

    /// Every backward a stage runs per micro-batch, in the order it runs them: `fn(sim, count)`
    /// for its MoE then dense layers, trainable ones in full (with recompute_layers, the kept
    /// ones before the recomputed first layers of the chunk), frozen ones by input gradient.
    template <typename Fn>
    void forEachBackward(const PipelineStage& stage, Fn fn) const {
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

void simulateLayer(const Scenario& s, const StepContext& ctx, LayerSchedule& out) {
    const Model& m = s.model;
    out.costs = layerCosts(s, ctx.shape, ctx.oc, ctx.groups);
    // CUDA graphs: one launch replays the layer, so the host never paces the GPU.
    const double hostOp = s.strategy.cudaGraphs ? 0.0 : s.system.gpu.calibration.hostOpS;
    auto run = [&](StreamSim& sim) {
        sim.run();
        sim.addHostStalls(hostOp, "host launch stalls");
    };
    const Frozen& f = s.workload.frozen;
    const bool frozenBackward = f.layers > 0 && f.frozenLayersNeedDgrad();
    const bool full = s.strategy.recompute == Recompute::Full;
    const bool partial = full && s.strategy.recomputeLayers > 0;
    if (m.denseLayerCount() > 0) {
        const int dense = m.isMoe() && m.isMoeLayer(0) ? m.moe.denseLayers + 1 : 0;
        buildForward(out.fwd, s, out.costs, dense);
        buildBackward(out.bwd, s, out.costs, dense, false, full);
        run(out.fwd);
        run(out.bwd);
        if (partial) {
            buildBackward(out.bwdKept.emplace(), s, out.costs, dense, false, false);
            run(*out.bwdKept);
        }
        if (frozenBackward) {
            buildBackward(out.bwdFrozen.emplace(), s, out.costs, dense, true, full);
            run(*out.bwdFrozen);
        }
    }
    if (m.isMoe()) {
        buildForward(out.moeFwd, s, out.costs, m.moe.denseLayers);
        buildBackward(out.moeBwd, s, out.costs, m.moe.denseLayers, false, full);
        run(out.moeFwd);
        run(out.moeBwd);
        if (partial) {
            buildBackward(out.moeBwdKept.emplace(), s, out.costs, m.moe.denseLayers, false, false);
            run(*out.moeBwdKept);
        }
        if (frozenBackward) {
            buildBackward(out.moeBwdFrozen.emplace(), s, out.costs, m.moe.denseLayers, true,
                          full);
            run(*out.moeBwdFrozen);
        }
    }
    out.edge = edgeCosts(s, ctx.shape, ctx.oc, ctx.groups);
}

/// One micro-batch's forward and backward wall time on one kind of stage.
struct StagePass {
    PipelineStage stage;
    double fwd = 0, bwd = 0;
    double offloadFwd = 0, offloadBwd = 0; ///< of fwd and bwd: waits for activation offload
};

/// Activation offloading's waits per micro-batch, as Transformer Engine's double-buffered
/// handler (AsyncDoubleBufferGroupOffloadHandler, which Megatron-Core's cpu_offloading_num_layers
/// runs) schedules the copies: layer i < n is copied to the host on its own stream, starting
/// when the previous copy's window closes (layer 0's: when layer 0 ends), and the compute stream
/// waits for it at the end of layer window(i) = (L / n)(i + 1) − 1, with the remainder L mod n
/// spread one layer each over the first windows. A copy longer than the forward compute of
/// the layers in its window is waited for; the backward brings each back over the same window
/// of layers, against their backward compute. PP 1 and no recompute (the scenario check).
void addOffloadWaits(const Scenario& s, const LayerSchedule& l, StagePass& pass) {
    const Strategy& st = s.strategy;
    const Model& m = s.model;
    const int n = st.offloadLayers, layers = m.layers;
    if (n <= 0 || n >= layers) return;
    const double link = s.system.hostLinkBytesPerS;
    const double dense = layerActivationBytes(m, st, s.workload, false) / link;
    const double moe = m.isMoe() ? layerActivationBytes(m, st, s.workload, true) / link : 0.0;
    int prev = 0, constant = 0;
    for (int i = 0; i < n; ++i) {
        int window = (layers / n) * (i + 1) - 1;
        if (i < layers % n) {
            window += i + 1;
            constant = i + 1;
        } else {
            window += constant;
        }
        double fwd = 0, bwd = 0;
        for (int j = prev + 1; j <= window; ++j) {
            const bool moeLayer = m.isMoeLayer(j);
            fwd += moeLayer ? l.moeFwd.makespanS() : l.fwd.makespanS();
            bwd += moeLayer ? l.moeBwd.makespanS() : l.bwd.makespanS();
        }
        const double copy = m.isMoeLayer(i) ? moe : dense;
        pass.offloadFwd += std::max(0.0, copy - fwd);
        pass.offloadBwd += std::max(0.0, copy - bwd);
        prev = window;
    }
    pass.fwd += pass.offloadFwd;
    pass.bwd += pass.offloadBwd;
}

StagePass stagePass(const LayerSchedule& l, const PipelineStage& stage) {
    const int dense = stage.layers - stage.moeLayers;
    StagePass t{stage, dense * l.fwd.makespanS() + stage.moeLayers * l.moeFwd.makespanS(), 0.0};
    l.forEachBackward(stage,
                      [&](const StreamSim& sim, int count) { t.bwd += count * sim.makespanS(); });
    if (stage.first) {
        t.fwd += l.edge.embedFwd + l.edge.embedComm;
        t.bwd += l.edge.embedBwd;
    }
    if (stage.last) {
        t.fwd += l.edge.headFwd;
        t.bwd += l.edge.headBwd + l.edge.headComm;
    }
    return t;
}

struct PipelineTimes {
    double microBatchWallS; ///< one micro-batch's forward + backward + p2p on the critical stage
    double bubbleS;
};

/// The critical stage's micro-batches, the fill/drain bubble and p2p, and the compute and
/// communication of its layers and edges.
PipelineTimes pipelineStep(const Scenario& s, const StepContext& ctx, const LayerSchedule& l,
                           const StagePass& crit, Result& r, CommTable& comm) {
    const Strategy& st = s.strategy;
    const Shape& sh = ctx.shape;
    const int mbs = ctx.microBatches;
    const double p2pBytes = sh.T * sh.h * 2.0 / (st.sequenceParallel ? st.tp : 1);
    const double p2p = st.pp > 1 ? p2pTime(s.system, ctx.groups.ppStride, p2pBytes) : 0.0;
    const double p2pPerMb = 2.0 * st.vp * p2p; // activations forward, gradients backward
    r.forwardPerMicroBatchS = crit.fwd + (st.pp > 1 ? st.vp * p2p : 0.0);
    r.backwardPerMicroBatchS = crit.bwd + (st.pp > 1 ? st.vp * p2p : 0.0);

    PipelineTimes out;
    out.microBatchWallS = crit.fwd + crit.bwd + p2pPerMb;
    // m micro-batches plus the fill/drain bubble, (p−1)/v of a micro-batch's forward and
    // backward (Narayanan et al. SC21 §2.2).
    out.bubbleS = st.pp > 1 ? double(st.pp - 1) / st.vp * out.microBatchWallS : 0.0;

    const int moeLayers = crit.stage.moeLayers, layers = crit.stage.layers - moeLayers;
    const bool first = crit.stage.first, last = crit.stage.last;
    const EdgeCosts& e = l.edge;
    addTable(comm, l.fwd.comm(), double(mbs) * layers);
    addTable(comm, l.moeFwd.comm(), double(mbs) * moeLayers);
    l.forEachBackward(crit.stage, [&](const StreamSim& sim, int count) {
        addTable(comm, sim.comm(), double(mbs) * count);
    });
    if (first) addComm(comm, ParallelDim::TP, e.embedKind, mbs * e.embedComm, mbs * e.embedComm);
    if (last) addComm(comm, ParallelDim::TP, e.headKind, mbs * e.headComm, mbs * e.headComm);
    addComm(comm, ParallelDim::PP, Collective::P2P, mbs * p2pPerMb, mbs * p2pPerMb);

    r.compute.forwardS =
        mbs * (layers * l.fwd.busyS(Phase::Forward) + moeLayers * l.moeFwd.busyS(Phase::Forward) +
               (first ? e.embedFwd : 0.0) + (last ? e.headFwd : 0.0));
    auto busy = [&](Phase ph) {
        double t = 0;
        l.forEachBackward(crit.stage,
                          [&](const StreamSim& sim, int count) { t += count * sim.busyS(ph); });
        return t;
    };
    r.compute.backwardS = mbs * (busy(Phase::Backward) + (first ? e.embedBwd : 0.0) +
                                 (last ? e.headBwd : 0.0));
    r.compute.recomputeS = mbs * busy(Phase::Recompute);
    // A layer's stall is charged to its last op's phase: forward in a forward layer, backward
    // in a backward one (whose recomputed forward runs before its backward ops).
    const double fwdStalls = layers * l.fwd.hostStallS() + moeLayers * l.moeFwd.hostStallS();
    double stalls = fwdStalls;
    l.forEachBackward(crit.stage,
                      [&](const StreamSim& sim, int count) { stalls += count * sim.hostStallS(); });
    r.compute.hostStallS = mbs * stalls;
    r.compute.hostStallForwardS = mbs * fwdStalls;
    return out;
}

/// The groups one set of parameters is reduced and sharded over: the dense part over DP × CP,
/// the routed experts over the expert-data-parallel ranks.
struct SyncGroups {
    const GroupLayout& reduce;
    const GroupLayout& shard;
    const GroupLayout& replicas;
    int shardRanks;
};

/// Serialized data-parallel traffic of one set of parameters, once per step.
struct SyncTraffic {
    double reduceScatter = 0; ///< in the backward window (ZeRO-1/2), per pass
    double allReduce = 0;     ///< in the backward window (per pass for ZeRO-1/2)
    double allGather = 0;     ///< ZeRO-1/2: updated weights, in the next forward's window
    int buckets = 0;
};

SyncTraffic syncTraffic(const Scenario& s, double params, const SyncGroups& g) {
    const Strategy& st = s.strategy;
    SyncTraffic t;
    if (g.reduce.size <= 1 || params <= 0) return t;
    const double gradBytes = params * bytesPerElement(s.workload.gradReducePrecision);
    const int shard = g.shardRanks;
    t.buckets = std::max(1, int(std::ceil(gradBytes / st.bucketBytes)));
    const double bucket = gradBytes / t.buckets;
    if (st.zeroStage == 0) {
        t.allReduce = t.buckets * collectiveTime(s.system, g.reduce, Collective::AllReduce, bucket);
    } else if (st.zeroStage <= 2) {
        // Reduce-scatter gradients (ZeRO-2: after every micro-batch); then all-reduce across
        // hybrid replicas; the updated 16-bit weights are all-gathered back.
        t.reduceScatter =
            t.buckets * collectiveTime(s.system, g.shard, Collective::ReduceScatter, bucket);
        t.allReduce = t.buckets * collectiveTime(s.system, g.replicas, Collective::AllReduce,
                                                 bucket / shard);
        t.allGather = t.buckets * collectiveTime(s.system, g.shard, Collective::AllGather,
                                                 params * 2.0 / t.buckets);
    } else if (g.replicas.size > 1) {
        // FSDP's per-layer traffic is in the layer simulation; hybrid sharding adds an
        // all-reduce of the gradient shards across replicas at the end.
        t.allReduce = collectiveTime(s.system, g.replicas, Collective::AllReduce, gradBytes / shard);
        t.buckets = 1;
    }
    return t;
}

/// Data-parallel synchronisation of the critical stage, once per step: the dense parameters
/// over DP × CP and (MoE) the routed experts over EDP share one stream, bucket by bucket, beside
/// the backward pass (and the all-gathers beside the next forward); returns the exposed seconds.
double dataParallelSync(const Scenario& s, const StepContext& ctx, const StagePass& crit,
                        CommTable& comm) {
    const Strategy& st = s.strategy;
    const Groups& g = ctx.groups;
    // Only what trains has gradients to reduce (workload.frozen).
    const StageParams p = stageTrainableParamSplit(s.model, st, s.workload.frozen, crit.stage);
    const SyncTraffic d = syncTraffic(s, p.dense, {g.gradReduce, g.dpShard, g.dpReplicas,
                                                  st.zeroShardRanks()});
    const SyncTraffic e = syncTraffic(s, p.expert, {g.edpReduce, g.edpShard, g.edpReplicas,
                                                   expertShardRanks(st)});
    const int buckets = std::max(1, d.buckets + e.buckets);
    auto exposedOf = [&](double total, double overlapS) {
        return st.dpOverlap ? bucketedExposed(total, buckets, overlapS) : total;
    };
    const double rs = d.reduceScatter + e.reduceScatter, ar = d.allReduce + e.allReduce;
    const double ag = d.allGather + e.allGather;
    const int passes = st.zeroStage == 2 ? ctx.microBatches : 1;
    const double bwdTotal = rs + ar;
    const double exposed = bwdTotal > 0 ? passes * exposedOf(bwdTotal, crit.bwd) : 0.0;
    if (rs > 0)
        addComm(comm, ParallelDim::DP, Collective::ReduceScatter, passes * rs,
                exposed * rs / bwdTotal);
    if (ar > 0)
        addComm(comm, ParallelDim::DP, Collective::AllReduce, passes * ar, exposed * ar / bwdTotal);
    double agExposed = 0;
    if (ag > 0) {
        agExposed = exposedOf(ag, crit.fwd);
        addComm(comm, ParallelDim::DP, Collective::AllGather, ag, agExposed);
    }
    return exposed + agExposed;
}

/// The optimizer streams params, gradients and state through HBM (Adam: read and write fp32
/// master, m and v: 24 B; read the gradient; write 16-bit weights: 2 B).
double optimizerStep(const Scenario& s, const StepContext& ctx, const StagePass& crit) {
    const Strategy& st = s.strategy;
    const Workload& w = s.workload;
    const bool zero = st.zeroStage >= 1;
    const double denseShard = zero ? double(st.zeroShardRanks()) : 1.0;
    const double expertShard = zero ? double(expertShardRanks(st)) : 1.0;
    const double stateBytes = w.optimizer == Optimizer::Adam ? 24.0 : 16.0;
    const double perParam = stateBytes + bytesPerElement(w.gradReducePrecision) + 2.0;
    const StageParams p = stageTrainableParamSplit(s.model, st, w.frozen, crit.stage);
    return ctx.oc.elementwise((p.dense / denseShard + p.expert / expertShard) * perParam);
}

/// Step time = compute + exposed communication + bubble (+ stated framework overheads); sets
/// those totals in `r`.
double stepTotals(const Scenario& s, const CommTable& comm, double bubbleS, Result& r) {
    const Workload& w = s.workload;
    r.comm = comm;
    r.computeS = r.compute.totalS();
    r.bubbleS = bubbleS;
    double exposed = 0;
    for (const auto& dim : comm)
        for (const auto& c : dim)
            exposed += c.exposedS;
    r.exposedCommS = exposed;
    // Framework time no op accounts for (workload.step_overhead_ms; 0 unless measured).
    r.stepTimeS = r.computeS + r.exposedCommS + r.bubbleS + w.stepOverheadS +
                  w.microBatchOverheadS * microBatchesPerStep(s);
    return r.stepTimeS;
}

/// Throughput and FLOP utilisation of a step whose totals stepTotals() set.
void finishStep(const Scenario& s, Result& r) {
    const Model& m = s.model;
    const Workload& w = s.workload;

    const double tokens = double(w.globalBatch) * w.seqLen;
    r.samplesPerS = w.globalBatch / r.stepTimeS;
    r.tokensPerS = tokens / r.stepTimeS;
    r.tokensPerSPerGpu = r.tokensPerS / s.gpus;
    r.modelFlopsPerStep =
        trainingFlopsPerStep(m, w.frozen, w.globalBatch, w.seqLen, s.strategy.recompute, false);
    if (s.strategy.recompute == Recompute::Full && s.strategy.recomputeLayers > 0) {
        // Only the first recompute_layers of each chunk run their forward again (nothing is
        // frozen with recompute_layers).
        const RecomputedLayers rc = modelRecomputedLayers(s);
        r.hardwareFlopsPerStep =
            trainingFlopsPerStep(m, w.frozen, w.globalBatch, w.seqLen, Recompute::None, true) +
            tokens * recomputeFlopsPerToken(m, rc.layers - rc.moeLayers, rc.moeLayers, w.seqLen);
    } else {
        r.hardwareFlopsPerStep =
            trainingFlopsPerStep(m, w.frozen, w.globalBatch, w.seqLen, s.strategy.recompute, true);
    }
    r.modelTflopsPerGpu = r.modelFlopsPerStep / (r.stepTimeS * s.gpus) / 1e12;
    r.hardwareTflopsPerGpu = r.hardwareFlopsPerStep / (r.stepTimeS * s.gpus) / 1e12;
    const double peak = s.system.gpu.peak(w.precision);
    r.mfu = r.modelTflopsPerGpu * 1e12 / peak;
    r.hfu = r.hardwareTflopsPerGpu * 1e12 / peak;
}

/// One micro-batch on the critical stage, op by op: its layers' forward and backward in full,
/// with the stage's edges (the embedding on the first stage, the LM head and loss on the last,
/// their TP collectives) and its pipeline sends where the step's accounting charges them; then
/// the step-level phases as one span each. Allocates: only when asked for.
void appendStepTimeline(Result& r, const StepContext& ctx, const LayerSchedule& l,
                        const StagePass& crit, const PipelineTimes& pipe, double dpExposed) {
    auto& tl = r.timeline;
    const int mbs = ctx.microBatches;
    const EdgeCosts& e = l.edge;
    const PipelineStage& stage = crit.stage;
    double t0 = 0;
    auto span = [&](const char* label, Lane lane, TimelineKind kind, double d, ParallelDim dim,
                    Collective c) {
        if (d <= 0) return;
        const bool comm = kind == TimelineKind::Comm;
        tl.push_back({label, lane, kind, t0, t0 + d, comm, dim, c});
        t0 += d;
    };
    auto compute = [&](const char* label, TimelineKind kind, double d) {
        span(label, Lane::Compute, kind, d, ParallelDim::TP, Collective::AllReduce);
    };
    // The pipeline's sends of one micro-batch, each direction (v chunks, one send each).
    const double p2pEach = 0.5 * std::max(0.0, pipe.microBatchWallS - crit.fwd - crit.bwd);
    if (stage.first) {
        compute("embedding", TimelineKind::Forward, e.embedFwd);
        span("embedding TP collective", Lane::Comm, TimelineKind::Comm, e.embedComm,
             ParallelDim::TP, e.embedKind);
    }
    // Dense layers lead (MoE models' first layers), MoE layers follow; backward in reverse.
    const int moeLayers = stage.moeLayers, dense = stage.layers - moeLayers;
    for (int layer = 0; layer < dense; ++layer) {
        appendTimeline(tl, l.fwd, t0);
        t0 += l.fwd.makespanS();
    }
    for (int layer = 0; layer < moeLayers; ++layer) {
        appendTimeline(tl, l.moeFwd, t0);
        t0 += l.moeFwd.makespanS();
    }
    compute("activation offload wait", TimelineKind::Forward, crit.offloadFwd);
    if (stage.last) compute("LM head + loss", TimelineKind::Forward, e.headFwd);
    span("pipeline p2p (activations)", Lane::Comm, TimelineKind::Comm, p2pEach, ParallelDim::PP,
         Collective::P2P);
    if (stage.last) {
        compute("LM head + loss (bwd)", TimelineKind::Backward, e.headBwd);
        span("LM head TP collective (bwd)", Lane::Comm, TimelineKind::Comm, e.headComm,
             ParallelDim::TP, e.headKind);
    }
    // Backward: trainable layers in full, then frozen ones (input gradients only, or none).
    l.forEachBackward(stage, [&](const StreamSim& sim, int count) {
        for (int layer = 0; layer < count; ++layer) {
            appendTimeline(tl, sim, t0);
            t0 += sim.makespanS();
        }
    });
    compute("activation reload wait", TimelineKind::Backward, crit.offloadBwd);
    if (stage.first) compute("embedding (bwd)", TimelineKind::Backward, e.embedBwd);
    span("pipeline p2p (gradients)", Lane::Comm, TimelineKind::Comm, p2pEach, ParallelDim::PP,
         Collective::P2P);
    const double mbWall = pipe.microBatchWallS;
    tl.push_back({"remaining micro-batches (" + std::to_string(mbs - 1) + ")", Lane::Compute,
                  TimelineKind::Steady, mbWall, mbs * mbWall, false, ParallelDim::TP,
                  Collective::AllReduce});
    double t = mbs * mbWall;
    if (pipe.bubbleS > 0) {
        tl.push_back({"pipeline bubble", Lane::Compute, TimelineKind::Bubble, t, t + pipe.bubbleS,
                      false, ParallelDim::PP, Collective::P2P});
        t += pipe.bubbleS;
    }
    if (dpExposed > 0) {
        tl.push_back({"DP gradient sync (exposed)", Lane::DataParallelComm, TimelineKind::Comm, t,
                      t + dpExposed, true, ParallelDim::DP, Collective::AllReduce});
        t += dpExposed;
    }
    tl.push_back({"optimizer step", Lane::Compute, TimelineKind::Optimizer, t,
                  t + r.compute.optimizerS, false, ParallelDim::TP, Collective::AllReduce});
}

/// The MoE figures of the critical rank: expert placement, all-to-all traffic and time, drops.
void moeSummary(const Scenario& s, const StepContext& ctx, const LayerSchedule& l, Result& r) {
    const Model& m = s.model;
    const Strategy& st = s.strategy;
    const LayerCosts& c = l.costs;
    MoeResult& moe = r.moe;
    moe.active = true;
    moe.localExperts = m.moe.experts / st.ep;
    moe.expertDataParallel = st.expertDataParallel();
    moe.routedCopiesPerGpu = ctx.shape.moeCopies;
    moe.dispatchS = c.dispatch;
    moe.combineS = c.combine;
    moe.dispatchScaleUpBytes = c.dispatchTraffic.scaleUpBytes;
    moe.dispatchScaleOutBytes = c.dispatchTraffic.scaleOutBytes;
    moe.combineScaleUpBytes = c.combineTraffic.scaleUpBytes;
    moe.combineScaleOutBytes = c.combineTraffic.scaleOutBytes;
    const CommTime& a2a = r.commTime(ParallelDim::EP, Collective::AllToAll);
    moe.a2aPerStepS = a2a.serializedS;
    moe.a2aExposedPerStepS = a2a.exposedS;
    moe.tokenDropRate = tokenDropRate(m.moe);
    double worst = 0;
    for (const PipelineStage& stage : distinctStages(s))
        worst = std::max(worst, stageParamSplit(m, st, stage).expert);
    moe.expertWeightsBytes =
        worst * 2.0 / (st.zeroStage >= 3 ? double(expertShardRanks(st)) : 1.0);
}

} // namespace

double tokenDropRate(const MoeShape& moe) {
    // Expert loads spread evenly between 2 − I and I times the mean (mean 1, max I = the load
    // imbalance); an expert over the capacity factor C drops its excess: the dropped share is
    // ∫ max(0, x − C) over that spread, (I − C)² / (4(I − 1)) when 2 − I ≤ C < I.
    const double I = moe.loadImbalance, C = moe.capacityFactor;
    if (C <= 0 || I <= C || I <= 1.0) return 0.0;
    if (C >= 2.0 - I) return (I - C) * (I - C) / (4.0 * (I - 1.0));
    return 1.0 - C; // every expert over capacity (only when C < 1, which parsing refuses)
}

Result evaluate(const Scenario& s, const EvaluateOptions& options) {
    if (s.model.isDlrm()) return detail::evaluateDlrm(s, options);
    if (s.workload.kind == WorkloadKind::Inference) return detail::evaluateInference(s);
    const StepContext ctx = makeContext(s);
    LayerSchedule layer;
    simulateLayer(s, ctx, layer);

    // The step ends when the slowest stage has run its micro-batches, synchronized its
    // gradients and stepped its optimizer: every distinct stage is timed and the longest is
    // the critical one (a maximum, so a faster GPU or link never lengthens the step).
    Result r;
    StagePass crit{};
    PipelineTimes pipe{};
    double dpExposed = 0;
    bool any = false;
    const PipelineStages stages = distinctStages(s);
    // A stage without an edge (embedding, head) never outlasts one with an edge that holds the
    // same layers: its every term (micro-batch time, gradients, optimizer state) is no larger.
    auto dominated = [&](const PipelineStage& b) {
        if (b.first || b.last) return false;
        for (const PipelineStage& a : stages)
            if ((a.first || a.last) && a.layers == b.layers && a.moeLayers == b.moeLayers &&
                a.frozenLayers == b.frozenLayers && a.frozenMoeLayers == b.frozenMoeLayers &&
                a.recomputedLayers == b.recomputedLayers &&
                a.recomputedMoeLayers == b.recomputedMoeLayers)
                return true;
        return false;
    };
    for (const PipelineStage& stage : stages) {
        if (dominated(stage)) continue;
        StagePass cand = stagePass(layer, stage);
        addOffloadWaits(s, layer, cand);
        Result rc;
        rc.microBatches = ctx.microBatches;
        rc.criticalStage = cand.stage.index;
        CommTable comm{};
        const PipelineTimes pc = pipelineStep(s, ctx, layer, cand, rc, comm);
        // The offload waits are forward and backward time the layers' own ops do not hold.
        rc.compute.offloadWaitForwardS = ctx.microBatches * cand.offloadFwd;
        rc.compute.offloadWaitS = ctx.microBatches * (cand.offloadFwd + cand.offloadBwd);
        rc.compute.forwardS += rc.compute.offloadWaitForwardS;
        rc.compute.backwardS += ctx.microBatches * cand.offloadBwd;
        const double dc = dataParallelSync(s, ctx, cand, comm);
        rc.compute.optimizerS = optimizerStep(s, ctx, cand);
        const double t = stepTotals(s, comm, pc.bubbleS, rc);
        if (!any || t > r.stepTimeS) {
            r = std::move(rc);
            crit = cand;
            pipe = pc;
            dpExposed = dc;
        }
        any = true;
    }
    finishStep(s, r);
    r.memory = peakMemory(s);
    if (s.model.isMoe()) moeSummary(s, ctx, layer, r);
    if (options.timeline) appendStepTimeline(r, ctx, layer, crit, pipe, dpExposed);
    return r;
}

} // namespace madmax
