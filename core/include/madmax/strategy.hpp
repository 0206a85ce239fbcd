// How the work is split: parallel degrees, sharding, recompute, schedule, placement.
#pragma once

#include "madmax/dlrm.hpp"
#include "madmax/types.hpp"

#include <array>
#include <climits>
#include <string>

namespace madmax {

/// How MoE tokens reach their experts (docs/developer/workloads.md "Dispatch / combine all-to-all").
enum class MoeDispatcher : std::uint8_t {
    AllToAll, ///< one flat all-to-all over the EP group (Megatron-Core "alltoall")
    DeepEp,   ///< hierarchical: once per destination node over RDMA, then NVLink fan-out
};

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
    /// The backward of a column-parallel linear (QKV, MLP up) overlaps its TP collectives with
    /// its own GEMMs: the input gradient's all-reduce (or, with SP, reduce-scatter) runs beside
    /// the weight-gradient GEMM, and with SP the input's re-gather beside the input-gradient
    /// GEMM (Megatron-LM since September 2021, Transformer Engine's Linear). Off: in series, as
    /// Megatron-LM ran them before (the SC21 runs).
    bool tpGradOverlap = true;
    bool dpOverlap = true; ///< overlap bucketed gradient reduction with the backward pass
    /// The step is captured in CUDA graphs: the host replays each graph in one launch, so the
    /// per-kernel host cost (calibration `host_op_us`) never stalls the GPU.
    bool cudaGraphs = false;
    double bucketBytes = 40e6;
    Recompute recompute = Recompute::None;
    /// With recompute Full: recompute the first n layers of each model chunk and keep the
    /// others' activations (Megatron-Core recompute_method "block", recompute_num_layers = n);
    /// 0 recomputes every layer.
    int recomputeLayers = 0;
    /// Activation offloading (Megatron-Core cpu_offloading_num_layers, Transformer Engine's
    /// double-buffered offload handler): the first n layers' activations go to host memory in
    /// the forward pass and come back in the backward, over system.host_link_gbps; 0 = off.
    int offloadLayers = 0;
    PipelineSchedule schedule = PipelineSchedule::OneFOneB;
    int firstStageLayers = 0; ///< uneven split: layers on the first stage (0 = even split)
    int lastStageLayers = 0;  ///< uneven split: layers on the last stage (0 = even split)
    /// Rank order, innermost first (Megatron default: TP, CP, EP, DP, PP).
    std::array<ParallelDim, kParallelDimCount> placement{
        ParallelDim::TP, ParallelDim::CP, ParallelDim::EP, ParallelDim::DP, ParallelDim::PP};

    // Mixture of experts (Megatron-Core parallel folding: the experts use ETP × EP × EDP on
    // the same GPUs as attention's TP × CP × DP, per pipeline stage).
    int ep = 1;  ///< expert parallel: routed experts split over this many ranks
    int etp = 1; ///< expert tensor parallel: each expert's FFN split over this many ranks
    MoeDispatcher dispatcher = MoeDispatcher::AllToAll;
    bool moeA2aOverlap = false; ///< all-to-all overlaps another micro-batch's compute (DualPipe)
    bool moeFp8Dispatch = false; ///< dispatch in FP8 (combine stays 16-bit; DeepEP)
    /// Fused grouped-MLP kernels (Transformer Engine ≥ 2.15 CuTe DSL, Megatron-Core
    /// `cutedsl_fused_grouped_mlp`): the activation with its clamp, bias and routing weight in
    /// the grouped GEMM's epilogue, its gradient in the down projection's, and token counts kept
    /// on the GPU (no host sync at the router).
    bool moeFusedMlp = false;
    int moeNodeLimit = 0;        ///< node-limited routing: each token to ≤ this many nodes (0 = off)
    /// Serving: extra expert copies beyond the model's routed experts (EPLB's redundant experts,
    /// DeepSeek-V3 report §3.4: the hottest experts duplicated so EP ranks are balanced); the
    /// EP group holds experts + this many, evenly.
    int redundantExperts = 0;
    /// Share of the SMs that communication kernels hold while they overlap compute (DeepEP
    /// normal kernels: 20 of 132 on H800 ≈ 0.15); a compute slowdown during the overlap.
    double moeCommSmFraction = 0.15;
    /// ZeRO-3 / FSDP as frameworks run it: prefetch depth 1 gathers the next layer's weights
    /// while this one computes (FSDP's default), 0 gathers each layer just before it runs.
    int fsdpPrefetch = 1;
    /// ZeRO-3 collectives per layer: 1 = one flat buffer per layer (FSDP, Megatron), more =
    /// one per weight tensor (DeepSpeed ZeRO-3 without bucketing): each pays its own latency.
    bool fsdpPerTensor = false;
    /// How ZeRO-3's parameter coordinator schedules its gathers (docs/reference/scenario.md
    /// "ZeRO-3 as DeepSpeed ran it before v0.6"). Overlapped: the collectives above run behind
    /// the compute (fsdp_prefetch, fsdp_unit). DeepSpeedLegacy: DeepSpeed's stage 3 up to
    /// v0.5.10 (January 2022): each linear's weight gathered on its own, the host synchronising
    /// with the whole device before every gathered module, only the next prefetch bucket
    /// (5·10⁷ elements) gathered behind the current module, the gradients reduced in a bucket
    /// the next module's synchronisation waits for.
    FsdpStyle fsdpStyle = FsdpStyle::Overlapped;
    /// DLRM: the embedding sharding plan (the dense part is data-parallel over every GPU).
    DlrmPlan dlrm;

    /// Expert-data-parallel degree: TP·CP·DP ÷ (ETP·EP); 0 when it does not divide.
    long long expertDataParallel() const {
        const long long ranks = 1LL * tp * cp * dp, inner = 1LL * etp * ep;
        return inner >= 1 && ranks % inner == 0 ? ranks / inner : 0;
    }

    int degree(ParallelDim d) const {
        switch (d) {
        case ParallelDim::TP:
            return tp;
        case ParallelDim::CP:
            return cp;
        case ParallelDim::EP:
            return 1; // carved out of DP × CP: it adds no ranks to the attention grid
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

/// The recompute as a report states it: "none", "selective", "full", or "full (first n layers
/// of each chunk)" with strategy.recompute_layers.
inline std::string recomputeLabel(const Strategy& st) {
    std::string out(toString(st.recompute));
    if (st.recompute == Recompute::Full && st.recomputeLayers > 0)
        out += " (first " + std::to_string(st.recomputeLayers) +
               (st.recomputeLayers == 1 ? " layer" : " layers") + " of each chunk)";
    return out;
}

/// Ranks the routed experts' gradients are reduced and ZeRO-sharded over: the expert-data-
/// parallel group (EDP), restricted to the ZeRO shard group when hybrid sharding is on.
inline int expertShardRanks(const Strategy& st) {
    const long long edp = st.expertDataParallel();
    if (edp < 1) return 1;
    if (st.shardGroup > 0) {
        const long long g = 1LL * st.shardGroup * st.cp * st.tp / (1LL * st.ep * st.etp);
        if (g >= 1 && g < edp) return int(g);
    }
    return int(edp);
}

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

/// The pipeline schedule `vp` model chunks per GPU imply (Megatron-Core's rule): more than one
/// chunk is the interleaved schedule, one chunk is 1F1B. The one place the rule is written; the
/// parser's default, the search's specs and the explorer's sliders read it.
inline PipelineSchedule scheduleForChunks(int vp) {
    return vp > 1 ? PipelineSchedule::Interleaved : PipelineSchedule::OneFOneB;
}

} // namespace madmax
