// Once per step: the data-parallel gradient synchronisation beside the backward (DDP buckets,
// ZeRO-1/2 reduce-scatter and gather, hybrid sharding's replica all-reduce), the optimizer's
// HBM-bound update, and the step's totals, throughput and FLOP utilisation.
#include "training/step.hpp"

#include "madmax/flops.hpp"
#include "madmax/memory.hpp"

#include <algorithm>
#include <cmath>

namespace madmax::detail {

namespace {

/// Exposed time of a bucketed gradient reduction overlapping a backward pass of `overlapS`:
/// buckets become ready at an even rate and are reduced one at a time; what outlasts the
/// backward pass is exposed (PyTorch DDP, Li et al. VLDB 2020).
double bucketedExposed(double totalCommS, int buckets, double overlapS) {
    if (totalCommS <= 0) return 0;
    const double per = totalCommS / buckets;
    const double finish = std::max(overlapS + per, overlapS / buckets + totalCommS);
    return std::min(totalCommS, finish - overlapS);
}

/// The groups one set of parameters is reduced and sharded over: the dense part over DP × CP,
/// the routed experts over the expert-data-parallel ranks.
struct SyncGroups {
    const GroupLayout& reduce;
    const GroupLayout& shard;
    const GroupLayout& replicas;
    int shardRanks;
};

/// Serialized data-parallel traffic of one set of parameters, once per step.
struct SyncTraffic {
    double reduceScatter = 0; ///< in the backward window (ZeRO-1/2), per pass
    double allReduce = 0;     ///< in the backward window (per pass for ZeRO-1/2)
    double allGather = 0;     ///< ZeRO-1/2: updated weights, in the next forward's window
    int buckets = 0;
};

SyncTraffic syncTraffic(const Scenario& s, double params, const SyncGroups& g) {
    const Strategy& st = s.strategy;
    SyncTraffic t;
    if (g.reduce.size <= 1 || params <= 0) return t;
    const double gradBytes = params * bytesPerElement(s.workload.gradReducePrecision);
    const int shard = g.shardRanks;
    t.buckets = std::max(1, int(std::ceil(gradBytes / st.bucketBytes)));
    const double bucket = gradBytes / t.buckets;
    if (st.zeroStage == 0) {
        t.allReduce = t.buckets * collectiveTime(s.system, g.reduce, Collective::AllReduce, bucket);
    } else if (st.zeroStage <= 2) {
        // Reduce-scatter gradients (ZeRO-2: after every micro-batch); then all-reduce across
        // hybrid replicas; the updated 16-bit weights are all-gathered back.
        t.reduceScatter =
            t.buckets * collectiveTime(s.system, g.shard, Collective::ReduceScatter, bucket);
        t.allReduce =
            t.buckets * collectiveTime(s.system, g.replicas, Collective::AllReduce, bucket / shard);
        t.allGather = t.buckets * collectiveTime(s.system, g.shard, Collective::AllGather,
                                                 params * 2.0 / t.buckets);
    } else if (g.replicas.size > 1) {
        // FSDP's per-layer traffic is in the layer simulation; hybrid sharding adds an
        // all-reduce of the gradient shards across replicas at the end.
        t.allReduce =
            collectiveTime(s.system, g.replicas, Collective::AllReduce, gradBytes / shard);
        t.buckets = 1;
    }
    return t;
}

} // namespace

/// Data-parallel synchronisation of the critical stage, once per step: the dense parameters
/// over DP × CP and (MoE) the routed experts over EDP share one stream, bucket by bucket, beside
/// the backward pass (and the all-gathers beside the next forward); returns the exposed seconds.
double dataParallelSync(const Scenario& s, const StepContext& ctx, const StagePass& crit,
                        CommTable& comm) {
    const Strategy& st = s.strategy;
    const Groups& g = ctx.groups;
    // Only what trains has gradients to reduce (workload.frozen).
    const StageParams p = stageTrainableParamSplit(s.model, st, s.workload.frozen, crit.stage);
    const SyncTraffic d =
        syncTraffic(s, p.dense, {g.gradReduce, g.dpShard, g.dpReplicas, st.zeroShardRanks()});
    const SyncTraffic e =
        syncTraffic(s, p.expert, {g.edpReduce, g.edpShard, g.edpReplicas, expertShardRanks(st)});
    const int buckets = std::max(1, d.buckets + e.buckets);
    auto exposedOf = [&](double total, double overlapS) {
        return st.dpOverlap ? bucketedExposed(total, buckets, overlapS) : total;
    };
    const double rs = d.reduceScatter + e.reduceScatter, ar = d.allReduce + e.allReduce;
    const double ag = d.allGather + e.allGather;
    const int passes = st.zeroStage == 2 ? ctx.microBatches : 1;
    const double bwdTotal = rs + ar;
    const double exposed = bwdTotal > 0 ? passes * exposedOf(bwdTotal, crit.bwd) : 0.0;
    if (rs > 0)
        addComm(comm, ParallelDim::DP, Collective::ReduceScatter, passes * rs,
                exposed * rs / bwdTotal);
    if (ar > 0)
        addComm(comm, ParallelDim::DP, Collective::AllReduce, passes * ar, exposed * ar / bwdTotal);
    double agExposed = 0;
    if (ag > 0) {
        agExposed = exposedOf(ag, crit.fwd);
        addComm(comm, ParallelDim::DP, Collective::AllGather, ag, agExposed);
    }
    return exposed + agExposed;
}

/// The optimizer streams params, gradients and state through HBM (Adam: read and write fp32
/// master, m and v: 24 B; read the gradient; write 16-bit weights: 2 B).
double optimizerStep(const Scenario& s, const StepContext& ctx, const StagePass& crit) {
    const Strategy& st = s.strategy;
    const Workload& w = s.workload;
    const bool zero = st.zeroStage >= 1;
    const double denseShard = zero ? double(st.zeroShardRanks()) : 1.0;
    const double expertShard = zero ? double(expertShardRanks(st)) : 1.0;
    const double stateBytes = w.optimizer == Optimizer::Adam ? 24.0 : 16.0;
    const double perParam = stateBytes + bytesPerElement(w.gradReducePrecision) + 2.0;
    const StageParams p = stageTrainableParamSplit(s.model, st, w.frozen, crit.stage);
    return ctx.oc.elementwise((p.dense / denseShard + p.expert / expertShard) * perParam);
}

/// Step time = compute + exposed communication + bubble (+ stated framework overheads); sets
/// those totals in `r`.
double stepTotals(const Scenario& s, const CommTable& comm, double bubbleS, Result& r) {
    const Workload& w = s.workload;
    r.comm = comm;
    r.computeS = r.compute.totalS();
    r.bubbleS = bubbleS;
    double exposed = 0;
    for (const auto& dim : comm)
        for (const auto& c : dim)
            exposed += c.exposedS;
    r.exposedCommS = exposed;
    // Framework time no op accounts for (workload.step_overhead_ms and micro_batch_overhead_ms;
    // 0 unless stated).
    r.overheadS = w.stepOverheadS + w.microBatchOverheadS * microBatchesPerStep(s);
    r.stepTimeS = r.computeS + r.exposedCommS + r.bubbleS + r.overheadS;
    return r.stepTimeS;
}

/// Throughput and FLOP utilisation of a step whose totals stepTotals() set.
void finishStep(const Scenario& s, Result& r) {
    const Model& m = s.model;
    const Workload& w = s.workload;

    const double tokens = double(w.globalBatch) * w.seqLen;
    r.samplesPerS = w.globalBatch / r.stepTimeS;
    r.tokensPerS = tokens / r.stepTimeS;
    r.tokensPerSPerGpu = r.tokensPerS / s.gpus;
    r.modelFlopsPerStep =
        trainingFlopsPerStep(m, w.frozen, w.globalBatch, w.seqLen, s.strategy.recompute, false);
    if (s.strategy.recompute == Recompute::Full && s.strategy.recomputeLayers > 0) {
        // Only the first recompute_layers of each chunk run their forward again (nothing is
        // frozen with recompute_layers).
        const RecomputedLayers rc = modelRecomputedLayers(s);
        r.hardwareFlopsPerStep =
            trainingFlopsPerStep(m, w.frozen, w.globalBatch, w.seqLen, Recompute::None, true) +
            tokens * recomputeFlopsPerToken(m, rc.layers - rc.moeLayers, rc.moeLayers, w.seqLen);
    } else {
        r.hardwareFlopsPerStep =
            trainingFlopsPerStep(m, w.frozen, w.globalBatch, w.seqLen, s.strategy.recompute, true);
    }
    r.modelTflopsPerGpu = r.modelFlopsPerStep / (r.stepTimeS * s.gpus) / 1e12;
    r.hardwareTflopsPerGpu = r.hardwareFlopsPerStep / (r.stepTimeS * s.gpus) / 1e12;
    const double peak = s.system.gpu.peak(w.precision);
    r.mfu = r.modelTflopsPerGpu * 1e12 / peak;
    r.hfu = r.hardwareTflopsPerGpu * 1e12 / peak;
}

} // namespace madmax::detail
