// How the work is split: parallel degrees, sharding, recompute, schedule, placement.
#pragma once

#include "madmax/types.hpp"

#include <array>
#include <climits>

namespace madmax {

struct Strategy {
    int tp = 1; ///< tensor parallel
    int pp = 1; ///< pipeline parallel stages
    int vp = 1; ///< virtual stages (model chunks) per GPU; > 1 only with the interleaved schedule
    int cp = 1; ///< context parallel
    int dp = 1; ///< data parallel replicas (derived from the GPU count when a file omits it)
    int microBatch = 1; ///< sequences per micro-batch per GPU
    int zeroStage = 0;  ///< 0..3 (3 = FSDP)
    int shardGroup =
        0; ///< hybrid sharding: ZeRO shards over groups of this many DP ranks (0 = all)
    bool sequenceParallel = false;
    bool tpCommOverlap = false;
    bool dpOverlap = true; ///< overlap bucketed gradient reduction with the backward pass
    double bucketBytes = 40e6;
    Recompute recompute = Recompute::None;
    PipelineSchedule schedule = PipelineSchedule::OneFOneB;
    int firstStageLayers = 0; ///< uneven split: layers on the first stage (0 = even split)
    int lastStageLayers = 0;  ///< uneven split: layers on the last stage (0 = even split)
    /// Rank order, innermost first (Megatron default: TP, CP, EP, DP, PP).
    std::array<ParallelDim, kParallelDimCount> placement{
        ParallelDim::TP, ParallelDim::CP, ParallelDim::EP, ParallelDim::DP, ParallelDim::PP};

    int degree(ParallelDim d) const {
        switch (d) {
        case ParallelDim::TP:
            return tp;
        case ParallelDim::CP:
            return cp;
        case ParallelDim::EP:
            return 1;
        case ParallelDim::DP:
            return dp;
        case ParallelDim::PP:
            return pp;
        }
        return 1;
    }
    int effectiveShardGroup() const { return shardGroup > 0 ? shardGroup : dp; }
    /// Ranks that reduce gradients: DP × CP (each CP rank saw different tokens).
    int gradReduceRanks() const { return dp * cp; }
    /// Ranks a ZeRO stage shards over: the shard group's DP ranks × CP.
    int zeroShardRanks() const { return effectiveShardGroup() * cp; }
};

/// GPUs one data-parallel replica spans: tp · pp · cp, in wide arithmetic that saturates at
/// LLONG_MAX instead of wrapping (each degree passes its own range check; their product may not).
inline long long replicaGpus(long long tp, long long pp, long long cp) {
    long long out = 1;
    for (long long d : {tp, pp, cp})
        if (__builtin_mul_overflow(out, d, &out)) return LLONG_MAX;
    return out;
}
inline long long replicaGpus(const Strategy& st) { return replicaGpus(st.tp, st.pp, st.cp); }

/// The data-parallel degree that fills `gpus` with replicas of tp · pp · cp GPUs
/// (DP = GPUs ÷ (TP·PP·CP)); 0 when a degree is below 1 or the replica does not divide the GPUs.
/// The one place this fact is computed.
inline int dataParallelDegree(long long gpus, long long tp, long long pp, long long cp) {
    if (tp < 1 || pp < 1 || cp < 1 || gpus < 1) return 0;
    const long long inner = replicaGpus(tp, pp, cp);
    if (inner > gpus || gpus % inner != 0 || gpus / inner > INT_MAX) return 0;
    return int(gpus / inner);
}
inline int dataParallelDegree(long long gpus, const Strategy& st) {
    return dataParallelDegree(gpus, st.tp, st.pp, st.cp);
}

} // namespace madmax
