#include "madmax/layer_gemms.hpp"

#include <cmath>

namespace madmax {

AttentionGemms attentionGemms(const Model& m, double tp) {
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

MlpGemms mlpGemms(const Model& m, double ffn, double split) {
    const double h = double(m.hidden), inner = ffn / split;
    return {{(m.gatedMlp ? 2.0 : 1.0) * inner, h}, {h, inner}};
}

GemmShape routerGemm(const Model& m) {
    if (m.moe.experts <= 1) return {};
    return {double(m.moe.experts), double(m.hidden)};
}

} // namespace madmax
