// A recommendation model's shape (docs/developer/workloads.md "DLRM"): tables, MLPs, the interaction, and the
// parameters and FLOPs they add up to; the sharding and interaction names files use.
#include "dlrm/dlrm_engine.hpp"

#include "engine/op_cost.hpp"
#include "madmax/collectives.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace madmax {

std::string_view toString(DlrmInteraction k) {
    switch (k) {
    case DlrmInteraction::Dot:
        return "dot";
    case DlrmInteraction::Dcnv2:
        return "dcnv2";
    case DlrmInteraction::Transformer:
        return "transformer";
    }
    return "dot";
}

std::string_view toString(EmbSharding k) {
    switch (k) {
    case EmbSharding::TableWise:
        return "tw";
    case EmbSharding::RowWise:
        return "rw";
    case EmbSharding::ColumnWise:
        return "cw";
    case EmbSharding::TableRowWise:
        return "twrw";
    case EmbSharding::DataParallel:
        return "dp";
    }
    return "tw";
}

std::optional<EmbSharding> parseEmbSharding(std::string_view s) {
    if (s == "tw") return EmbSharding::TableWise;
    if (s == "rw") return EmbSharding::RowWise;
    if (s == "cw") return EmbSharding::ColumnWise;
    if (s == "twrw") return EmbSharding::TableRowWise;
    if (s == "dp") return EmbSharding::DataParallel;
    return std::nullopt;
}

std::string_view toString(EmbOptimizer k) {
    switch (k) {
    case EmbOptimizer::RowwiseAdagrad:
        return "rowwise_adagrad";
    case EmbOptimizer::Adam:
        return "adam";
    case EmbOptimizer::Sgd:
        return "sgd";
    }
    return "rowwise_adagrad";
}

int DlrmShape::tableCount() const {
    int n = 0;
    for (const auto& t : tables)
        n += t.count;
    return n;
}

double DlrmShape::tableParams() const {
    double p = 0;
    for (const auto& t : tables)
        p += double(t.count) * double(t.rows) * t.dim;
    return p;
}

double detail::bottomOut(const DlrmShape& d) {
    return d.bottomMlp.empty() ? double(d.denseFeatures) : double(d.bottomMlp.back());
}

double detail::concatWidth(const DlrmShape& d) {
    double w = detail::bottomOut(d);
    for (const auto& t : d.tables)
        w += double(t.count) * t.dim;
    return w;
}

double detail::mlpSum(double in, const std::vector<std::int64_t>& widths, bool flops) {
    double s = 0;
    for (std::int64_t w : widths) {
        s += flops ? 2.0 * in * double(w) : in * double(w) + double(w);
        in = double(w);
    }
    return s;
}

using detail::bottomOut;
using detail::concatWidth;
using detail::mlpSum;

double DlrmShape::interactionOutput() const {
    const double F = featureCount();
    switch (interaction) {
    case DlrmInteraction::Dot:
        // Naumov et al. 2019: the bottom output next to the F(F−1)/2 distinct dot products.
        return bottomOut(*this) + F * (F - 1) / 2.0;
    case DlrmInteraction::Dcnv2:
        return concatWidth(*this);
    case DlrmInteraction::Transformer:
        return F * bottomOut(*this);
    }
    return 0;
}

double DlrmShape::denseParams() const {
    double p = mlpSum(double(denseFeatures), bottomMlp, false);
    const double D = concatWidth(*this), d = bottomOut(*this);
    if (interaction == DlrmInteraction::Dcnv2)
        p += dcnLayers * (dcnLowRank > 0 ? 2.0 * D * dcnLowRank + D : D * D + D);
    if (interaction == DlrmInteraction::Transformer)
        p += transformerLayers * (12.0 * d * d + 13.0 * d); // QKV, out, 4× MLP; biases, norms
    const double top = mlpSum(interactionOutput(), topMlp, false);
    if (topExperts > 0) return p + topExperts * top + interactionOutput() * topExperts;
    return p + top;
}

double DlrmShape::denseForwardFlopsPerSample() const {
    double f = mlpSum(double(denseFeatures), bottomMlp, true);
    const double F = featureCount(), D = concatWidth(*this), d = bottomOut(*this);
    switch (interaction) {
    case DlrmInteraction::Dot:
        f += 2.0 * F * F * d;
        break; // batched (F×d)·(d×F)
    case DlrmInteraction::Dcnv2:
        f += dcnLayers * (dcnLowRank > 0 ? 4.0 * D * dcnLowRank : 2.0 * D * D);
        break;
    case DlrmInteraction::Transformer:
        f += transformerLayers * (2.0 * F * 12.0 * d * d + 4.0 * F * F * d);
        break;
    }
    const double top = mlpSum(interactionOutput(), topMlp, true);
    if (topExperts > 0) return f + topK * top + 2.0 * interactionOutput() * topExperts;
    return f + top;
}

} // namespace madmax
