#include "madmax/pipeline.hpp"

namespace madmax {

PipelineStages distinctStages(const Scenario& s) {
    const Strategy& st = s.strategy;
    const int l = s.model.layers;
    PipelineStages out;
    if (st.pp == 1) {
        out.stage[out.count++] = {0, l, s.model.moeLayerCount(), true, true};
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
    const Model& m = s.model;
    auto moeIn = [&](int begin, int count) {
        return m.moeLayersBefore(begin + count) - m.moeLayersBefore(begin);
    };
    const int lastMiddleBegin = first + (st.pp - 3) * middle;
    out.stage[out.count++] = {0, first, moeIn(0, first), true, false};
    out.stage[out.count++] = {st.pp - 1, last, moeIn(l - last, last), false, true};
    if (st.pp > 2) out.stage[out.count++] = {1, middle, moeIn(lastMiddleBegin, middle), false, false};
    return out;
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
