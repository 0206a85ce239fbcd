#include "engine/groups.hpp"

#include <algorithm>

namespace madmax::detail {

namespace {

long long strideOf(const Strategy& st, ParallelDim dim) {
    long long stride = 1;
    for (ParallelDim d : st.placement) {
        if (d == dim) break;
        stride *= st.degree(d);
    }
    return stride;
}

} // namespace

Groups makeGroups(const Scenario& s) {
    const Strategy& st = s.strategy;
    Groups g;
    g.tp = layoutGroup(s.system, st.tp, strideOf(st, ParallelDim::TP));
    g.cp = layoutGroup(s.system, st.cp, strideOf(st, ParallelDim::CP));
    // Gradients are reduced over DP × CP (each CP rank saw different tokens). The ZeRO shard
    // group is its innermost `shardGroup × cp` ranks; hybrid sharding replicates across the rest.
    const long long dpStride = strideOf(st, ParallelDim::DP);
    const long long cpStride = strideOf(st, ParallelDim::CP);
    const long long innerStride = st.cp > 1 ? std::min(dpStride, cpStride) : dpStride;
    const int shard = st.effectiveShardGroup();
    g.gradReduce = layoutGroup(s.system, st.gradReduceRanks(), innerStride);
    g.dpShard = layoutGroup(s.system, st.zeroShardRanks(), innerStride);
    g.dpReplicas = layoutGroup(s.system, st.dp / shard, dpStride * shard);
    g.ppStride = strideOf(st, ParallelDim::PP);
    if (s.model.isMoe()) {
        const long long edp = std::max(1LL, st.expertDataParallel());
        const int eshard = expertShardRanks(st);
        const long long epStride = st.etp, edpStride = 1LL * st.etp * st.ep;
        g.ep = layoutGroup(s.system, st.ep, epStride);
        g.edpReduce = layoutGroup(s.system, int(edp), edpStride);
        g.edpShard = layoutGroup(s.system, eshard, edpStride);
        g.edpReplicas = layoutGroup(s.system, int(edp / eshard), edpStride * eshard);
    }
    return g;
}

} // namespace madmax::detail
