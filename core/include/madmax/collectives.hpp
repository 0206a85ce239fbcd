// Hierarchical α–β collective costs over a tiered network (docs/developer/model.md §3).
#pragma once

#include "madmax/model.hpp"
#include "madmax/strategy.hpp"
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

/// nccl-tests' bus bandwidth over its algorithm bandwidth for `op` on `ranks` ranks (its
/// PERFORMANCE.md): 2(n−1)/n for all-reduce, (n−1)/n for all-gather, reduce-scatter and
/// all-to-all, 1 for point-to-point.
inline double ncclBusFactor(Collective op, int ranks) {
    const double n = ranks;
    if (op == Collective::P2P) return 1.0;
    return op == Collective::AllReduce ? 2.0 * (n - 1) / n : (n - 1) / n;
}

/// Time for one collective of `bytes` (all-reduce, all-gather and reduce-scatter: the full
/// buffer; all-to-all: the per-GPU send buffer; p2p: the message) on the group.
double collectiveTime(const System& sys, const GroupLayout& g, Collective op, double bytes);

/// One group's all-reduce, prepared once for many message sizes (a serving search asks it on
/// every probe of every configuration): a group inside one tier takes that tier's ring directly,
/// the very arithmetic collectiveTime does for it; any other group asks collectiveTime.
class AllReducePlan {
  public:
    AllReducePlan() = default;
    AllReducePlan(const System& sys, const GroupLayout& g);
    double timeS(double bytes) const;
    /// The same for a caller that has log2(bytes) from parts it keeps (a GEMM's log2 of its
    /// rows plus log2 of a row's bytes): the tier's efficiency curve is read at it, no
    /// logarithm taken.
    double timeS(double bytes, double log2Bytes) const;

  private:
    const System* sys_ = nullptr;
    GroupLayout group_;
    int tier_ = -1; ///< the one tier with more than one member, or −1
};

/// Time of a point-to-point message between neighbours `stride` ranks apart.
double p2pTime(const System& sys, long long stride, double bytes);

/// Point-to-point messages between neighbours `stride` ranks apart, their tier found once
/// (p2pTime's arithmetic; a serving replica sends one between its stages on every probe).
class P2pPlan {
  public:
    P2pPlan() = default;
    P2pPlan(const System& sys, long long stride);
    double timeS(double bytes) const;
    /// With log2(bytes) given (AllReducePlan::timeS's second form).
    double timeS(double bytes, double log2Bytes) const;

  private:
    const NetworkTier* tier_ = nullptr; ///< none: a system without tiers (no time)
};

/// One MoE dispatch or combine all-to-all over an EP group (docs/developer/workloads.md): what crosses each
/// tier per GPU and how long it takes.
struct MoeA2aRequest {
    double tokens = 0;        ///< tokens this GPU sends (each to k experts)
    int topK = 1;             ///< k: expert copies per token
    double bytesPerToken = 0; ///< hidden × element size (+ FP8 scales)
    bool dedupPerNode = false; ///< DeepEP: once per destination node over RDMA, then NVLink
    /// Routed experts, spread evenly over the group: with dedupPerNode a token reaches each GPU
    /// holding any of its k experts once (DeepEP's is_token_in_rank). 0: not known, every copy
    /// travels on its own inside a domain.
    int experts = 0;
    int nodeLimit = 0;         ///< node-limited routing: ≤ this many nodes per token (0 = off)
    double overheadS = 0;      ///< fixed cost of one dispatch/combine kernel call
    /// Inside the innermost domain, the fraction of its line rate the kernels stream at (DeepEP:
    /// ComputeCalibration::deepEpScaleUpEfficiency), at most the tier's own large-message
    /// efficiency; 0: the tier's own (NCCL's all-to-all).
    double scaleUpEfficiency = 0;
};
/// A MoE layer's dispatch or combine as its strategy runs it: the routing (k of the routed
/// experts, the node limit), the dispatcher's traffic (DeepEP once per destination node and
/// GPU, streaming NVLink at its own efficiency; the flat dispatcher every copy, at the link's)
/// and the call's fixed cost. The caller sets the tokens and the bytes per token. (Inline: a
/// serving search asks it for every MoE layer it prices.)
inline MoeA2aRequest moeA2aRequestFor(const MoeShape& moe, const Strategy& st,
                                      const ComputeCalibration& cal) {
    MoeA2aRequest r;
    const bool deepEp = st.dispatcher == MoeDispatcher::DeepEp;
    r.topK = moe.topK;
    r.dedupPerNode = deepEp;
    r.experts = moe.experts;
    r.nodeLimit = st.moeNodeLimit;
    r.overheadS = cal.allToAllOverheadS;
    r.scaleUpEfficiency = deepEp ? cal.deepEpScaleUpEfficiency : 0.0;
    return r;
}
struct MoeA2aTraffic {
    std::array<double, kMaxTiers> tierBytes{}; ///< bytes this GPU sends across each tier
    double scaleUpBytes = 0;   ///< inside the innermost (NVLink) domain
    double scaleOutBytes = 0;  ///< beyond it
    double logicalBytes = 0;   ///< DeepEP's "bottleneck" bytes, local-rank traffic included
    double remoteNodes = 0;    ///< expected distinct other domains a token reaches
    double timeS = 0;
    double latencyS = 0; ///< of timeS: the fixed part (overhead and each tier's latency); the
                         ///< rest is proportional to the bytes per token
};
/// Tokens go to k experts spread evenly over the group (balanced routing). Without dedup each
/// copy travels to its expert's GPU: the share (peers in a tier)/n of tokens·k copies crosses
/// that tier, and node-limited routing cuts the cross-domain share to M/nodes. With dedup a
/// token crosses the network once per distinct remote domain, N·(1−(1−1/N)^k) domains (at most
/// M), and fans out over NVLink inside it, once per destination GPU: a GPU holding E/n of the
/// E experts is among a token's destinations with probability 1 − C(E − E/n, k)/C(E, k) (k drawn
/// without replacement), and the experts it holds are expanded from that one copy on arrival.
/// The transfer streams at each tier's large-message
/// efficiency (kernels post every peer's message at once, no ring steps); tiers work at once,
/// so the slowest bounds it; plus one α per tier used and the kernel's fixed cost.
MoeA2aTraffic moeAllToAll(const System& sys, const GroupLayout& g, const MoeA2aRequest& r);

/// nccl-tests bus bandwidth (bytes/s) that a measured all-reduce time corresponds to.
inline double allReduceBusBandwidth(double bytes, double seconds, int n) {
    return bytes / seconds * 2.0 * (n - 1) / n;
}

} // namespace madmax
