#include "madmax/pipeline.hpp"

#include "madmax/flops.hpp"

#include <algorithm>

namespace madmax {

PipelineStage stageOf(const Scenario& s, int index, int begin, int layers, bool first, bool last,
                      int physical) {
    const Model& m = s.model;
    const Strategy& st = s.strategy;
    const Frozen& f = s.workload.frozen;
    auto moeIn = [&](int b, int e) { return m.moeLayersBefore(e) - m.moeLayersBefore(b); };
    PipelineStage out{index, layers, moeIn(begin, begin + layers), first, last};
    auto frozenMoeIn = [&](int b, int e) {
        const int lo = std::max(b, f.firstLayer), hi = std::min(e, f.firstLayer + f.layers);
        return hi > lo ? moeIn(lo, hi) : 0;
    };
    const bool even = st.firstStageLayers == 0 && st.lastStageLayers == 0;
    if (f.layers > 0 && st.vp > 1 && even && st.pp > 1) {
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
    if (f.layers <= 0) return out;
    out.frozenLayers = f.frozenIn(begin, begin + layers);
    out.frozenMoeLayers = frozenMoeIn(begin, begin + layers);
    return out;
}

PipelineStages distinctStages(const Scenario& s) {
    const Strategy& st = s.strategy;
    const int l = s.model.layers;
    PipelineStages out;
    if (st.pp == 1) {
        out.stage[out.count++] =
            s.workload.frozen.layers == 0
                ? PipelineStage{0, l, s.model.moeLayerCount(), true, true}
                : stageOf(s, 0, 0, l, true, true);
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
    const int lastMiddleBegin = first + (st.pp - 3) * middle;
    if (s.workload.frozen.layers == 0) { // the common case, kept inline: no frozen counts
        const Model& m = s.model;
        auto moeIn = [&](int begin, int count) {
            return m.moeLayersBefore(begin + count) - m.moeLayersBefore(begin);
        };
        out.stage[out.count++] = {0, first, moeIn(0, first), true, false};
        out.stage[out.count++] = {st.pp - 1, last, moeIn(l - last, last), false, true};
        if (st.pp > 2)
            out.stage[out.count++] = {1, middle, moeIn(lastMiddleBegin, middle), false, false};
        return out;
    }
    out.stage[out.count++] = stageOf(s, 0, 0, first, true, false);
    out.stage[out.count++] = stageOf(s, st.pp - 1, l - last, last, false, true);
    const bool frozen = s.workload.frozen.layers > 0;
    if (frozen && st.vp > 1 && st.pp > 2) {
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
    if (st.pp > 2)
        out.stage[out.count++] =
            stageOf(s, 1, lastMiddleBegin, middle, false, false, st.pp - 2);
    // A stage's frozen count over the middle stages rises, holds and falls (one contiguous
    // range): the fewest sit at one end, so the first middle stage is the other candidate.
    if (st.pp > 3 && frozen) out.stage[out.count++] = stageOf(s, 1, first, middle, false, false, 1);
    return out;
}

StageParams stageTrainableParamSplit(const Model& m, const Strategy& st, const Frozen& f,
                                     const PipelineStage& stage) {
    StageParams p = stageParamSplit(m, st, stage);
    if (!f.any()) return p;
    const int frozenDense = stage.frozenLayers - stage.frozenMoeLayers;
    const StageParams dl = layerParamsPerGpu(m, st, false), ml = layerParamsPerGpu(m, st, true);
    p.dense -= frozenDense * dl.dense + stage.frozenMoeLayers * ml.dense;
    p.expert -= stage.frozenMoeLayers * ml.expert;
    if (stage.first && f.embedding) p.dense -= m.embeddingParams() / st.tp;
    if (stage.last && f.head) {
        double head = double(m.hidden);
        head += m.tiedEmbeddings ? (st.pp > 1 ? m.embeddingParams() : 0.0) : m.lmHeadParams();
        p.dense -= head / st.tp;
    }
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
    const int moeL = stage.moeLayers, denseL = stage.layers - stage.moeLayers;
    const StageParams dl = layerParamsPerGpu(m, st, false), ml = layerParamsPerGpu(m, st, true);
    StageParams p{denseL * dl.dense + moeL * ml.dense, moeL * ml.expert};
    double edge = 0;
    if (stage.first) edge += m.embeddingParams();
    if (stage.last) {
        edge += double(m.hidden); // final norm
        edge += m.tiedEmbeddings ? (st.pp > 1 ? m.embeddingParams() : 0.0) : m.lmHeadParams();
    }
    p.dense += edge / st.tp;
    return p;
}

double stageParamsPerGpu(const Model& m, const Strategy& st, const PipelineStage& stage) {
    return stageParamSplit(m, st, stage).total();
}

} // namespace madmax
