// A transformer layer's weight GEMMs, declared once (issue #32: "each fact one owner"): the
// training layer, the serving model and FLOP counting all read these shapes, so a new
// attention variant or MLP is added here and reaches time, serving and MFU together.
#pragma once

#include "madmax/model.hpp"

#include <array>
#include <cmath>

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

/// An MLP of inner width `ffn` split over `split` ranks: up (gate and up together when
/// gated) and down.
struct MlpGemms {
    GemmShape up, down;
    double flopsPerRow() const { return up.flopsPerRow() + down.flopsPerRow(); }
};

// Inline: the engine reads these on every evaluation (serving several times per layer kind).

/// The attention block's GEMMs on one of `tp` ranks.
inline AttentionGemms attentionGemms(const Model& m, double tp) {
    AttentionGemms g;
    const double h = double(m.hidden);
    const double heads = m.heads / tp;
    g.output = {h, heads * double(m.vHeadDim())};
    if (!m.mla) {
        const double kvHeads = std::ceil(double(m.kvHeads) / tp);
        g.projections[g.count++] = {double(m.heads) * m.headDim / tp + 2.0 * (kvHeads * m.headDim),
                                    h};
        return g;
    }
    const MlaShape& a = m.mlaShape;
    const double q = a.qLoraRank > 0 ? double(a.qLoraRank) : h;
    g.queryUp = {heads * double(a.qkNopeDim + a.qkRopeDim), q};
    g.keyValueUp = {heads * double(a.qkNopeDim + a.vHeadDim), double(a.kvLoraRank)};
    if (a.qLoraRank > 0) g.projections[g.count++] = {double(a.qLoraRank), h};
    g.projections[g.count++] = g.queryUp;
    g.projections[g.count++] = {double(a.kvLoraRank + a.qkRopeDim), h};
    g.projections[g.count++] = g.keyValueUp;
    return g;
}

/// The MLP's GEMMs: inner width `ffn` over `split` ranks.
inline MlpGemms mlpGemms(const Model& m, double ffn, double split) {
    const double h = double(m.hidden), inner = ffn / split;
    return {{(m.gatedMlp ? 2.0 : 1.0) * inner, h}, {h, inner}};
}

/// The MoE router, h → E logits, whole on every rank; zero for a single expert (no router).
inline GemmShape routerGemm(const Model& m) {
    if (m.moe.experts <= 1) return {};
    return {double(m.moe.experts), double(m.hidden)};
}

} // namespace madmax
