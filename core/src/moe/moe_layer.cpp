// The MoE block's costs and its ops on the streams (docs/developer/workloads.md "MoE"; Megatron-Core's MoE
// layer and token dispatchers, DeepEP, Transformer Engine's grouped GEMMs).
#include "moe/moe_layer.hpp"

#include "madmax/layer_gemms.hpp"
#include "madmax/memory.hpp"
#include "madmax/moe.hpp"
#include "madmax/pipeline.hpp"

#include <algorithm>

namespace madmax::detail {

namespace {

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
void expertActivation(LayerBuilder& b, const MoeLayerCosts& e, Phase phase) {
    const bool recompute = phase == Phase::Recompute;
    if (e.expertClamp > 0)
        b.compute(recompute ? "expert activation clamp (recompute)" : "expert activation clamp",
                  e.expertClamp, phase, 3, true);
    if (e.expertAct > 0)
        b.compute(recompute ? "expert activation (recompute)" : "expert activation", e.expertAct,
                  phase);
}

/// The unfused expert epilogues (no pass of their own when the grouped MLP is fused: the
/// GEMM's epilogue applies the activation with its clamp, bias and routing weight, and the down
/// projection's dgrad epilogue its gradient — NVIDIA, "Boosting MoE Training Throughput with
/// Advanced Fusion Kernels", 2026).
void expertEpilogues(const Model& m, const Strategy& st, const Shape& sh, const OpCoster& oc,
                     double fe, int local, MoeLayerCosts& e) {
    const double act = 2.0;
    const MoeShape& moe = m.moe;
    if (st.moeFusedMlp) {
        e.expertAct = 0;
        return;
    }
    if (moe.gluClamp > 0 && m.gatedMlp) {
        // Megatron-Core's weighted quick-GeGLU (fusions/fused_bias_geglu.py) clamps the gate
        // and linear halves into new tensors and concatenates them before its fused kernel:
        // read and write fe each, then read and write 2fe. Their backward: each half's
        // gradient through its clamp mask, reading gradient and input, writing one.
        e.expertClamp = oc.elementwise(8.0 * fe * sh.moeCopies * act);
        e.expertClampBwd = oc.elementwise(6.0 * fe * sh.moeCopies * act);
    }
    if (moe.expertBias) {
        // The down projection's bias times the routing weight, added outside the GEMM per
        // local expert and concatenated (TEGroupedMLP._apply_bias: t + b·p): the product
        // written (h), the sum read (2h) and written (h), the concatenation read and
        // written (2h). Backward: the bias and weight gradients, each a product (read and
        // write h) and a reduction (read h).
        e.expertBias = oc.elementwise(6.0 * sh.h * sh.moeCopies * act);
        e.expertBiasBwd = oc.elementwise(6.0 * sh.h * sh.moeCopies * act);
        e.expertBiasKernels = 2 * local + 1;
        e.expertBiasBwdKernels = 4 * local;
    }
}

/// The layer's communication: dispatch and combine of the critical rank, which receives its
/// share × the load it carries (imbalance, capped by the capacity factor), and ZeRO-3's
/// gathers and reduce-scatters of the dense and expert parameters over their own groups.
void moeCollectives(const Scenario& s, const Shape& sh, const Groups& g, MoeLayerCosts& e) {
    const Model& m = s.model;
    const Strategy& st = s.strategy;
    const MoeShape& moe = m.moe;
    const double act = 2.0;
    const double load = moe.criticalLoad(st.ep);
    MoeA2aRequest req = moeA2aRequestFor(moe, st, s.system.gpu.calibration);
    req.tokens = sh.moeSend * load;
    // FP8 dispatch: one byte per element plus an fp32 scale per 128 (DeepEP).
    req.bytesPerToken = st.moeFp8Dispatch ? sh.h * (1.0 + 4.0 / 128.0) : sh.h * act;
    e.dispatchTraffic = moeAllToAll(s.system, g.ep, req);
    req.bytesPerToken = sh.h * act;
    e.combineTraffic = moeAllToAll(s.system, g.ep, req);
    e.dispatch = e.dispatchTraffic.timeS;
    e.combine = e.combineTraffic.timeS;
    const StageParams lp = layerParamsPerGpu(m, st, true);
    const double gradB = bytesPerElement(s.workload.gradReducePrecision);
    e.fsdpGatherMoe = collectiveTime(s.system, g.dpShard, Collective::AllGather, lp.dense * 2.0) +
                      collectiveTime(s.system, g.edpShard, Collective::AllGather, lp.expert * 2.0);
    e.fsdpReduceMoe =
        collectiveTime(s.system, g.dpShard, Collective::ReduceScatter, lp.dense * gradB) +
        collectiveTime(s.system, g.edpShard, Collective::ReduceScatter, lp.expert * gradB);
}

} // namespace

MoeLayerCosts moeLayerCosts(const Scenario& s, const Shape& sh, const OpCoster& oc,
                            const Groups& g) {
    MoeLayerCosts e{};
    const Model& m = s.model;
    const Strategy& st = s.strategy;
    const double act = 2.0;
    const MoeShape& moe = m.moe;
    const MlpGemms expert = mlpGemms(m, double(moe.expertFfn), st.etp);
    const double fe = expert.down.k, up = expert.up.n;
    const int local = moe.experts / st.ep;
    // A single expert needs no router and no permutation: the block is a dense MLP.
    const bool routed = moe.experts > 1;
    const GemmShape router = routerGemm(m);
    e.router = routed ? oc.gemmAtLeast16(sh.T, router.n, router.k) +
                            oc.elementwise(sh.T * moe.experts * 8.0)
                      : 0.0;
    // Permute: gather each copy's row into expert order; unpermute: scatter back, weighted sum.
    e.permute = routed ? oc.elementwise(2.0 * sh.moeSend * moe.topK * sh.h * act) : 0.0;
    e.expertUp = oc.groupedGemm(sh.moeCopies, up, expert.up.k, local, routed);
    e.expertAct = oc.elementwise((up + fe) * sh.moeCopies * act);
    e.expertDown = oc.groupedGemm(sh.moeCopies, expert.down.n, fe, local, routed);
    expertEpilogues(m, st, sh, oc, fe, local, e);
    e.unpermute = e.permute;
    // MoEAlltoAllTokenDispatcher (moe/token_dispatcher.py): the dispatch's output arrives
    // grouped by source rank, so with more than one local expert `sort_chunks_by_idxs` regroups
    // it by expert (a read and a write of every received copy), and the combine's input goes
    // back the same way. The per-node (flex / DeepEP) dispatcher permutes once, after the
    // dispatch, which `permute` already counts.
    e.sortChunks = routed && local > 1 && st.dispatcher == MoeDispatcher::AllToAll
                       ? oc.elementwise(2.0 * sh.moeCopies * sh.h * act)
                       : 0.0;
    // Grouped GEMMs run one GEMM per local expert (Transformer Engine GroupedLinear), each
    // quantising its own input (LayerCosts::gemmKernels).
    e.localExperts = local;
    if (moe.sharedExperts > 0) {
        const MlpGemms shared = mlpGemms(m, double(moe.sharedExperts) * moe.expertFfn, sh.t);
        e.shared = oc.gemm(sh.T, shared.up.n, shared.up.k) +
                   oc.elementwise((shared.up.n + shared.down.k) * sh.T * act) +
                   oc.gemm(sh.T, shared.down.n, shared.down.k);
    }
    moeCollectives(s, sh, g, e);
    return e;
}

/// Router → permute → dispatch → experts → combine → unpermute (Megatron-Core MoE layer); the
/// shared experts run beside the dispatch (shared-expert overlap).
void moeForward(LayerBuilder& b, const Scenario& s, const LayerCosts& c, const MoeLayerCosts& e,
                Phase phase) {
    const bool sp = s.strategy.sequenceParallel;
    const bool overlap = s.strategy.moeA2aOverlap;
    b.compute("residual + norm (MoE)", c.residual + c.norm, phase);
    if (sp) b.tpCollective("TP all-gather", c.tpComm, Collective::AllGather, true);
    // Dropless routing sizes the buffers from the token counts: the host waits for the router.
    // Fused grouped-MLP kernels keep the counts on the GPU: no sync (sync-free MoE).
    b.compute("router", e.router, phase, 4,
              s.model.moe.capacityFactor <= 0 && !s.strategy.moeFusedMlp);
    b.compute("permute tokens", e.permute, phase);
    if (e.shared > 0 && !overlap) {
        b.besideNext("EP dispatch all-to-all", Lane::Comm, e.dispatch, ParallelDim::EP,
                     Collective::AllToAll);
        b.compute("shared experts", e.shared, phase, c.gemmKernels(2) + 1);
    } else {
        moeA2a(b, s, "EP dispatch all-to-all", e.dispatch);
        if (e.shared > 0) b.compute("shared experts", e.shared, phase, c.gemmKernels(2) + 1);
    }
    if (e.sortChunks > 0) b.compute("sort by local expert", e.sortChunks, phase);
    b.compute("expert up GEMMs", e.expertUp, phase, c.gemmKernels(e.localExperts));
    expertActivation(b, e, phase);
    b.compute("expert down GEMMs", e.expertDown, phase, c.gemmKernels(e.localExperts));
    if (e.expertBias > 0) b.compute("expert output bias", e.expertBias, phase, e.expertBiasKernels);
    if (e.sortChunks > 0) b.compute("unsort by local expert", e.sortChunks, phase);
    moeA2a(b, s, "EP combine all-to-all", e.combine);
    b.compute("unpermute + combine", e.unpermute, phase);
    smContention(b, s, e.dispatch + e.combine, phase);
    b.tpCollective(sp ? "TP reduce-scatter" : "TP all-reduce", c.tpComm,
                   sp ? Collective::ReduceScatter : Collective::AllReduce, false);
    b.compute("residual", c.residual, phase);
}

void moeBackward(LayerBuilder& b, const Scenario& s, const LayerCosts& c, const MoeLayerCosts& e,
                 double g) {
    const bool sp = s.strategy.sequenceParallel;
    const bool overlap = s.strategy.moeA2aOverlap;
    b.compute("residual (bwd)", c.residual, Phase::Backward);
    if (sp) b.tpCollective("TP all-gather (bwd)", c.tpComm, Collective::AllGather, true);
    b.compute("unpermute + combine (bwd)", e.unpermute, Phase::Backward);
    // The output gradients travel back to the experts (combine's mirror), 16-bit.
    moeA2a(b, s, "EP combine all-to-all (bwd)", e.combine);
    if (e.sortChunks > 0) b.compute("unsort by local expert (bwd)", e.sortChunks, Phase::Backward);
    if (e.expertBias > 0)
        b.compute("expert output bias (bwd)", e.expertBiasBwd, Phase::Backward,
                  e.expertBiasBwdKernels);
    if (s.strategy.recompute == Recompute::Selective) expertActivation(b, e, Phase::Recompute);
    const int passes = gradientGemms(g);
    b.compute("expert down GEMMs (bwd)", g * e.expertDown, Phase::Backward,
              c.gemmBwdKernels(e.localExperts, passes));
    if (e.expertAct > 0) b.compute("expert activation (bwd)", 2.0 * e.expertAct, Phase::Backward);
    if (e.expertClampBwd > 0)
        b.compute("expert activation clamp (bwd)", e.expertClampBwd, Phase::Backward, 2);
    b.compute("expert up GEMMs (bwd)", g * e.expertUp, Phase::Backward,
              c.gemmBwdKernels(e.localExperts, passes));
    if (e.sortChunks > 0) b.compute("sort by local expert (bwd)", e.sortChunks, Phase::Backward);
    if (e.shared > 0 && !overlap) {
        b.besideNext("EP dispatch all-to-all (bwd)", Lane::Comm, e.combine, ParallelDim::EP,
                     Collective::AllToAll);
        b.compute("shared experts (bwd)", g * e.shared, Phase::Backward,
                  c.gemmBwdKernels(2, passes) + 1);
    } else {
        moeA2a(b, s, "EP dispatch all-to-all (bwd)", e.combine);
        if (e.shared > 0)
            b.compute("shared experts (bwd)", g * e.shared, Phase::Backward,
                      c.gemmBwdKernels(2, passes) + 1);
    }
    b.compute("permute tokens (bwd)", e.permute, Phase::Backward);
    b.compute("router (bwd)", g * e.router, Phase::Backward);
    smContention(b, s, 2.0 * e.combine, Phase::Backward);
    b.tpCollective(sp ? "TP reduce-scatter (bwd)" : "TP all-reduce (bwd)", c.tpComm,
                   sp ? Collective::ReduceScatter : Collective::AllReduce, false);
}

/// The MoE figures of the critical rank: expert placement, all-to-all traffic and time, drops.
void moeSummary(const Scenario& s, const Shape& sh, const MoeLayerCosts& c, Result& r) {
    const Model& m = s.model;
    const Strategy& st = s.strategy;
    MoeResult& moe = r.moe;
    moe.active = true;
    moe.localExperts = m.moe.experts / st.ep;
    moe.expertDataParallel = st.expertDataParallel();
    moe.routedCopiesPerGpu = sh.moeCopies;
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
    moe.expertWeightsBytes = worst * 2.0 / (st.zeroStage >= 3 ? double(expertShardRanks(st)) : 1.0);
}

} // namespace madmax::detail

namespace madmax {

double tokenDropRate(const MoeShape& moe) {
    return moe.dropShare();
}

} // namespace madmax
