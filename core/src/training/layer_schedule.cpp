// One layer of each kind built from its model's blocks and simulated on the streams; the
// representative layers every stage's pass is made of.
#include "training/step.hpp"

#include "vit/vit_edges.hpp"

namespace madmax::detail {

namespace {

void blockForward(BlockKind k, LayerBuilder& b, const Scenario& s, const LayerCosts& c,
                  const MoeLayerCosts& e, Phase phase) {
    switch (k) {
    case BlockKind::Attention:
        attentionForward(b, s, c, phase);
        break;
    case BlockKind::Mlp:
        mlpForward(b, s, c, phase);
        break;
    case BlockKind::Moe:
        moeForward(b, s, c, e, phase);
        break;
    case BlockKind::Embedding:
    case BlockKind::LmHead:
        break; // stage edges, costed by edgeCosts()
    }
}

void blockBackward(BlockKind k, LayerBuilder& b, const Scenario& s, const LayerCosts& c,
                   const MoeLayerCosts& e, double g) {
    switch (k) {
    case BlockKind::Attention:
        attentionBackward(b, s, c, g);
        break;
    case BlockKind::Mlp:
        mlpBackward(b, s, c, g);
        break;
    case BlockKind::Moe:
        moeBackward(b, s, c, e, g);
        break;
    case BlockKind::Embedding:
    case BlockKind::LmHead:
        break;
    }
}

/// `layer`: a representative layer of its kind (dense or MoE).
void buildForward(StreamSim& sim, const Scenario& s, const LayerCosts& c, const MoeLayerCosts& e,
                  int layer) {
    LayerBuilder b(sim, s.strategy);
    // DeepSpeed's legacy coordinator gathers each weight at its module (the blocks' zeroFetch).
    const bool fsdp = s.strategy.zeroStage >= 3 && !b.legacyZero();
    const bool moe = s.model.isMoeLayer(layer);
    const bool prefetch = s.strategy.fsdpPrefetch > 0;
    const int gather =
        fsdp ? b.background(prefetch ? "FSDP all-gather (next layer)" : "FSDP all-gather",
                            moe ? e.fsdpGatherMoe : c.fsdpGather, ParallelDim::DP,
                            Collective::AllGather)
             : -1;
    if (!prefetch) b.blockOn(gather); // gathered just before this layer runs
    for (BlockKind k : s.model.layerBlocks(layer))
        blockForward(k, b, s, c, e, Phase::Forward);
    b.finish(prefetch ? gather : -1, -1);
}

/// `frozen`: a frozen layer that passes gradients down: input gradients only, nothing to reduce.
/// `recompute`: the layer's forward runs again first (full recompute of this layer).
void buildBackward(StreamSim& sim, const Scenario& s, const LayerCosts& c, const MoeLayerCosts& e,
                   int layer, bool frozen, bool recompute) {
    const Strategy& st = s.strategy;
    LayerBuilder b(sim, st);
    const bool fsdp = st.zeroStage >= 3 && !b.legacyZero();
    const bool moe = s.model.isMoeLayer(layer);
    const bool prefetch = st.fsdpPrefetch > 0;
    const int gather = fsdp ? b.background(prefetch ? "FSDP all-gather (bwd, next layer)"
                                                    : "FSDP all-gather (bwd)",
                                           moe ? e.fsdpGatherMoe : c.fsdpGather, ParallelDim::DP,
                                           Collective::AllGather)
                            : -1;
    if (!prefetch) b.blockOn(gather);
    const int reduce = fsdp && !frozen ? b.background("FSDP reduce-scatter (previous layer)",
                                                      moe ? e.fsdpReduceMoe : c.fsdpReduce,
                                                      ParallelDim::DP, Collective::ReduceScatter)
                                       : -1;
    const LayerBlocks blocks = s.model.layerBlocks(layer);
    if (recompute)
        for (BlockKind k : blocks)
            blockForward(k, b, s, c, e, Phase::Recompute);
    for (int i = blocks.count - 1; i >= 0; --i)
        blockBackward(blocks.kinds[i], b, s, c, e, frozen ? 1.0 : 2.0);
    // Legacy: the gradients' bucket is reduced when it fills, and the next module's host
    // synchronise waits for it, with nothing issued in between: exposed.
    int bucket = -1;
    if (b.legacyZero() && !frozen) {
        b.zeroPrefetchNextLayer(); // issued at the last module's fetch, before the bucket
        bucket = b.dataParallelTail("ZeRO-3 reduce-scatter (bucket)", c.fsdpReduce,
                                    Collective::ReduceScatter);
    }
    b.finish(prefetch ? gather : -1, reduce >= 0 ? reduce : bucket);
}

} // namespace

StepContext makeContext(const Scenario& s) {
    const Workload& w = s.workload;
    const Gpu& gpu = s.system.gpu;
    const OpCoster oc = detail::trainingOpCoster(gpu, w);
    return {oc, makeGroups(s), layerShape(s), microBatchesPerStep(s)};
}

void simulateLayer(const Scenario& s, const StepContext& ctx, LayerSchedule& out) {
    const Model& m = s.model;
    out.costs = layerCosts(s, ctx.shape, ctx.oc, ctx.groups);
    if (m.isMoe()) out.moe = moeLayerCosts(s, ctx.shape, ctx.oc, ctx.groups);
    // CUDA graphs: one launch replays the layer, so the host never paces the GPU.
    const double hostOp = s.strategy.cudaGraphs ? 0.0 : s.system.gpu.calibration.hostOpS;
    auto run = [&](StreamSim& sim) {
        sim.run();
        sim.addHostStalls(hostOp, "host launch stalls");
    };
    const Frozen& f = s.workload.frozen;
    const bool frozenBackward = f.layers > 0 && f.frozenLayersNeedDgrad();
    const bool full = s.strategy.recompute == Recompute::Full;
    const bool partial = full && s.strategy.recomputeLayers > 0;
    if (m.denseLayerCount() > 0) {
        const int dense = m.isMoe() && m.isMoeLayer(0) ? m.moe.denseLayers + 1 : 0;
        buildForward(out.fwd, s, out.costs, out.moe, dense);
        buildBackward(out.bwd, s, out.costs, out.moe, dense, false, full);
        run(out.fwd);
        run(out.bwd);
        if (partial) {
            buildBackward(out.bwdKept.emplace(), s, out.costs, out.moe, dense, false, false);
            run(*out.bwdKept);
        }
        if (frozenBackward) {
            buildBackward(out.bwdFrozen.emplace(), s, out.costs, out.moe, dense, true, full);
            run(*out.bwdFrozen);
        }
    }
    if (m.isMoe()) {
        buildForward(out.moeFwd, s, out.costs, out.moe, m.moe.denseLayers);
        buildBackward(out.moeBwd, s, out.costs, out.moe, m.moe.denseLayers, false, full);
        run(out.moeFwd);
        run(out.moeBwd);
        if (partial) {
            buildBackward(out.moeBwdKept.emplace(), s, out.costs, out.moe, m.moe.denseLayers, false,
                          false);
            run(*out.moeBwdKept);
        }
        if (frozenBackward) {
            buildBackward(out.moeBwdFrozen.emplace(), s, out.costs, out.moe, m.moe.denseLayers,
                          true, full);
            run(*out.moeBwdFrozen);
        }
    }
    out.edge =
        m.vit ? vitEdgeCosts(s, ctx.shape, ctx.oc) : edgeCosts(s, ctx.shape, ctx.oc, ctx.groups);
}

} // namespace madmax::detail
