// The dense blocks' ops on the streams, in the order Megatron-Core runs them: attention
// (norm, QKV, core, output projection) and the MLP, each with its TP collectives (docs/developer/model.md §4).
#include "transformer/layer.hpp"

namespace madmax::detail {

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

} // namespace madmax::detail
