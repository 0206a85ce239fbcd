#include "engine/stream_sim.hpp"

#include <algorithm>

namespace madmax::detail {

void StreamSim::run() {
    std::array<double, 3> laneFree{};
    busy_ = {};
    hostStall_ = 0;
    comm_ = {};
    makespan_ = 0;
    for (int i = 0; i < n_; ++i) {
        const SimOp& op = ops_[i].op;
        double ready = 0;
        int blocker = -1;
        for (int d : op.deps) {
            if (d < 0) continue;
            if (end_[d] > ready) {
                ready = end_[d];
                blocker = d;
            }
        }
        const int lane = static_cast<int>(op.lane);
        const double begin = std::max(laneFree[lane], ready);
        if (!op.isComm() && begin > laneFree[lane] && blocker >= 0 && ops_[blocker].op.isComm()) {
            const SimOp& c = ops_[blocker].op;
            comm_[int(c.dim)][int(c.collective)].exposedS += begin - laneFree[lane];
        }
        start_[i] = begin;
        end_[i] = begin + op.durationS;
        laneFree[lane] = end_[i];
        if (op.isComm())
            comm_[int(op.dim)][int(op.collective)].serializedS += op.durationS;
        else
            busy_[int(op.phase)] += op.durationS;
        makespan_ = std::max(makespan_, op.isComm() ? 0.0 : end_[i]);
    }
}

void StreamSim::addHostStalls(double hostOpS, const char* label) {
    hostStall_ = 0;
    if (hostOpS <= 0 || n_ == 0 || n_ >= kCapacity) return;
    // The layer repeats. The host issues every kernel in order at hostOpS a launch, running
    // ahead of the GPU, except that after a host sync it issues nothing until that op is done.
    // The steady-state time of a layer is then a max-plus cycle bound: no sync, max(GPU, host);
    // with syncs, the cycle splits into segments, each from one sync's end to the next sync's
    // (wrapping into the next layer), and a segment lasts at least as long as it takes the
    // host to issue any op i in it plus the GPU's compute from i to the segment's sync. The
    // period is the sum of the segments. Every term is a sum of durations, so a faster GPU,
    // link or host never lengthens the layer.
    std::array<int, kCapacity> syncs{};
    int nSync = 0;
    double host = 0;
    for (int i = 0; i < n_; ++i) {
        host += ops_[i].op.kernels * hostOpS;
        if (ops_[i].op.hostSync) syncs[nSync++] = i;
    }
    double period = std::max(makespan_, host);
    if (nSync > 0) {
        double cycle = 0;
        for (int j = 0; j < nSync; ++j) {
            // The segment ends at syncs[j] and starts after the previous sync (cyclically).
            const int end = syncs[j], prev = syncs[(j + nSync - 1) % nSync];
            double segKernels = 0;
            for (int i = end;; i = (i + n_ - 1) % n_) {
                segKernels += ops_[i].op.kernels;
                if ((i + n_ - 1) % n_ == prev) break;
            }
            // Walk it backwards from its sync: `work` is the compute from op i to the sync,
            // `issued` the host's clock (from the previous sync's end) once op i is issued.
            // No less than the host's time to issue the segment: the sync cannot end before it.
            double work = 0, issued = segKernels * hostOpS, segment = issued;
            for (int i = end;; i = (i + n_ - 1) % n_) {
                const SimOp& op = ops_[i].op;
                if (!op.isComm()) work += op.durationS;
                const double first =
                    issued - op.kernels * hostOpS + (op.kernels > 0 ? hostOpS : 0);
                segment = std::max(segment, first + work);
                issued -= op.kernels * hostOpS;
                if ((i + n_ - 1) % n_ == prev) break;
            }
            cycle += segment;
        }
        period = std::max(period, cycle);
    }
    const double stall = period - makespan_;
    if (stall <= 0) return;
    // The stall is charged to the phase of the work it delays (the layer's last compute op).
    Phase phase = Phase::Forward;
    for (int i = n_ - 1; i >= 0; --i)
        if (!ops_[i].op.isComm() && ops_[i].op.phase != Phase::None) {
            phase = ops_[i].op.phase;
            break;
        }
    SimOp op;
    op.label = label;
    op.phase = phase;
    op.durationS = stall;
    op.kernels = 0;
    op.hostIdle = true;
    ops_[n_].op = op;
    start_[n_] = makespan_;
    end_[n_] = makespan_ + stall;
    ++n_;
    makespan_ += stall;
    busy_[int(phase)] += stall;
    hostStall_ = stall;
}

} // namespace madmax::detail
