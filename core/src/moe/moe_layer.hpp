// The mixture-of-experts room (docs/developer/workloads.md "MoE"): a MoE layer is the transformer's attention
// block followed by this block in place of the dense MLP: router, permutation, the dispatch
// all-to-all over EP (flat, or DeepEP's per-node dedup), grouped expert GEMMs, the combine
// all-to-all, shared experts, and the expert-data-parallel gradient groups.
#pragma once

#include "madmax/collectives.hpp"
#include "transformer/layer.hpp"

namespace madmax::detail {

/// Durations of the MoE block's ops of one layer, forward direction (the backward GEMMs cost
/// twice).
struct MoeLayerCosts {
    double router, permute, expertUp, expertAct, expertDown, unpermute, shared;
    /// Megatron-Core's flat all-to-all dispatcher with more than one local expert: the received
    /// tokens regrouped by local expert after the dispatch, and back before the combine.
    double sortChunks;
    double dispatch, combine; ///< one all-to-all each (backward: both in 16-bit, as combine)
    int localExperts;         ///< E / EP
    /// Unfused expert extras (Megatron-Core's path for clamped, biased experts): the clamp of
    /// the activation's inputs, forward and backward, and the down projection's bias scaled
    /// by the routing weight, forward and backward; launches of the bias ops.
    double expertClamp, expertClampBwd, expertBias, expertBiasBwd;
    int expertBiasKernels, expertBiasBwdKernels;
    double fsdpGatherMoe, fsdpReduceMoe;
    MoeA2aTraffic dispatchTraffic, combineTraffic;
};

/// Every op of the MoE block, costed once.
MoeLayerCosts moeLayerCosts(const Scenario& s, const Shape& sh, const OpCoster& oc,
                            const Groups& g);

/// Router → permute → dispatch → experts → combine → unpermute (Megatron-Core MoE layer), and
/// its backward; `c`: the layer's dense costs (norms, residuals, TP collectives, casts).
void moeForward(LayerBuilder& b, const Scenario& s, const LayerCosts& c, const MoeLayerCosts& e,
                Phase phase);
void moeBackward(LayerBuilder& b, const Scenario& s, const LayerCosts& c, const MoeLayerCosts& e,
                 double g);

/// The MoE figures of the critical rank: expert placement, all-to-all traffic and time, drops
/// (r.comm must already hold the step's communication).
void moeSummary(const Scenario& s, const Shape& sh, const MoeLayerCosts& c, Result& r);

} // namespace madmax::detail
