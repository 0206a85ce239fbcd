#include "madmax/pipeline.hpp"

namespace madmax {

PipelineStages distinctStages(const Scenario& s) {
    const Strategy& st = s.strategy;
    const int l = s.model.layers;
    PipelineStages out;
    if (st.pp == 1) {
        out.stage[out.count++] = {0, l, true, true};
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
    out.stage[out.count++] = {0, first, true, false};
    out.stage[out.count++] = {st.pp - 1, last, false, true};
    if (st.pp > 2) out.stage[out.count++] = {1, middle, false, false};
    return out;
}

double stageParamsPerGpu(const Model& m, const Strategy& st, const PipelineStage& stage) {
    double params = stage.layers * m.paramsPerLayer();
    if (stage.first) params += m.embeddingParams();
    if (stage.last) {
        params += double(m.hidden); // final norm
        params += m.tiedEmbeddings ? (st.pp > 1 ? m.embeddingParams() : 0.0) : m.lmHeadParams();
    }
    return params / st.tp;
}

} // namespace madmax
