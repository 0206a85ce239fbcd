// The stream rules of docs/developer/model.md §4 as a builder: a block (attention, MLP, MoE, ...) places its
// compute ops and collectives onto the two-stream simulation through it, and the builder chains
// their dependencies. A shared engine part: it knows streams, not workloads.
#pragma once

#include "engine/stream_sim.hpp"
#include "madmax/strategy.hpp"

namespace madmax::detail {

/// Builds a layer's op list with the stream rules of docs/developer/model.md §4.
class LayerBuilder {
  public:
    LayerBuilder(StreamSim& sim, const Strategy& st) : sim_(sim), st_(st) {}

    /// `kernels`: launches the host issues for it; `hostSync`: the host waits for it to finish.
    int compute(const char* label, double dur, Phase phase, int kernels = 1,
                bool hostSync = false) {
        SimOp op;
        op.label = label;
        op.lane = Lane::Compute;
        op.phase = phase;
        op.durationS = dur;
        op.kernels = kernels;
        op.hostSync = hostSync;
        op.deps = {lastCompute_, waitBeforeNext_};
        waitBeforeNext_ = waitAfterNext_;
        waitAfterNext_ = -1;
        lastCompute_ = sim_.add(op);
        return lastCompute_;
    }
    /// A TP collective next to a GEMM: blocking, or (TP-comm overlap) hidden behind that GEMM.
    /// `beforeGemm`: the collective feeds the next GEMM (all-gather); else it follows the last.
    void tpCollective(const char* label, double dur, Collective kind, bool beforeGemm) {
        if (dur <= 0) return;
        if (!st_.tpCommOverlap) {
            waitBeforeNext_ = comm(label, Lane::Comm, dur, ParallelDim::TP, kind, lastCompute_);
        } else if (beforeGemm) {
            // Chunked all-gather pipelined with the GEMM it feeds (Wang et al. ASPLOS 2023).
            waitAfterNext_ = comm(label, Lane::Comm, dur, ParallelDim::TP, kind, lastCompute_);
        } else {
            // Reduce-scatter pipelined with the GEMM just placed: starts with it.
            const int before = lastCompute_ >= 0 ? sim_.op(lastCompute_).deps[0] : -1;
            waitBeforeNext_ = comm(label, Lane::Comm, dur, ParallelDim::TP, kind, before);
        }
    }
    /// A collective that runs beside the next compute op and must finish before the one after.
    void besideNext(const char* label, Lane lane, double dur, ParallelDim dim, Collective kind) {
        if (dur <= 0) return;
        waitAfterNext_ = comm(label, lane, dur, dim, kind, lastCompute_);
    }
    /// A collective the next compute op waits for.
    void blocking(const char* label, double dur, ParallelDim dim, Collective kind) {
        if (dur <= 0) return;
        waitBeforeNext_ = comm(label, Lane::Comm, dur, dim, kind, lastCompute_);
    }
    /// A collective overlapped with another micro-batch's compute (DualPipe-style): it runs on
    /// the communication lane after the previous such one, and only the layer's end waits.
    void detached(const char* label, double dur, ParallelDim dim, Collective kind) {
        if (dur <= 0) return;
        detached_ = comm(label, Lane::Comm, dur, dim, kind, detached_);
    }
    /// A collective issued at the start of the layer that must finish by its end (prefetch).
    int background(const char* label, double dur, ParallelDim dim, Collective kind) {
        if (dur <= 0) return -1;
        return comm(label, Lane::DataParallelComm, dur, dim, kind, -1);
    }
    /// The next compute op waits for `op` (e.g. an unprefetched FSDP gather).
    void blockOn(int op) {
        if (op >= 0) waitBeforeNext_ = op;
    }
    /// Close the layer: the next layer starts only when every pending collective is done.
    void finish(int waitA, int waitB) {
        for (int w : {waitBeforeNext_, waitAfterNext_, waitA, waitB, detached_}) {
            if (w < 0) continue;
            SimOp op;
            op.label = "layer end";
            op.kernels = 0; // a marker, not a kernel
            op.deps = {lastCompute_, w};
            lastCompute_ = sim_.add(op);
        }
        waitBeforeNext_ = waitAfterNext_ = detached_ = -1;
    }

  private:
    int comm(const char* label, Lane lane, double dur, ParallelDim dim, Collective kind, int dep) {
        SimOp op;
        op.label = label;
        op.lane = lane;
        op.durationS = dur;
        op.dim = dim;
        op.collective = kind;
        op.deps = {dep, -1};
        return sim_.add(op);
    }
    StreamSim& sim_;
    const Strategy& st_;
    int lastCompute_ = -1;
    int waitBeforeNext_ = -1;
    int waitAfterNext_ = -1;
    int detached_ = -1;
};

/// The gradient GEMMs of a backward of `g` forward GEMM passes: 2 (input and weight
/// gradients), or 1 for a frozen layer (the input gradient only).
inline int gradientGemms(double g) {
    return g > 1.5 ? 2 : 1;
}

} // namespace madmax::detail
