// A stage's pass of one micro-batch, the pipeline schedule of the critical stage, and the step:
// every distinct stage timed, the slowest sets the pace (docs/developer/model.md §4).
#include "training/step.hpp"

#include "madmax/flops.hpp"
#include "madmax/memory.hpp"
#include "madmax/pipeline_schedule.hpp"

#include <algorithm>

namespace madmax::detail {

namespace {

/// Activation offloading's waits per micro-batch, as Transformer Engine's double-buffered
/// handler (AsyncDoubleBufferGroupOffloadHandler, which Megatron-Core's cpu_offloading_num_layers
/// runs) schedules the copies: layer i < n is copied to the host on its own stream, starting
/// when the previous copy's window closes (layer 0's: when layer 0 ends), and the compute stream
/// waits for it at the end of layer window(i) = (L / n)(i + 1) − 1, with the remainder L mod n
/// spread one layer each over the first windows. A copy longer than the forward compute of
/// the layers in its window is waited for; the backward brings each back over the same window
/// of layers, against their backward compute. PP 1 and no recompute (the scenario check).
void addOffloadWaits(const Scenario& s, const LayerSchedule& l, StagePass& pass) {
    const Strategy& st = s.strategy;
    const Model& m = s.model;
    const int n = st.offloadLayers, layers = m.layers;
    if (n <= 0 || n >= layers) return;
    const double link = s.system.hostLinkBytesPerS;
    const double dense = layerActivationBytes(m, st, s.workload, false) / link;
    const double moe = m.isMoe() ? layerActivationBytes(m, st, s.workload, true) / link : 0.0;
    int prev = 0, constant = 0;
    for (int i = 0; i < n; ++i) {
        int window = (layers / n) * (i + 1) - 1;
        if (i < layers % n) {
            window += i + 1;
            constant = i + 1;
        } else {
            window += constant;
        }
        double fwd = 0, bwd = 0;
        for (int j = prev + 1; j <= window; ++j) {
            const bool moeLayer = m.isMoeLayer(j);
            fwd += moeLayer ? l.moeFwd.makespanS() : l.fwd.makespanS();
            bwd += moeLayer ? l.moeBwd.makespanS() : l.bwd.makespanS();
        }
        const double copy = m.isMoeLayer(i) ? moe : dense;
        pass.offloadFwd += std::max(0.0, copy - fwd);
        pass.offloadBwd += std::max(0.0, copy - bwd);
        prev = window;
    }
    pass.fwd += pass.offloadFwd;
    pass.bwd += pass.offloadBwd;
}

StagePass stagePass(const LayerSchedule& l, const PipelineStage& stage) {
    const int dense = stage.layers - stage.moeLayers;
    StagePass t{stage, dense * l.fwd.makespanS() + stage.moeLayers * l.moeFwd.makespanS(), 0.0};
    l.forEachBackward(stage,
                      [&](const StreamSim& sim, int count) { t.bwd += count * sim.makespanS(); });
    if (stage.first) {
        t.fwd += l.edge.embedFwd + l.edge.embedComm;
        t.bwd += l.edge.embedBwd;
    }
    if (stage.last) {
        t.fwd += l.edge.headFwd;
        t.bwd += l.edge.headBwd + l.edge.headComm;
    }
    return t;
}

/// Of a stage's backward, the weight-gradient share by FLOPs: each layer's backward is an
/// input-gradient and a weight-gradient GEMM pass (each its forward's FLOPs) and the attention
/// core's backward (twice its forward), plus the forward again where it is recomputed. The W
/// that zero-bubble schedules and DualPipe defer into the drain.
double weightGradShare(const Scenario& s, const PipelineStage& stage) {
    const Model& m = s.model;
    const int moe = stage.moeLayers, dense = stage.layers - moe;
    const double gemm = dense * layerGemmFlopsPerToken(m) + moe * moeLayerGemmFlopsPerToken(m);
    const double attention = stage.layers * attentionFlopsPerToken(m, s.workload.seqLen);
    const int recMoe = stage.recomputedMoeLayers;
    const double recompute = recomputeFlopsPerToken(m, stage.recomputedLayers - recMoe, recMoe,
                                                    s.workload.seqLen);
    const double backward = 2.0 * gemm + 2.0 * attention + recompute;
    return backward > 0 ? gemm / backward : 0.0;
}

/// DualPipe's overlapped chunk pairs hide their expert all-to-all and point-to-point behind the
/// paired chunk's compute (pipeline_schedule.hpp), never more than that compute.
void hidePairedComm(const Scenario& s, int microBatches, const Result& r, CommTable& comm) {
    const double share = scheduleModel(s.strategy.schedule).hiddenExpertShare(s.strategy, microBatches);
    if (share <= 0) return;
    double budget = share * (r.compute.forwardS + r.compute.backwardS);
    for (auto [d, c] : {std::pair{ParallelDim::EP, Collective::AllToAll},
                        std::pair{ParallelDim::PP, Collective::P2P}}) {
        CommTime& t = comm[int(d)][int(c)];
        const double hidden = std::min(budget, share * t.exposedS);
        t.exposedS -= hidden;
        budget -= hidden;
    }
}

/// The critical stage's micro-batches, the fill/drain bubble and p2p, and the compute and
/// communication of its layers and edges.
PipelineTimes pipelineStep(const Scenario& s, const StepContext& ctx, const LayerSchedule& l,
                           const StagePass& crit, Result& r, CommTable& comm) {
    const Strategy& st = s.strategy;
    const Shape& sh = ctx.shape;
    const int mbs = ctx.microBatches;
    const double p2pBytes = sh.T * sh.h * 2.0 / (st.sequenceParallel ? st.tp : 1);
    const double p2p = st.pp > 1 ? p2pTime(s.system, ctx.groups.ppStride, p2pBytes) : 0.0;
    const double p2pPerMb = 2.0 * st.vp * p2p; // activations forward, gradients backward
    r.forwardPerMicroBatchS = crit.fwd + (st.pp > 1 ? st.vp * p2p : 0.0);
    r.backwardPerMicroBatchS = crit.bwd + (st.pp > 1 ? st.vp * p2p : 0.0);

    PipelineTimes out;
    out.microBatchWallS = crit.fwd + crit.bwd + p2pPerMb;
    // m micro-batches plus the schedule's fill/drain bubble (pipeline_schedule.hpp).
    const ScheduleModel& schedule = scheduleModel(st.schedule);
    const ChunkTimes chunk{r.forwardPerMicroBatchS, r.backwardPerMicroBatchS,
                           schedule.usesWeightGrad ? crit.bwd * weightGradShare(s, crit.stage) : 0};
    out.bubbleS = schedule.bubbleS(st, chunk, mbs);

    const int moeLayers = crit.stage.moeLayers, layers = crit.stage.layers - moeLayers;
    const bool first = crit.stage.first, last = crit.stage.last;
    const EdgeCosts& e = l.edge;
    addTable(comm, l.fwd.comm(), double(mbs) * layers);
    addTable(comm, l.moeFwd.comm(), double(mbs) * moeLayers);
    l.forEachBackward(crit.stage, [&](const StreamSim& sim, int count) {
        addTable(comm, sim.comm(), double(mbs) * count);
    });
    if (first) addComm(comm, ParallelDim::TP, e.embedKind, mbs * e.embedComm, mbs * e.embedComm);
    if (last) addComm(comm, ParallelDim::TP, e.headKind, mbs * e.headComm, mbs * e.headComm);
    addComm(comm, ParallelDim::PP, Collective::P2P, mbs * p2pPerMb, mbs * p2pPerMb);

    r.compute.forwardS =
        mbs * (layers * l.fwd.busyS(Phase::Forward) + moeLayers * l.moeFwd.busyS(Phase::Forward) +
               (first ? e.embedFwd : 0.0) + (last ? e.headFwd : 0.0));
    auto busy = [&](Phase ph) {
        double t = 0;
        l.forEachBackward(crit.stage,
                          [&](const StreamSim& sim, int count) { t += count * sim.busyS(ph); });
        return t;
    };
    r.compute.backwardS =
        mbs * (busy(Phase::Backward) + (first ? e.embedBwd : 0.0) + (last ? e.headBwd : 0.0));
    r.compute.recomputeS = mbs * busy(Phase::Recompute);
    // A layer's stall is charged to its last op's phase: forward in a forward layer, backward
    // in a backward one (whose recomputed forward runs before its backward ops).
    const double fwdStalls = layers * l.fwd.hostStallS() + moeLayers * l.moeFwd.hostStallS();
    double stalls = fwdStalls;
    l.forEachBackward(crit.stage,
                      [&](const StreamSim& sim, int count) { stalls += count * sim.hostStallS(); });
    r.compute.hostStallS = mbs * stalls;
    r.compute.hostStallForwardS = mbs * fwdStalls;
    hidePairedComm(s, mbs, r, comm);
    return out;
}

} // namespace

Result evaluateTraining(const Scenario& s, const EvaluateOptions& options) {
    const StepContext ctx = makeContext(s);
    LayerSchedule layer;
    simulateLayer(s, ctx, layer);

    // The step ends when the slowest stage has run its micro-batches, synchronized its
    // gradients and stepped its optimizer: every distinct stage is timed and the longest is
    // the critical one (a maximum, so a faster GPU or link never lengthens the step).
    Result r;
    StagePass crit{};
    PipelineTimes pipe{};
    double dpExposed = 0;
    bool any = false;
    const PipelineStages stages = distinctStages(s);
    // A stage without an edge (embedding, head) never outlasts one with an edge that holds the
    // same layers: its every term (micro-batch time, gradients, optimizer state) is no larger.
    auto dominated = [&](const PipelineStage& b) {
        if (b.first || b.last) return false;
        for (const PipelineStage& a : stages)
            if ((a.first || a.last) && a.layers == b.layers && a.moeLayers == b.moeLayers &&
                a.frozenLayers == b.frozenLayers && a.frozenMoeLayers == b.frozenMoeLayers &&
                a.recomputedLayers == b.recomputedLayers &&
                a.recomputedMoeLayers == b.recomputedMoeLayers)
                return true;
        return false;
    };
    for (const PipelineStage& stage : stages) {
        if (dominated(stage)) continue;
        StagePass cand = stagePass(layer, stage);
        addOffloadWaits(s, layer, cand);
        Result rc;
        rc.microBatches = ctx.microBatches;
        rc.criticalStage = cand.stage.index;
        CommTable comm{};
        const PipelineTimes pc = pipelineStep(s, ctx, layer, cand, rc, comm);
        // The offload waits are forward and backward time the layers' own ops do not hold.
        rc.compute.offloadWaitForwardS = ctx.microBatches * cand.offloadFwd;
        rc.compute.offloadWaitS = ctx.microBatches * (cand.offloadFwd + cand.offloadBwd);
        rc.compute.forwardS += rc.compute.offloadWaitForwardS;
        rc.compute.backwardS += ctx.microBatches * cand.offloadBwd;
        const double dc = dataParallelSync(s, ctx, cand, comm);
        rc.compute.optimizerS = optimizerStep(s, ctx, cand);
        const double t = stepTotals(s, comm, pc.bubbleS, rc);
        if (!any || t > r.stepTimeS) {
            r = std::move(rc);
            crit = cand;
            pipe = pc;
            dpExposed = dc;
        }
        any = true;
    }
    finishStep(s, r);
    r.memory = transformerMemory(s);
    if (s.model.isMoe()) moeSummary(s, ctx.shape, layer.moe, r);
    if (options.timeline) appendStepTimeline(r, ctx, layer, crit, pipe, dpExposed);
    return r;
}

} // namespace madmax::detail
