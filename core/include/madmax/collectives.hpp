// Hierarchical α–β collective costs over a tiered network (MODEL.md §3).
#pragma once

#include "madmax/system.hpp"
#include "madmax/types.hpp"

#include <array>

namespace madmax {

inline constexpr int kMaxTiers = 6;

/// How a communication group of `size` ranks spreads over the network tiers: `factor[k]`
/// ranks of the group meet inside tier k (the product of factors is the group size).
struct GroupLayout {
    int size = 1;
    int tierCount = 0;
    std::array<int, kMaxTiers> factor{};
};

/// Members at stride `stride` (product of the degrees placed inside this dimension).
GroupLayout layoutGroup(const System& sys, int size, long long stride);

/// Time for one collective of `bytes` (all-reduce, all-gather and reduce-scatter: the full
/// buffer; all-to-all: the per-GPU send buffer; p2p: the message) on the group.
double collectiveTime(const System& sys, const GroupLayout& g, Collective op, double bytes);

/// Time of a point-to-point message between neighbours `stride` ranks apart.
double p2pTime(const System& sys, long long stride, double bytes);

/// nccl-tests bus bandwidth (bytes/s) that a measured all-reduce time corresponds to.
inline double allReduceBusBandwidth(double bytes, double seconds, int n) {
    return bytes / seconds * 2.0 * (n - 1) / n;
}

} // namespace madmax
