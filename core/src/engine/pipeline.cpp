#include "madmax/pipeline.hpp"

#include "madmax/flops.hpp"

#include <algorithm>

namespace madmax {

namespace {

/// The stage holding consecutive layers [begin, begin + layers), nothing frozen.
PipelineStage contiguous(const Model& m, int index, int begin, int layers, bool first, bool last) {
    return {index, layers, m.moeLayersBefore(begin + layers) - m.moeLayersBefore(begin), first,
            last};
}

/// The final norm and the LM head (or, tied with pp > 1, its copy of the embedding): the last
/// stage's edge parameters, all of TP.
double headParams(const Model& m, const Strategy& st) {
    return double(m.hidden) +
           (m.tiedEmbeddings ? (st.pp > 1 ? m.embeddingParams() : 0.0) : m.lmHeadParams());
}

} // namespace

PipelineStage stageOf(const Scenario& s, int index, int begin, int layers, bool first, bool last,
                      int physical) {
    const Model& m = s.model;
    const Strategy& st = s.strategy;
    const Frozen& f = s.workload.frozen;
    PipelineStage out = contiguous(m, index, begin, layers, first, last);
    if (f.layers <= 0) return out;
    auto moeIn = [&](int b, int e) { return m.moeLayersBefore(e) - m.moeLayersBefore(b); };
    auto frozenMoeIn = [&](int b, int e) {
        const int lo = std::max(b, f.firstLayer), hi = std::min(e, f.firstLayer + f.layers);
        return hi > lo ? moeIn(lo, hi) : 0;
    };
    const bool even = st.firstStageLayers == 0 && st.lastStageLayers == 0;
    if (st.vp > 1 && even && st.pp > 1) {
        // Interleaved: stage p holds chunks p, p + pp, p + 2pp, … of L / (pp·vp) layers each,
        // so a frozen range spreads over every stage (and its MoE layers are counted alike).
        const int chunk = m.layers / (st.pp * st.vp);
        const int p = physical < 0 ? index : physical;
        out.moeLayers = 0;
        for (int c = 0; c < st.vp; ++c) {
            const int b = (c * st.pp + p) * chunk;
            out.moeLayers += moeIn(b, b + chunk);
            out.frozenLayers += f.frozenIn(b, b + chunk);
            out.frozenMoeLayers += frozenMoeIn(b, b + chunk);
        }
        return out;
    }
    out.frozenLayers = f.frozenIn(begin, begin + layers);
    out.frozenMoeLayers = frozenMoeIn(begin, begin + layers);
    return out;
}

PipelineStages distinctStages(const Scenario& s) {
    const Strategy& st = s.strategy;
    const Model& m = s.model;
    const int l = m.layers;
    // Nothing frozen (the common case, on the search's hot path): consecutive layers, inline.
    const bool frozen = s.workload.frozen.layers > 0;
    auto stage = [&](int index, int begin, int layers, bool first, bool last, int physical) {
        return frozen ? stageOf(s, index, begin, layers, first, last, physical)
                      : contiguous(m, index, begin, layers, first, last);
    };
    PipelineStages out;
    if (st.pp == 1) {
        out.stage[out.count++] = stage(0, 0, l, true, true, 0);
        return out;
    }
    int first = l / st.pp, middle = first, last = first;
    if (st.firstStageLayers > 0 || st.lastStageLayers > 0) {
        const int known = st.firstStageLayers + st.lastStageLayers;
        const int others = st.pp - (st.firstStageLayers > 0) - (st.lastStageLayers > 0);
        middle = others > 0 ? (l - known) / others : 0;
        first = st.firstStageLayers > 0 ? st.firstStageLayers : middle;
        last = st.lastStageLayers > 0 ? st.lastStageLayers : middle;
    }
    out.stage[out.count++] = stage(0, 0, first, true, false, 0);
    out.stage[out.count++] = stage(st.pp - 1, l - last, last, false, true, st.pp - 1);
    if (st.pp == 2) return out;
    if (frozen && st.vp > 1) {
        // Interleaved with frozen layers: the middle stage with the fewest frozen layers (the
        // most work; ties to the later stage) stands for the middle ones.
        PipelineStage best = stageOf(s, 1, first, middle, false, false, 1);
        for (int p = 2; p <= st.pp - 2; ++p) {
            const PipelineStage c = stageOf(s, 1, first + (p - 1) * middle, middle, false, false, p);
            if (c.frozenLayers <= best.frozenLayers) best = c;
        }
        out.stage[out.count++] = best;
        return out;
    }
    // The last middle stage: the one with the most MoE layers.
    out.stage[out.count++] =
        stage(1, first + (st.pp - 3) * middle, middle, false, false, st.pp - 2);
    // A stage's frozen count over the middle stages rises, holds and falls (one contiguous
    // range): the fewest sit at one end, so the first middle stage is the other candidate.
    if (st.pp > 3 && frozen) out.stage[out.count++] = stageOf(s, 1, first, middle, false, false, 1);
    return out;
}

StageParams layersParams(const Model& m, const Strategy& st, int denseLayers, int moeLayers) {
    const StageParams dl = layerParamsPerGpu(m, st, false), ml = layerParamsPerGpu(m, st, true);
    return {denseLayers * dl.dense + moeLayers * ml.dense, moeLayers * ml.expert};
}

StageParams stageTrainableParamSplit(const Model& m, const Strategy& st, const Frozen& f,
                                     const PipelineStage& stage) {
    StageParams p = stageParamSplit(m, st, stage);
    if (!f.any()) return p;
    const StageParams frozenLayers = layersParams(
        m, st, stage.frozenLayers - stage.frozenMoeLayers, stage.frozenMoeLayers);
    p.dense -= frozenLayers.dense;
    p.expert -= frozenLayers.expert;
    if (stage.first && f.embedding) p.dense -= m.embeddingParams() / st.tp;
    if (stage.last && f.head) p.dense -= headParams(m, st) / st.tp;
    // Tied embeddings on one stage: the one matrix trains unless both uses are frozen.
    if (m.tiedEmbeddings && st.pp == 1 && stage.first && f.embedding != f.head)
        p.dense += f.embedding ? m.embeddingParams() / st.tp : 0.0;
    p.dense = std::max(0.0, p.dense);
    p.expert = std::max(0.0, p.expert);
    // LoRA: the adapters of the stage's layers train (split over TP like their base layers).
    if (f.lora())
        p.dense += loraParamsOf(m, f, stage.layers - stage.moeLayers, stage.moeLayers) / st.tp;
    return p;
}

StageParams layerParamsPerGpu(const Model& m, const Strategy& st, bool moeLayer) {
    if (!moeLayer) return {m.paramsPerLayer() / st.tp, 0.0};
    return {(m.attentionParamsPerLayer() + m.moeSharedParamsPerLayer()) / st.tp,
            m.moeRoutedParamsPerLayer() / (double(st.ep) * st.etp)};
}

StageParams stageParamSplit(const Model& m, const Strategy& st, const PipelineStage& stage) {
    StageParams p = layersParams(m, st, stage.layers - stage.moeLayers, stage.moeLayers);
    const double edge =
        (stage.first ? m.embeddingParams() : 0.0) + (stage.last ? headParams(m, st) : 0.0);
    p.dense += edge / st.tp;
    return p;
}

double stageParamsPerGpu(const Model& m, const Strategy& st, const PipelineStage& stage) {
    return stageParamSplit(m, st, stage).total();
}

} // namespace madmax
