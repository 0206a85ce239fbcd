// How the work is split: parallel degrees, sharding, recompute, schedule, placement.
#pragma once

#include "madmax/types.hpp"

#include <array>

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
};

} // namespace madmax
