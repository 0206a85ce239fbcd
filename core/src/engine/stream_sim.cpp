#include "engine/stream_sim.hpp"

#include <algorithm>

namespace madmax::detail {

void StreamSim::run() {
    std::array<double, 3> laneFree{};
    busy_ = {};
    comm_ = {};
    makespan_ = 0;
    for (int i = 0; i < n_; ++i) {
        const SimOp& op = ops_[i];
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
        if (!op.isComm() && begin > laneFree[lane] && blocker >= 0 && ops_[blocker].isComm()) {
            const SimOp& c = ops_[blocker];
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

} // namespace madmax::detail
