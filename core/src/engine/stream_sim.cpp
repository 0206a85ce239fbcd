#include "engine/stream_sim.hpp"

#include <algorithm>

namespace madmax::detail {

void StreamSim::run() {
    std::array<double, 3> laneFree{};
    busy_ = {};
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

double StreamSim::addHostStalls(double hostOpS, const char* label) {
    if (hostOpS <= 0 || n_ == 0 || n_ >= kCapacity) return 0.0;
    int sync = -1;
    double host = 0, hostBefore = 0;
    for (int i = 0; i < n_; ++i) {
        host += ops_[i].op.kernels * hostOpS;
        if (ops_[i].op.hostSync && sync < 0) {
            sync = i;
            hostBefore = host;
        }
    }
    double stall;
    if (sync < 0) {
        stall = std::max(0.0, host - makespan_);
    } else {
        const double gpuBefore = end_[sync], gpuAfter = makespan_ - end_[sync];
        stall = std::max(0.0, hostBefore - gpuBefore) +
                std::max(0.0, (host - hostBefore) - gpuAfter);
    }
    if (stall <= 0) return 0.0;
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
    ops_[n_].op = op;
    start_[n_] = makespan_;
    end_[n_] = makespan_ + stall;
    ++n_;
    makespan_ += stall;
    busy_[int(phase)] += stall;
    return stall;
}

} // namespace madmax::detail
