#include "madmax/flops.hpp"
#include "madmax/layer_gemms.hpp"

#include <algorithm>

namespace madmax {

double attentionGemmFlopsPerToken(const Model& m) {
    // Every projection weight is used once per token (madmax/layer_gemms.hpp, one rank).
    const AttentionGemms g = attentionGemms(m, 1.0);
    double flops = g.output.flopsPerRow();
    for (int i = 0; i < g.count; ++i) flops += g.projections[i].flopsPerRow();
    return flops;
}

double layerGemmFlopsPerToken(const Model& m) {
    return attentionGemmFlopsPerToken(m) + mlpGemms(m, double(m.ffnHidden), 1.0).flopsPerRow();
}

double moeLayerGemmFlopsPerToken(const Model& m) {
    const double experts = double(m.moe.topK + m.moe.sharedExperts) *
                           mlpGemms(m, double(m.moe.expertFfn), 1.0).flopsPerRow();
    return attentionGemmFlopsPerToken(m) + experts + routerGemm(m).flopsPerRow();
}

double attentionFlopsPerScore(const Model& m) {
    return 2.0 * double(m.qkHeadDim() + m.vHeadDim());
}

double windowedLayerFraction(const Model& m) {
    if (m.slidingWindow <= 0) return 0.0;
    return double((m.layers + m.slidingWindowEvery - 1) / m.slidingWindowEvery) / m.layers;
}

double attentionFlopsPerToken(const Model& m, double context) {
    const double perKey = m.heads * attentionFlopsPerScore(m);
    const double frac = windowedLayerFraction(m);
    const double windowed = std::min(context, double(m.slidingWindow));
    return perKey * ((1.0 - frac) * context + frac * windowed);
}

namespace {
/// Forward FLOPs per token at the network's edges: the head (LM head 2hV, or a ViT's
/// classifier on the class token, once per image) and a ViT's patch projection (C·p² → h per
/// patch token).
struct EdgeFlops {
    double head = 0, patch = 0;
};
EdgeFlops edgeFlopsPerToken(const Model& m) {
    if (!m.vit) return {2.0 * double(m.hidden) * double(m.vocab), 0.0};
    const double T = double(m.vitShape.tokens());
    const double p = double(m.vitShape.channels) * m.vitShape.patchSize * m.vitShape.patchSize;
    return {2.0 * double(m.hidden) * double(m.vitShape.classes) / T,
            2.0 * (T - 1.0) * p * double(m.hidden) / T};
}
} // namespace

double lmHeadFlopsPerToken(const Model& m) {
    const EdgeFlops e = edgeFlopsPerToken(m);
    return e.head + e.patch;
}

double layersGemmFlopsPerToken(const Model& m) {
    const int moeL = m.moeLayerCount();
    return (m.layers - moeL) * layerGemmFlopsPerToken(m) + moeL * moeLayerGemmFlopsPerToken(m);
}

namespace {
double forwardFlopsPerToken(const Model& m, double seqLen) {
    return layersGemmFlopsPerToken(m) + m.layers * attentionFlopsPerToken(m, seqLen) +
           lmHeadFlopsPerToken(m);
}
} // namespace

double modelFlopsPerStep(const Model& m, double globalBatch, double seqLen) {
    return 3.0 * globalBatch * seqLen * forwardFlopsPerToken(m, seqLen);
}

double recomputeFlopsPerToken(const Model& m, int denseLayers, int moeLayers, double seqLen) {
    return denseLayers * layerGemmFlopsPerToken(m) + moeLayers * moeLayerGemmFlopsPerToken(m) +
           (denseLayers + moeLayers) * attentionFlopsPerToken(m, seqLen);
}

double hardwareFlopsPerStep(const Model& m, double globalBatch, double seqLen, Recompute r) {
    const double tokens = globalBatch * seqLen;
    double extra = 0;
    if (r == Recompute::Full)
        extra = layersGemmFlopsPerToken(m) + m.layers * attentionFlopsPerToken(m, seqLen);
    else if (r == Recompute::Selective)
        extra = m.layers * attentionFlopsPerToken(m, seqLen);
    return modelFlopsPerStep(m, globalBatch, seqLen) + tokens * extra;
}

double loraParamsPerLayer(const Model& m, const Frozen& f, bool moeLayer) {
    if (!f.lora()) return 0.0;
    const double r = f.loraRank, h = double(m.hidden);
    const double q = double(m.heads) * m.qkHeadDim(), k = double(m.kvHeads) * m.qkHeadDim(),
                 v = double(m.kvHeads) * m.vHeadDim(), o = double(m.heads) * m.vHeadDim();
    double p = 0;
    if (f.loraTargets != LoraTargets::Mlp) p += r * ((h + q) + (h + k) + (h + v) + (o + h));
    if (f.loraTargets != LoraTargets::Attention && !moeLayer) {
        const double ff = double(m.ffnHidden);
        p += r * (h + ff) * (m.gatedMlp ? 2.0 : 1.0) + r * (ff + h);
    }
    return p;
}

double loraParamsOf(const Model& m, const Frozen& f, int denseLayers, int moeLayers) {
    return denseLayers * loraParamsPerLayer(m, f, false) +
           moeLayers * loraParamsPerLayer(m, f, true);
}

double loraParams(const Model& m, const Frozen& f) {
    return loraParamsOf(m, f, m.layers - m.moeLayerCount(), m.moeLayerCount());
}

namespace {
/// Per token of a training step under `f`: GEMM FLOPs and attention-core FLOPs (full,
/// non-causal convention), each forward + backward, and the attention layers that run a
/// backward (for recompute).
struct TrainingWork {
    double gemm = 0, attention = 0, gemmRecompute = 0;
    int backLayers = 0;
};

TrainingWork trainingWork(const Model& m, const Frozen& f, double seqLen) {
    // Forward everything; backward per layer: the input gradient (one GEMM pass, the attention
    // core's backward twice its forward) where something below trains, the weight gradient
    // (one more GEMM pass) where the layer trains; recompute only where a backward runs.
    const int moeAll = m.moeLayerCount();
    const int moeFrozen =
        m.moeLayersBefore(f.firstLayer + f.layers) - m.moeLayersBefore(f.firstLayer);
    const double G = layerGemmFlopsPerToken(m), Gm = moeLayerGemmFlopsPerToken(m);
    const double A = attentionFlopsPerToken(m, seqLen);
    const double trainGemm =
        (m.layers - moeAll - (f.layers - moeFrozen)) * G + (moeAll - moeFrozen) * Gm;
    const double frozenGemm = (f.layers - moeFrozen) * G + moeFrozen * Gm;
    const bool dgradFrozen = f.frozenLayersNeedDgrad();
    TrainingWork w;
    w.backLayers = (m.layers - f.layers) + (dgradFrozen ? f.layers : 0);
    // The edges: the LM head (2hV) or, for a ViT, the classifier and the patch projection.
    const bool belowHeadTrains = f.belowHeadTrains(m.layers);
    const auto [head, patch] = edgeFlopsPerToken(m);
    // LoRA adapters: 2 FLOPs per adapter parameter and token forward, input and weight
    // gradients backward.
    const double lora = 2.0 * loraParams(m, f);
    w.gemm = layersGemmFlopsPerToken(m) + head + patch + lora +          // forward
             2.0 * trainGemm + (dgradFrozen ? frozenGemm : 0.0) +          // layers' backward
             head * ((f.head ? 0.0 : 1.0) + (belowHeadTrains ? 1.0 : 0.0)) + // head's backward
             (f.embedding ? 0.0 : patch) + // the patch projection: its weight gradient only
             2.0 * lora;
    w.attention = m.layers * A + 2.0 * w.backLayers * A;
    w.gemmRecompute = trainGemm + (dgradFrozen ? frozenGemm : 0.0) + lora;
    return w;
}
} // namespace

double trainingFlopsPerStep(const Model& m, const Frozen& f, double globalBatch, double seqLen,
                            Recompute r, bool hardware) {
    if (!f.any()) {
        return hardware ? hardwareFlopsPerStep(m, globalBatch, seqLen, r)
                        : modelFlopsPerStep(m, globalBatch, seqLen);
    }
    const TrainingWork w = trainingWork(m, f, seqLen);
    const double A = attentionFlopsPerToken(m, seqLen);
    double extra = 0;
    if (hardware && r == Recompute::Full)
        extra = w.gemmRecompute + w.backLayers * A;
    else if (hardware && r == Recompute::Selective)
        extra = w.backLayers * A;
    return globalBatch * seqLen * (w.gemm + w.attention + extra);
}

double trainingGemmFlopsPerStep(const Model& m, const Frozen& f, double globalBatch,
                                double seqLen) {
    if (!f.any())
        return 3.0 * globalBatch * seqLen * (layersGemmFlopsPerToken(m) + lmHeadFlopsPerToken(m));
    return globalBatch * seqLen * trainingWork(m, f, seqLen).gemm;
}

double megatronSc21FlopsPerStep(const Model& m, double B, double s) {
    const double l = m.layers, h = double(m.hidden), V = double(m.vocab);
    return 96.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h));
}

} // namespace madmax
