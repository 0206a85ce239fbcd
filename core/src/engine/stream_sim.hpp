// A two-stream (three-lane) list scheduler for the ops of one layer (docs/developer/model.md §4): compute,
// the TP/CP communication stream, and the data-parallel (FSDP) stream. An op starts when its
// lane is free and its dependencies are done; time the compute lane waits on a communication op
// is that op's *exposed* time. Fixed capacity: no allocation.
#pragma once

#include "madmax/result.hpp"
#include "madmax/types.hpp"

#include <array>
#include <cstdlib>

namespace madmax::detail {

enum class Phase : std::uint8_t { Forward, Backward, Recompute, None };

struct SimOp {
    const char* label = "";
    Lane lane = Lane::Compute;
    Phase phase = Phase::None;
    double durationS = 0;
    std::array<int, 2> deps{-1, -1};
    ParallelDim dim = ParallelDim::TP;
    Collective collective = Collective::AllReduce;
    int kernels = 1;       ///< kernels the host launches for this op
    bool hostSync = false; ///< the host waits for this op to finish (a device-to-host copy)
    bool hostIdle = false; ///< not work: the GPU waiting for the host (addHostStalls)
    bool isComm() const { return lane != Lane::Compute; }
};

using CommTable = std::array<std::array<CommTime, kCollectiveCount>, kParallelDimCount>;

class StreamSim {
  public:
    static constexpr int kCapacity = 128;

    int add(const SimOp& op) {
        if (n_ >= kCapacity) std::abort(); // a layer has at most ~60 ops: cannot happen
        ops_[n_].op = op;
        return n_++;
    }
    int size() const { return n_; }
    const SimOp& op(int i) const { return ops_[i].op; }
    double start(int i) const { return start_[i]; }
    double end(int i) const { return end_[i]; }

    /// Schedule every op; afterwards makespan(), busy(), exposure tables are valid.
    void run();
    /// Host launch limit (after run()): the host issues every kernel in order at `hostOpS`
    /// each, running ahead of the GPU except across a host sync. Where it is slower than the
    /// GPU the compute stream idles: the layer's steady-state time is a max-plus cycle bound
    /// (see the definition), and what it adds to the makespan is one final op (hostStallS()
    /// says how long).
    void addHostStalls(double hostOpS, const char* label);
    double makespanS() const { return makespan_; }
    double busyS(Phase p) const { return busy_[static_cast<int>(p)]; }
    /// Of the busy time, what addHostStalls() added (the GPU waiting for the host).
    double hostStallS() const { return hostStall_; }
    const CommTable& comm() const { return comm_; }

  private:
    // Slots are written before they are read (n_ counts them): left uninitialised, so that a
    // simulator costs nothing to construct (evaluate() builds four per call).
    union Slot {
        Slot() {}
        SimOp op;
    };
    std::array<Slot, kCapacity> ops_;
    std::array<double, kCapacity> start_, end_;
    int n_ = 0;
    double makespan_ = 0;
    std::array<double, 4> busy_{};
    double hostStall_ = 0;
    CommTable comm_{};
};

} // namespace madmax::detail
