// A transformer layer's weight GEMMs, declared once (issue #32: "each fact one owner"): the
// training layer, the serving model and FLOP counting all read these shapes, so a new
// attention variant or MLP is added here and reaches time, serving and MFU together.
#pragma once

#include "madmax/model.hpp"

#include <array>

namespace madmax {

/// One weight GEMM, per token row: each row (a K-vector) multiplies a K × N weight.
struct GemmShape {
    double n = 0, k = 0;
    /// Forward FLOPs per row, 2·N·K.
    double flopsPerRow() const { return 2.0 * n * k; }
};

/// The attention block's weight GEMMs on one of `tp` tensor-parallel ranks, in the order the
/// layer runs them. Column-parallel projections split N over TP and the output projection
/// splits K; MLA's down-projections (into the latents) are replicated on every rank.
struct AttentionGemms {
    /// QKV (KV heads replicated when TP exceeds them); or MLA's W_DQ (with a query latent),
    /// W_UQ, W_DKV + W_KR and W_UK + W_UV (DeepSeek-V2 §2.1, without weight absorption).
    std::array<GemmShape, 4> projections{};
    int count = 0;
    GemmShape output{}; ///< W_O
    /// MLA: the up-projections from the latents (W_UQ and W_UK + W_UV), which selective
    /// recompute runs again; zero otherwise.
    GemmShape queryUp{}, keyValueUp{};
};
AttentionGemms attentionGemms(const Model& m, double tp);

/// An MLP of inner width `ffn` split over `split` ranks: up (gate and up together when
/// gated) and down.
struct MlpGemms {
    GemmShape up, down;
    double flopsPerRow() const { return up.flopsPerRow() + down.flopsPerRow(); }
};
MlpGemms mlpGemms(const Model& m, double ffn, double split);

/// The MoE router, h → E logits, whole on every rank; zero for a single expert (no router).
GemmShape routerGemm(const Model& m);

} // namespace madmax
