// The stream rules of docs/developer/model.md §4 as a builder: a block (attention, MLP, MoE, ...) places its
// compute ops and collectives onto the two-stream simulation through it, and the builder chains
// their dependencies. A shared engine part: it knows streams, not workloads.
#pragma once

#include "engine/stream_sim.hpp"
#include "madmax/strategy.hpp"

#include <utility>

namespace madmax::detail {

/// DeepSpeed's legacy ZeRO-3 fetches (LayerBuilder::zeroFetch): the share of each weight's
/// gather its prefetch bucket serialises, and the GPU's idle time after each host synchronise
/// while the host runs the fetch hook and launches the next kernel (one host op).
struct ZeroFetchCosts {
    double serialShare = 0, hookS = 0;
};

/// Builds a layer's op list with the stream rules of docs/developer/model.md §4.
class LayerBuilder {
  public:
    LayerBuilder(StreamSim& sim, const Strategy& st)
        : sim_(sim), st_(st),
          legacyZero_(st.zeroStage >= 3 && st.fsdpStyle == FsdpStyle::DeepSpeedLegacy) {}
    /// Whether ZeRO-3 runs DeepSpeed's legacy coordinator (zeroFetch places its syncs).
    bool legacyZero() const { return legacyZero_; }

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
    /// DeepSpeed's legacy ZeRO-3 coordinator (Strategy::fsdpStyle; DeepSpeed ≤ 0.5.10,
    /// stage3.py fetch_sub_module): before a linear whose weight is sharded runs, the host
    /// waits for that weight and synchronises with the whole device (torch.cuda.synchronize),
    /// then issues the next bucket's gathers. `gatherS`: this weight's all-gather; its
    /// `1 − serialShare` ran behind the previous gathered module's compute (for the layer's
    /// first weight, behind the previous layer's last: finish() closes the cycle), and its
    /// `serialShare` — the part of a prefetch bucket whose per-parameter all-gathers each start
    /// with a host synchronise — runs now with the GPU idle. No-op in the overlapped style.
    void zeroFetch(double gatherS, const ZeroFetchCosts& z, Phase phase) {
        if (!legacyZero_) return;
        const double serialShare = z.serialShare;
        const double ahead = gatherS * (1.0 - serialShare);
        int prefetched = -1;
        if (lastFetch_ < 0)
            firstAhead_ = ahead;
        else
            prefetched = comm("ZeRO-3 all-gather (prefetched)", Lane::DataParallelComm, ahead,
                              ParallelDim::DP, Collective::AllGather, lastFetch_);
        lastFetch_ = hostSyncAll(prefetched, phase, z.hookS);
        if (serialShare > 0) {
            const int serial = comm("ZeRO-3 all-gather (bucket, serial)", Lane::DataParallelComm,
                                    gatherS * serialShare, ParallelDim::DP, Collective::AllGather,
                                    lastFetch_);
            lastFetch_ = hostSyncAll(serial, phase, z.hookS);
        }
    }
    /// Legacy ZeRO-3: the next layer's first weight, prefetched behind this layer's last gathered
    /// module (issued there, so ahead of anything the layer issues after it on the same stream).
    /// finish() does it when nothing did before.
    void zeroPrefetchNextLayer() {
        if (!legacyZero_ || lastFetch_ < 0) return;
        nextLayerAhead_ = comm("ZeRO-3 all-gather (prefetched, next layer)",
                               Lane::DataParallelComm, firstAhead_, ParallelDim::DP,
                               Collective::AllGather, lastFetch_);
        lastFetch_ = -1;
    }
    /// A data-parallel collective issued after the layer's last compute op, for its end to wait
    /// on (pass it to finish(); legacy ZeRO-3's gradient bucket, whose wait the next module's
    /// synchronise makes exposed). -1 when there is nothing to send.
    int dataParallelTail(const char* label, double dur, Collective kind) {
        if (dur <= 0) return -1;
        return comm(label, Lane::DataParallelComm, dur, ParallelDim::DP, kind, lastCompute_);
    }
    /// Close the layer: the next layer starts only when every pending collective is done.
    void finish(int waitA, int waitB) {
        zeroPrefetchNextLayer();
        const int ahead = std::exchange(nextLayerAhead_, -1);
        for (int w : {waitBeforeNext_, waitAfterNext_, waitA, waitB, detached_, ahead}) {
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
    /// A host synchronise: one op the host waits on, after every op issued so far and `extra`
    /// (each pending dependency its own zero-length marker, the last of them the sync), then
    /// the GPU idle for `hookS` while the host runs the hook and launches again.
    int hostSyncAll(int extra, Phase phase, double hookS) {
        for (int w : {waitBeforeNext_, waitAfterNext_, detached_, extra}) {
            if (w < 0) continue;
            SimOp op;
            op.label = "ZeRO-3 fetch: wait";
            op.phase = phase;
            op.kernels = 0;
            op.deps = {lastCompute_, w};
            lastCompute_ = sim_.add(op);
        }
        waitBeforeNext_ = waitAfterNext_ = detached_ = -1;
        SimOp sync;
        sync.label = "ZeRO-3 fetch: host sync";
        sync.phase = phase;
        sync.kernels = 0;
        sync.hostSync = true;
        sync.deps = {lastCompute_, -1};
        lastCompute_ = sim_.add(sync);
        if (hookS > 0) {
            SimOp hook;
            hook.label = "host: ZeRO-3 fetch hook";
            hook.phase = phase;
            hook.durationS = hookS;
            hook.kernels = 0;
            hook.hostIdle = true;
            hook.deps = {lastCompute_, -1};
            lastCompute_ = sim_.add(hook);
        }
        return lastCompute_; // what the host issues next starts after it
    }
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
    bool legacyZero_;
    int lastFetch_ = -1;     ///< the last legacy ZeRO-3 fetch's host sync (-1: none yet)
    int nextLayerAhead_ = -1; ///< the next layer's first weight's prefetch, once issued
    double firstAhead_ = 0;  ///< the prefetched share of the layer's first gathered weight
};

/// The gradient GEMMs of a backward of `g` forward GEMM passes: 2 (input and weight
/// gradients), or 1 for a frozen layer (the input gradient only).
inline int gradientGemms(double g) {
    return g > 1.5 ? 2 : 1;
}

} // namespace madmax::detail
