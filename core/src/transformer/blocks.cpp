// The dense blocks' ops on the streams, in the order Megatron-Core runs them: attention
// (norm, QKV, core, output projection) and the MLP, each with its TP collectives (docs/developer/model.md §4).
#include "transformer/layer.hpp"

namespace madmax::detail {

void attentionForward(LayerBuilder& b, const Scenario& s, const LayerCosts& c, Phase phase) {
    const Strategy& st = s.strategy;
    const bool sp = st.sequenceParallel;
    b.compute("norm (attention)", c.norm, phase);
    b.zeroFetch(c.zeroQkv, c.zeroFetch, phase);
    if (sp) b.tpCollective("TP all-gather", c.tpComm, Collective::AllGather, true);
    b.compute("QKV GEMM", c.qkv, phase, c.gemmKernels(c.projGemms));
    if (c.loraAttn > 0) b.compute("LoRA adapters (attention)", c.loraAttn, phase);
    if (c.dequantAttn > 0) b.compute("dequantize base weights (attention)", c.dequantAttn, phase);
    if (st.cp > 1)
        b.besideNext("CP all-gather K,V", Lane::Comm, c.cpComm, ParallelDim::CP,
                     Collective::AllGather);
    b.compute("attention core", c.attention, phase);
    if (c.cpMerge > 0) b.compute("CP partial-output merge", c.cpMerge, phase);
    b.zeroFetch(c.zeroOut, c.zeroFetch, phase);
    b.compute("output projection", c.outProj, phase, c.gemmKernels(1));
    b.tpCollective(sp ? "TP reduce-scatter" : "TP all-reduce", c.tpComm,
                   sp ? Collective::ReduceScatter : Collective::AllReduce, false);
}

void mlpForward(LayerBuilder& b, const Scenario& s, const LayerCosts& c, Phase phase) {
    const bool sp = s.strategy.sequenceParallel;
    b.compute("residual + norm (MLP)", c.residual + c.norm, phase);
    b.zeroFetch(c.zeroUp, c.zeroFetch, phase);
    if (sp) b.tpCollective("TP all-gather", c.tpComm, Collective::AllGather, true);
    b.compute("MLP up GEMM", c.mlpUp, phase, c.gemmKernels(1));
    b.compute("activation", c.activation, phase);
    b.zeroFetch(c.zeroDown, c.zeroFetch, phase);
    b.compute("MLP down GEMM", c.mlpDown, phase, c.gemmKernels(1));
    if (c.loraMlp > 0) b.compute("LoRA adapters (MLP)", c.loraMlp, phase);
    if (c.dequantMlp > 0) b.compute("dequantize base weights (MLP)", c.dequantMlp, phase);
    b.tpCollective(sp ? "TP reduce-scatter" : "TP all-reduce", c.tpComm,
                   sp ? Collective::ReduceScatter : Collective::AllReduce, false);
    b.compute("residual", c.residual, phase);
}

namespace {

/// Whether a column-parallel linear's backward overlaps its TP collectives with its own GEMMs
/// (Strategy::tpGradOverlap; Transformer Engine's userbuffers do the same in bulk,
/// ub_bulk_dgrad / ub_bulk_wgrad, under tp_comm_overlap): it needs a weight-gradient GEMM to
/// hide behind and TP ranks to talk to.
bool overlapsGradCollectives(const Scenario& s, int passes) {
    const Strategy& st = s.strategy;
    return (st.tpGradOverlap || st.tpCommOverlap) && passes == 2 && st.tp > 1;
}

/// The backward of a column-parallel linear (`qkv`: QKV, else MLP up) as Megatron-LM's
/// LinearWithGradAccumulationAndAsyncCommunication and Transformer Engine's Linear run it: with
/// SP, the input (stored sharded) is all-gathered again beside the input-gradient GEMM; the
/// input gradient is then all-reduced (SP: reduce-scattered) beside the weight-gradient GEMM.
/// The next op (the norm's backward) waits for that collective. `gemmS`: one GEMM pass.
void columnParallelBackward(LayerBuilder& b, const Scenario& s, const LayerCosts& c, bool qkv,
                            double gemmS, int gemms) {
    const bool sp = s.strategy.sequenceParallel;
    if (sp)
        b.besideNext(qkv ? "TP all-gather (input, bwd)" : "TP all-gather (MLP input, bwd)",
                     Lane::Comm, c.tpComm, ParallelDim::TP, Collective::AllGather);
    b.compute(qkv ? "QKV GEMM (bwd, input gradient)" : "MLP up GEMM (bwd, input gradient)", gemmS,
              Phase::Backward, c.gemmBwdKernels(gemms, 1));
    b.besideNext(sp ? "TP reduce-scatter (bwd)" : "TP all-reduce (bwd)", Lane::Comm, c.tpComm,
                 ParallelDim::TP, sp ? Collective::ReduceScatter : Collective::AllReduce);
    b.compute(qkv ? "QKV GEMM (bwd, weight gradient)" : "MLP up GEMM (bwd, weight gradient)", gemmS,
              Phase::Backward, gemms);
}

} // namespace

/// `g`: GEMM passes of a backward, 2 (input and weight gradients) or 1 (a frozen layer: the
/// input gradient only).
void mlpBackward(LayerBuilder& b, const Scenario& s, const LayerCosts& c, double g) {
    const bool sp = s.strategy.sequenceParallel;
    b.compute("residual (bwd)", c.residual, Phase::Backward);
    b.zeroFetch(c.zeroDown, c.zeroFetch, Phase::Backward);
    if (sp) b.tpCollective("TP all-gather (bwd)", c.tpComm, Collective::AllGather, true);
    const int passes = gradientGemms(g);
    b.compute("MLP down GEMM (bwd)", g * c.mlpDown, Phase::Backward, c.gemmBwdKernels(1, passes));
    if (c.loraMlp > 0) b.compute("LoRA adapters (MLP, bwd)", 2.0 * c.loraMlp, Phase::Backward);
    if (c.dequantMlp > 0)
        b.compute("dequantize base weights (MLP, bwd)", c.dequantMlp, Phase::Backward);
    b.compute("activation (bwd)", 2.0 * c.activation, Phase::Backward);
    b.zeroFetch(c.zeroUp, c.zeroFetch, Phase::Backward);
    if (overlapsGradCollectives(s, passes)) {
        columnParallelBackward(b, s, c, false, c.mlpUp, 1);
        return;
    }
    b.compute("MLP up GEMM (bwd)", g * c.mlpUp, Phase::Backward, c.gemmBwdKernels(1, passes));
    b.tpCollective(sp ? "TP reduce-scatter (bwd)" : "TP all-reduce (bwd)", c.tpComm,
                   sp ? Collective::ReduceScatter : Collective::AllReduce, false);
}

void attentionBackward(LayerBuilder& b, const Scenario& s, const LayerCosts& c, double g) {
    const Strategy& st = s.strategy;
    const bool sp = st.sequenceParallel;
    b.compute("residual + norm (bwd)", 2.0 * (c.residual + c.norm), Phase::Backward);
    b.zeroFetch(c.zeroOut, c.zeroFetch, Phase::Backward);
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
    b.zeroFetch(c.zeroQkv, c.zeroFetch, Phase::Backward);
    if (overlapsGradCollectives(s, passes) && c.loraAttn <= 0 && c.dequantAttn <= 0) {
        columnParallelBackward(b, s, c, true, c.qkv, c.projGemms);
        b.compute("norm (bwd)", 2.0 * c.norm, Phase::Backward);
        return;
    }
    b.compute("QKV GEMM (bwd)", g * c.qkv, Phase::Backward, c.gemmBwdKernels(c.projGemms, passes));
    if (c.loraAttn > 0)
        b.compute("LoRA adapters (attention, bwd)", 2.0 * c.loraAttn, Phase::Backward);
    if (c.dequantAttn > 0)
        b.compute("dequantize base weights (attention, bwd)", c.dequantAttn, Phase::Backward);
    b.tpCollective(sp ? "TP reduce-scatter (bwd)" : "TP all-reduce (bwd)", c.tpComm,
                   sp ? Collective::ReduceScatter : Collective::AllReduce, false);
    b.compute("norm (bwd)", 2.0 * c.norm, Phase::Backward);
}

} // namespace madmax::detail
