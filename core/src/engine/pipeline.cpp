#include "madmax/pipeline.hpp"

#include "madmax/pipeline_schedule.hpp"
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

/// Layers on the first, each middle and the last stage: an even split of l / pp, or the
/// strategy's first/last stage counts with the rest split evenly over the other stages.
struct StageSplit {
    int first = 0, middle = 0, last = 0;
};
StageSplit stageSplit(const Scenario& s) {
    const Strategy& st = s.strategy;
    const int l = s.model.layers;
    StageSplit out{l / st.pp, l / st.pp, l / st.pp};
    if (st.firstStageLayers > 0 || st.lastStageLayers > 0) {
        const int known = st.firstStageLayers + st.lastStageLayers;
        const int others = st.pp - (st.firstStageLayers > 0) - (st.lastStageLayers > 0);
        out.middle = others > 0 ? (l - known) / others : 0;
        out.first = st.firstStageLayers > 0 ? st.firstStageLayers : out.middle;
        out.last = st.lastStageLayers > 0 ? st.lastStageLayers : out.middle;
    }
    return out;
}

/// Stage `p`'s layers [begin, begin + layers) under the split distinctStages() uses.
struct StageRange {
    int begin = 0, layers = 0;
};
StageRange stageRange(const Scenario& s, int p) {
    const int l = s.model.layers;
    if (s.strategy.pp <= 1) return {0, l};
    const StageSplit split = stageSplit(s);
    if (p == 0) return {0, split.first};
    if (p == s.strategy.pp - 1) return {l - split.last, split.last};
    return {split.first + (p - 1) * split.middle, split.middle};
}

/// `fn(begin, layers)` for each model chunk of physical stage `p`, which holds [begin, begin +
/// layers): with the interleaved schedule and an even split, chunks p, p + pp, p + 2pp, … of
/// L / (pp·vp) layers; with an uneven split, its layers cut into vp consecutive chunks.
template <typename Fn>
void forEachChunk(const Scenario& s, int p, int begin, int layers, Fn fn) {
    const Strategy& st = s.strategy;
    const int chunks = st.pp > 1 ? std::max(1, st.vp) : 1;
    if (chunks > 1 && st.firstStageLayers == 0 && st.lastStageLayers == 0) {
        const int chunk = s.model.layers / (st.pp * st.vp);
        for (int c = 0; c < chunks; ++c)
            fn((c * st.pp + p) * chunk, chunk);
        return;
    }
    const int base = layers / chunks, extra = layers % chunks;
    for (int c = 0, b = begin; c < chunks; ++c) {
        const int len = base + (c < extra ? 1 : 0);
        fn(b, len);
        b += len;
    }
}

/// With strategy.recompute_layers = n: the first n layers of each of stage p's chunks, with
/// the MoE layers among them (by position).
RecomputedLayers firstLayersOfChunks(const Scenario& s, int p, int begin, int layers) {
    const int n = s.strategy.recomputeLayers;
    const Model& m = s.model;
    RecomputedLayers out;
    forEachChunk(s, p, begin, layers, [&](int b, int len) {
        const int k = std::min(n, len);
        out.layers += k;
        out.moeLayers += m.moeLayersBefore(b + k) - m.moeLayersBefore(b);
    });
    return out;
}

/// The stage's layers whose backward recomputes their forward: none without full recompute;
/// all of them with it; with strategy.recompute_layers = n, the first n of each model chunk
/// (Megatron-Core's recompute_method "block": each chunk is its own TransformerBlock, which
/// checkpoints its layers 0 … n − 1). MoE layers are counted by position, so the leading dense
/// layers of a MoE model are the ones recomputed on the first chunk.
void markRecompute(const Scenario& s, PipelineStage& out, int begin, int physical) {
    const Strategy& st = s.strategy;
    if (st.recompute != Recompute::Full) return;
    if (st.recomputeLayers <= 0) {
        out.recomputedLayers = out.layers;
        out.recomputedMoeLayers = out.moeLayers;
        return;
    }
    const RecomputedLayers first =
        firstLayersOfChunks(s, physical < 0 ? out.index : physical, begin, out.layers);
    const int rec = std::min(first.layers, out.layers), recMoe = first.moeLayers;
    // The representative middle stage's MoE count is of consecutive layers; keep the split
    // consistent with it.
    const int dense = out.layers - out.moeLayers;
    out.recomputedLayers = rec;
    out.recomputedMoeLayers =
        std::clamp(recMoe, std::max(0, rec - dense), std::min(rec, out.moeLayers));
}

} // namespace

int largestChunkLayers(const Scenario& s) {
    const Strategy& st = s.strategy;
    const int chunks = st.pp > 1 ? std::max(1, st.vp) : 1;
    int most = 0;
    for (int p : {0, 1, st.pp - 1}) {
        if (p < 0 || p >= st.pp) continue;
        const int layers = stageRange(s, p).layers;
        most = std::max(most, (layers + chunks - 1) / chunks);
    }
    return most;
}

RecomputedLayers modelRecomputedLayers(const Scenario& s) {
    const Strategy& st = s.strategy;
    const Model& m = s.model;
    if (st.recompute != Recompute::Full) return {};
    if (st.recomputeLayers <= 0) return {m.layers, m.moeLayerCount()};
    RecomputedLayers out;
    for (int p = 0; p < st.pp; ++p) {
        const StageRange r = stageRange(s, p);
        const RecomputedLayers stage = firstLayersOfChunks(s, p, r.begin, r.layers);
        out.layers += stage.layers;
        out.moeLayers += stage.moeLayers;
    }
    return out;
}

PipelineStage stageOf(const Scenario& s, int index, int begin, int layers, bool first, bool last,
                      int physical) {
    const Model& m = s.model;
    const Strategy& st = s.strategy;
    const Frozen& f = s.workload.frozen;
    PipelineStage out = contiguous(m, index, begin, layers, first, last);
    if (f.layers <= 0) {
        markRecompute(s, out, begin, physical);
        return out;
    }
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
        markRecompute(s, out, begin, physical);
        return out;
    }
    out.frozenLayers = f.frozenIn(begin, begin + layers);
    out.frozenMoeLayers = frozenMoeIn(begin, begin + layers);
    markRecompute(s, out, begin, physical);
    return out;
}

PipelineStages distinctStages(const Scenario& s) {
    const Strategy& st = s.strategy;
    const Model& m = s.model;
    const int l = m.layers;
    // Nothing frozen (the common case, on the search's hot path): consecutive layers, inline.
    const bool frozen = s.workload.frozen.layers > 0;
    auto stage = [&](int index, int begin, int layers, bool first, bool last, int physical) {
        if (frozen) return stageOf(s, index, begin, layers, first, last, physical);
        PipelineStage out = contiguous(m, index, begin, layers, first, last);
        markRecompute(s, out, begin, physical);
        return out;
    };
    PipelineStages out;
    if (st.pp == 1) {
        out.stage[out.count++] = stage(0, 0, l, true, true, 0);
        return out;
    }
    const auto [first, middle, last] = stageSplit(s);
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
    // DualPipe: each GPU holds a stage of each direction (pipeline_schedule.hpp).
    const int copies = scheduleModel(st.schedule).paramCopies;
    p.dense *= copies;
    p.expert *= copies;
    return p;
}

double stageParamsPerGpu(const Model& m, const Strategy& st, const PipelineStage& stage) {
    return stageParamSplit(m, st, stage).total();
}

} // namespace madmax
