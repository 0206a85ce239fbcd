// The critical stage's timeline for the explorer's chart: one micro-batch op by op, then the
// step-level phases as spans. Allocates, and only when a timeline is asked for.
#include "training/step.hpp"

#include <algorithm>
#include <string>

namespace madmax::detail {

namespace {

void appendTimeline(std::vector<TimelineEvent>& out, const StreamSim& sim, double offset) {
    for (int i = 0; i < sim.size(); ++i) {
        const SimOp& op = sim.op(i);
        if (op.durationS <= 0) continue;
        const TimelineKind kind = op.isComm()                    ? TimelineKind::Comm
                                  : op.hostIdle                  ? TimelineKind::HostIdle
                                  : op.phase == Phase::Backward  ? TimelineKind::Backward
                                  : op.phase == Phase::Recompute ? TimelineKind::Recompute
                                                                 : TimelineKind::Forward;
        std::string label = op.label;
        if (op.phase == Phase::Recompute && label.find("recompute") == std::string::npos)
            label += " (recompute)";
        TimelineEvent e{std::move(label),    op.lane,     kind,   offset + sim.start(i),
                        offset + sim.end(i), op.isComm(), op.dim, op.collective};
        out.push_back(std::move(e));
    }
}

} // namespace

/// One micro-batch on the critical stage, op by op: its layers' forward and backward in full,
/// with the stage's edges (the embedding on the first stage, the LM head and loss on the last,
/// their TP collectives) and its pipeline sends where the step's accounting charges them; then
/// the step-level phases as one span each. Allocates: only when asked for.
void appendStepTimeline(Result& r, const StepContext& ctx, const LayerSchedule& l,
                        const StagePass& crit, const PipelineTimes& pipe, double dpExposed) {
    auto& tl = r.timeline;
    const int mbs = ctx.microBatches;
    const EdgeCosts& e = l.edge;
    const PipelineStage& stage = crit.stage;
    double t0 = 0;
    auto span = [&](const char* label, Lane lane, TimelineKind kind, double d, ParallelDim dim,
                    Collective c) {
        if (d <= 0) return;
        const bool comm = kind == TimelineKind::Comm;
        tl.push_back({label, lane, kind, t0, t0 + d, comm, dim, c});
        t0 += d;
    };
    auto compute = [&](const char* label, TimelineKind kind, double d) {
        span(label, Lane::Compute, kind, d, ParallelDim::TP, Collective::AllReduce);
    };
    // The pipeline's sends of one micro-batch, each direction (v chunks, one send each).
    const double p2pEach = 0.5 * std::max(0.0, pipe.microBatchWallS - crit.fwd - crit.bwd);
    if (stage.first) {
        compute("embedding", TimelineKind::Forward, e.embedFwd);
        span("embedding TP collective", Lane::Comm, TimelineKind::Comm, e.embedComm,
             ParallelDim::TP, e.embedKind);
    }
    // Dense layers lead (MoE models' first layers), MoE layers follow; backward in reverse.
    const int moeLayers = stage.moeLayers, dense = stage.layers - moeLayers;
    for (int layer = 0; layer < dense; ++layer) {
        appendTimeline(tl, l.fwd, t0);
        t0 += l.fwd.makespanS();
    }
    for (int layer = 0; layer < moeLayers; ++layer) {
        appendTimeline(tl, l.moeFwd, t0);
        t0 += l.moeFwd.makespanS();
    }
    compute("activation offload wait", TimelineKind::Forward, crit.offloadFwd);
    if (stage.last) compute("LM head + loss", TimelineKind::Forward, e.headFwd);
    span("pipeline p2p (activations)", Lane::Comm, TimelineKind::Comm, p2pEach, ParallelDim::PP,
         Collective::P2P);
    if (stage.last) {
        compute("LM head + loss (bwd)", TimelineKind::Backward, e.headBwd);
        span("LM head TP collective (bwd)", Lane::Comm, TimelineKind::Comm, e.headComm,
             ParallelDim::TP, e.headKind);
    }
    // Backward: trainable layers in full, then frozen ones (input gradients only, or none).
    l.forEachBackward(stage, [&](const StreamSim& sim, int count) {
        for (int layer = 0; layer < count; ++layer) {
            appendTimeline(tl, sim, t0);
            t0 += sim.makespanS();
        }
    });
    compute("activation reload wait", TimelineKind::Backward, crit.offloadBwd);
    if (stage.first) compute("embedding (bwd)", TimelineKind::Backward, e.embedBwd);
    span("pipeline p2p (gradients)", Lane::Comm, TimelineKind::Comm, p2pEach, ParallelDim::PP,
         Collective::P2P);
    const double mbWall = pipe.microBatchWallS;
    tl.push_back({"remaining micro-batches (" + std::to_string(mbs - 1) + ")", Lane::Compute,
                  TimelineKind::Steady, mbWall, mbs * mbWall, false, ParallelDim::TP,
                  Collective::AllReduce});
    double t = mbs * mbWall;
    if (pipe.bubbleS > 0) {
        tl.push_back({"pipeline bubble", Lane::Compute, TimelineKind::Bubble, t, t + pipe.bubbleS,
                      false, ParallelDim::PP, Collective::P2P});
        t += pipe.bubbleS;
    }
    if (dpExposed > 0) {
        tl.push_back({"DP gradient sync (exposed)", Lane::DataParallelComm, TimelineKind::Comm, t,
                      t + dpExposed, true, ParallelDim::DP, Collective::AllReduce});
        t += dpExposed;
    }
    tl.push_back({"optimizer step", Lane::Compute, TimelineKind::Optimizer, t,
                  t + r.compute.optimizerS, false, ParallelDim::TP, Collective::AllReduce});
    t += r.compute.optimizerS;
    // The stated framework overheads (per step and per micro-batch), together at the step's end.
    if (r.overheadS > 0)
        tl.push_back({"framework overhead (as stated)", Lane::Compute, TimelineKind::Bubble, t,
                      t + r.overheadS, false, ParallelDim::TP, Collective::AllReduce});
}

} // namespace madmax::detail
