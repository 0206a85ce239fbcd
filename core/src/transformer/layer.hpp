// The transformer room: one layer's dense blocks (attention with GQA, MLA or sliding windows,
// the dense MLP, LoRA adapters, context parallelism's merges) and a language model's stage
// edges (embedding, LM head), costed op by op and laid onto the streams (docs/developer/model.md §§1-4). The
// MoE block (moe/) and ViT's edges (vit/) build on these types; training/ assembles the step.
#pragma once

#include "engine/groups.hpp"
#include "engine/layer_builder.hpp"
#include "engine/op_cost.hpp"
#include "madmax/scenario.hpp"

namespace madmax::detail {

/// Sizes of one micro-batch's work on one GPU.
struct Shape {
    double T; ///< tokens per micro-batch per GPU (b·s/cp)
    double h, f, t;
    double qDim;      ///< a·d / t
    double kvDim;     ///< g·d / t
    double context;   ///< keys each query sees (full sequence)
    double hSp;       ///< T·h elements held per GPU between TP regions (÷t with SP)
    double keys;      ///< keys each query attends to, averaged over layers (causal, windows)
    double moeSend;   ///< MoE: tokens this GPU dispatches (T·ETP/TP)
    double moeCopies; ///< MoE: routed copies the critical rank's experts process
};

/// The shape of one micro-batch on one GPU under `s.strategy`.
Shape layerShape(const Scenario& s);

/// Durations of the dense ops of one layer, forward direction (the MoE block's are in
/// moe/moe_layer.hpp).
struct LayerCosts {
    double norm, qkv, attention, attentionBwd, outProj, residual, mlpUp, activation, mlpDown;
    double mlaUp;  ///< MLA: the up-projections from the latents (part of qkv)
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
    /// DeepSpeed's legacy ZeRO-3 (Strategy::fsdpStyle): each linear's weight gathered on its
    /// own — QKV (the attention projections), output projection, MLP up, MLP down — and the
    /// share of each its prefetch bucket serialises (LayerBuilder::zeroFetch).
    double zeroQkv, zeroOut, zeroUp, zeroDown;
    ZeroFetchCosts zeroFetch;
    /// Launches of `gemms` GEMMs below 16 bits (Transformer Engine): forward, each GEMM after
    /// the quantisation of its input; backward, the quantisation of its output gradient, which
    /// its `passes` data- and weight-gradient GEMMs share, then those GEMMs. `casts`: the
    /// launches of one quantisation (0 for 16-bit GEMMs).
    int casts;
    int gemmKernels(int gemms) const { return gemms * (1 + casts); }
    int gemmBwdKernels(int gemms, int passes) const { return gemms * (casts + passes); }
    /// The attention projections' GEMMs (QKV as one; MLA's down- and up-projections).
    int projGemms;
};

/// Every dense op of one layer, costed once.
LayerCosts layerCosts(const Scenario& s, const Shape& sh, const OpCoster& oc, const Groups& g);

/// The stage work that is not transformer layers: embedding (first) and LM head + loss (last).
struct EdgeCosts {
    double embedFwd = 0, embedBwd = 0, headFwd = 0, headBwd = 0;
    double embedComm = 0, headComm = 0;           ///< TP collectives (blocking), per direction
    Collective embedKind = Collective::AllReduce; ///< forward: combine the looked-up rows
    Collective headKind = Collective::AllReduce;  ///< backward: the input gradient of the head
};

/// Fine-tuning: the head's backward computes its weight gradient unless frozen (passes), and its
/// input gradient (and the final norm's) unless nothing below it trains (a linear probe).
struct HeadBackward {
    bool belowTrains;
    double passes;
};
HeadBackward headBackward(const Scenario& s);

/// Edge costs with only the kinds of the edges' TP collectives set (sequence parallelism
/// reduce-scatters the embedding and all-gathers before the head; else all-reduces).
EdgeCosts edgeCollectives(const Scenario& s);

/// The embedding and LM head of a language model (vocabulary-parallel over TP).
EdgeCosts edgeCosts(const Scenario& s, const Shape& sh, const OpCoster& oc, const Groups& g);

/// Memory per GPU of the fullest pipeline stage of a layered model in training (memory.cpp).
MemoryBreakdown transformerMemory(const Scenario& s);

// The dense blocks' ops on the streams. `g`: GEMM passes of a backward, 2 (input and weight
// gradients) or 1 (a frozen layer: the input gradient only).
void attentionForward(LayerBuilder& b, const Scenario& s, const LayerCosts& c, Phase phase);
void attentionBackward(LayerBuilder& b, const Scenario& s, const LayerCosts& c, double g);
void mlpForward(LayerBuilder& b, const Scenario& s, const LayerCosts& c, Phase phase);
void mlpBackward(LayerBuilder& b, const Scenario& s, const LayerCosts& c, double g);

} // namespace madmax::detail
