#include "madmax/collectives.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace madmax {

GroupLayout layoutGroup(const System& sys, int size, long long stride) {
    GroupLayout g;
    g.size = size;
    g.tierCount = std::min<int>(static_cast<int>(sys.tiers.size()), kMaxTiers);
    long long prevInner = 1;
    for (int k = 0; k < g.tierCount; ++k) {
        long long inner;
        if (k == g.tierCount - 1) {
            inner = size; // the outermost tier holds the whole group
        } else {
            const long long domain = sys.tiers[k].gpus;
            inner =
                domain >= stride ? std::min<long long>(size, std::max(1LL, domain / stride)) : 1;
        }
        inner = std::max(inner, prevInner);
        g.factor[k] = static_cast<int>(std::max(1LL, inner / prevInner));
        prevInner *= g.factor[k];
    }
    return g;
}

namespace {

double tierBandwidth(const NetworkTier& t, double bytes) {
    return t.bytesPerS / t.oversubscription * t.efficiency(bytes);
}


} // namespace

/// The piece of a buffer each stage of a multi-tier collective hands to the next (NCCL's
/// per-channel chunk is of this order).
constexpr double kPipelineChunkBytes = 4.0 * 1024 * 1024;

namespace {

/// Where a group meets the network: `inner` is the innermost tier it uses, `outer` the
/// outermost; `L` members share each innermost domain (a node), `N` = n / L domains.
struct Span {
    int inner = -1, outer = -1;
    double L = 1, N = 1;
};

Span spanOf(const GroupLayout& g) {
    Span s;
    for (int k = 0; k < g.tierCount; ++k)
        if (g.factor[k] > 1) {
            if (s.inner < 0) s.inner = k;
            s.outer = k;
        }
    s.L = s.inner == 0 ? g.factor[0] : 1;
    s.N = g.size / s.L;
    return s;
}

/// Seconds per byte a rank forwards in a ring whose channels are rail-aligned, as NCCL builds
/// them (one channel per NIC, leaving the node through the GPU that owns that NIC): of what a
/// rank forwards, 1/L goes out over its own NIC and (L−1)/L stays on the inner links, so the
/// node's L NICs carry the ring together (NCCL's ring busBw = nChannels × bwInter). L = 1 is the
/// ring of one GPU per node, on that GPU's NIC alone.
/// `inBw`, `outBw`: each tier's bandwidth at this message size.
double railRingSecondsPerByte(double inBw, double outBw, double L) {
    const double viaNetwork = 1.0 / (L * outBw);
    const double viaInner = L > 1 ? (L - 1) / L / inBw : 0.0;
    return std::max(viaNetwork, viaInner);
}

/// NCCL's three protocols (src/graph/tuning.cc at 5067397, ncclTunerConstantsDefaults and
/// ncclTopoTuneModel) for a ring whose channels leave the node: each protocol's base latency
/// (Ring: LL 6.6, LL128 14.0, Simple 8.4 µs), its network latency where that is fully exposed
/// (NET, Tree: LL 5.0, LL128 8.5, Simple 14.0 µs, which the tuner charges every step of a ring
/// with one GPU per node; InfiniBand adds no latencyInter, net_ib/init.cc leaves it 0) and the
/// share of the ring's bus bandwidth it carries (LL: half, a 4-byte flag beside every 4 bytes of
/// data; LL128: 0.92, 120 of every 128 bytes; Simple: all of it).
struct RingProtocol {
    double baseS, stepS, bandwidthShare;
    bool capped; ///< LL: its bus bandwidth across nodes is capped (kLlMaxBusBw*)
};
constexpr RingProtocol kRingProtocols[] = {
    {6.6e-6, 5.0e-6, 0.5, true}, {14.0e-6, 8.5e-6, 0.92, false}, {8.4e-6, 14.0e-6, 1.0, false}};
/// NCCL's network latencies belong to the InfiniBand fabrics its tuner was set on; the
/// presets' scale-out tiers stand for the same kind of fabric with `latency_us` 6. A tier's own
/// latency scales them: at 6 µs they apply as NCCL gives them, and a tier given another
/// latency (or the scale_out_latency knob) moves them in proportion.
constexpr double kTypicalNetworkLatencyS = 6e-6;
/// LL's bus bandwidth across nodes is capped (tuning.cc llMaxBws, Intel hosts): 39.0 GB/s on
/// two nodes, 20.4 on more.
constexpr double kLlMaxBusBw2Nodes = 39.0e9, kLlMaxBusBwMoreNodes = 20.4e9;

/// A tier's bandwidth for large messages (its efficiency curve's last point).
double tierPeakBandwidth(const NetworkTier& t) { return tierBandwidth(t, 1e300); }

/// A ring whose channels span N domains of L members each, `steps` steps moving `busBytes` per
/// rank (the buffer × (n−1)/n; twice that for an all-reduce), at the fastest of NCCL's three
/// protocols, as its tuner picks one. Every step pays the network's fully exposed latency, not
/// only the steps that cross a domain boundary (which is all NCCL's tuner charges it for when a
/// node holds several ranks): a ring advances in lockstep, each step a handshake that completes
/// at the pace of its slowest link. nccl-tests shows it: two nodes of 8 B200
/// (presets/validation/nccl-tests-b200.json), whose 16-rank all-gather crosses the network on
/// one step in fifteen, take 150-300 µs beyond their bandwidth term at 16-128 MiB, which one
/// network latency cannot make and fifteen can. The protocols set the size dependence, so both
/// tiers run at their large-message efficiency.
double spanningRingTime(const NetworkTier& in, const NetworkTier& out, double L, double N,
                        double steps, double busBytes) {
    const double perByte = railRingSecondsPerByte(tierPeakBandwidth(in), tierPeakBandwidth(out), L);
    const double llMax = N <= 2 ? kLlMaxBusBw2Nodes : kLlMaxBusBwMoreNodes;
    const double latencyScale = out.latencyS / kTypicalNetworkLatencyS;
    double best = std::numeric_limits<double>::infinity();
    for (const RingProtocol& p : kRingProtocols) {
        double secondsPerByte = perByte / p.bandwidthShare;
        if (p.capped) secondsPerByte = std::max(secondsPerByte, 1.0 / llMax);
        best = std::min(best, p.baseS + steps * p.stepS * latencyScale + busBytes * secondsPerByte);
    }
    return best;
}

double log2Ceil(double x) { return x <= 1 ? 0.0 : std::ceil(std::log2(x)); }

/// NCCL's NVLS tree all-reduce across N domains (src/graph/tuning.cc at 5067397): its latency
/// is the NVLS step inside the domain, 25 µs (NVLink, NVLS, Simple), plus 20.9 µs per network
/// level each way (NET, NVLSTree, Simple; InfiniBand adds no latencyInter), the network's
/// scaled by the tier's latency_us over the presets' 6 as the ring's are. nccl-tests' all-reduce
/// across nodes takes about that at small messages: 93.4 µs at 1 MiB on 2 nodes of 8 B200
/// against 66.8 µs (a chain's 2·(7·2 + 6) µs = 40 µs), 92.5 µs on 4 nodes of 8 H100 against
/// 108.6 µs (presets/validation/nccl-tests-*.json).
constexpr double kNvlsStepS = 25e-6, kNvlsTreeNetStepS = 20.9e-6;

double nvlsTreeLatencyS(const NetworkTier& out, double N) {
    return kNvlsStepS +
           2 * log2Ceil(N) * kNvlsTreeNetStepS * out.latencyS / kTypicalNetworkLatencyS;
}

/// A double binary tree (NCCL's tree all-reduce) over N domains: each domain is inside one tree
/// and a leaf of the other, so it sends and receives 2S across the network (S/2 up and 2·S/2
/// down as an inner node, S/2 each way as a leaf); with two domains each is the other's only
/// peer and S suffices. NCCL's tuning model derates the tree's bus bandwidth by 0.92
/// (src/graph/tuning.cc) for the chain inside the node and the reduction's pacing.
constexpr double kTreeDerate = 0.92;

/// An all-reduce whose group has several GPUs in each of several domains, as NCCL picks among
/// its algorithms (system.all_reduce_algorithm: auto takes the fastest, as NCCL's tuner does):
/// a rail-aligned ring or a double binary tree across domains with a chain inside; when the
/// outer tier reduces in the network (SHARP / CollNet, all_reduce_speedup > 1) the
/// hierarchical schedule as well.
double hierarchicalTime(const System& sys, const GroupLayout& g, Collective op, double bytes);

double interDomainAllReduce(const System& sys, const GroupLayout& g, const Span& sp,
                            double bytes) {
    const NetworkTier& in = sys.tiers[sp.inner];
    const NetworkTier& out = sys.tiers[sp.outer];
    const double n = g.size, L = sp.L, N = sp.N;
    const double outBw = tierBandwidth(out, bytes);
    // Ring: 2(n−1) steps at NCCL's fastest protocol (spanningRingTime).
    const double ring = spanningRingTime(in, out, L, N, 2 * (n - 1), 2 * (n - 1) / n * bytes);
    // Tree: up and down a chain of L inside and log2(N) levels across; the domain's L NICs
    // carry its share together. With NVLink SHARP in the domain (NVLS: the scale-up tier's
    // all_reduce_speedup above 1) the domain reduces in its switch instead of a chain: NCCL's
    // NVLS tree, one NVLS step and log2(N) network levels each way (nvlsTreeLatencyS).
    const double treeBytes = (N <= 2 ? 1.0 : 2.0) * bytes;
    const double treeLatency = in.allReduceSpeedup > 1
                                   ? nvlsTreeLatencyS(out, N)
                                   : 2 * ((L - 1) * in.latencyS + log2Ceil(N) * out.latencyS);
    const double tree = treeLatency + treeBytes / (kTreeDerate * L * outBw);
    switch (sys.allReduceAlgorithm) {
    case AllReduceAlgorithm::Ring: return ring;
    case AllReduceAlgorithm::Tree: return tree;
    case AllReduceAlgorithm::Auto: break;
    }
    double best = std::min(ring, tree);
    if (out.allReduceSpeedup > 1)
        best = std::min(best, hierarchicalTime(sys, g, Collective::AllReduce, bytes));
    return best;
}

/// One stage of the hierarchical schedule on tier `t` for `f` members: its latencies and its
/// transfer of `chunk` bytes (an all-reduce: twice, at the tier's in-network speedup).
struct TierStage {
    double latencyS, transferS;
};
TierStage tierStage(const NetworkTier& t, int f, Collective op, double chunk) {
    const double steps = op == Collective::AllReduce ? 2.0 : 1.0;
    const double speedup = op == Collective::AllReduce ? t.allReduceSpeedup : 1.0;
    return {steps * (f - 1) * t.latencyS,
            steps * double(f - 1) / f * chunk / (tierBandwidth(t, chunk) * speedup)};
}

/// The hierarchical schedule: reduce-scatter inside the innermost tier, then across the next
/// on the 1/f share, and so on; an all-gather retraces the steps; an all-reduce does both.
/// The stages run pipelined (the network works on one chunk while NVLink works on the next):
/// the slowest stage's transfer, plus the others' for one chunk each (the fill), plus every
/// stage's latencies.
double hierarchicalTime(const System& sys, const GroupLayout& g, Collective op, double bytes) {
    double chunk = bytes, latency = 0, slowest = 0, sum = 0;
    for (int k = 0; k < g.tierCount; ++k) {
        const int f = g.factor[k];
        if (f <= 1) continue;
        const TierStage stage = tierStage(sys.tiers[k], f, op, chunk);
        latency += stage.latencyS;
        const double transfer = stage.transferS;
        slowest = std::max(slowest, transfer);
        sum += transfer;
        chunk /= f;
    }
    const double pieces = std::max(1.0, bytes / kPipelineChunkBytes);
    return latency + slowest + (sum - slowest) / pieces;
}

} // namespace

double collectiveTime(const System& sys, const GroupLayout& g, Collective op, double bytes) {
    if (g.size <= 1 || bytes <= 0) return 0.0;
    const Span sp = spanOf(g);
    const bool spansDomains = sp.outer > sp.inner && sp.inner >= 0;
    switch (op) {
    case Collective::AllGather:
    case Collective::ReduceScatter:
        if (sys.flatRingGathers && spansDomains) {
            // One ring over all n ranks (NCCL's algorithm for these two), its channels on the
            // rails: n−1 steps at NCCL's fastest protocol (spanningRingTime).
            return spanningRingTime(sys.tiers[sp.inner], sys.tiers[sp.outer], sp.L, sp.N,
                                    g.size - 1, double(g.size - 1) / g.size * bytes);
        }
        return hierarchicalTime(sys, g, op, bytes);
    case Collective::AllReduce: {
        // One tier (the ring, NVLS-accelerated), or one GPU per node across several network
        // tiers: the hierarchical schedule. Several GPUs per node across the network: NCCL's
        // inter-node algorithms.
        if (!(spansDomains && sp.inner == 0)) return hierarchicalTime(sys, g, op, bytes);
        return interDomainAllReduce(sys, g, sp, bytes);
    }
    case Collective::AllToAll: {
        // Each rank sends bytes·(peers in this tier)/n through tier k; links of different tiers
        // work at once, so the slowest tier bounds the transfer; latencies add per peer. Unlike
        // a ring, an all-to-all cannot pool a node's NICs: each rank's share leaves on its own.
        double slowest = 0, latency = 0;
        long long inner = 1;
        for (int k = 0; k < g.tierCount; ++k) {
            const int f = g.factor[k];
            if (f <= 1) continue;
            const NetworkTier& t = sys.tiers[k];
            const long long peers = inner * f - inner;
            inner *= f;
            const double share = bytes * double(peers) / g.size;
            slowest = std::max(slowest, share / (tierBandwidth(t, bytes) * t.allToAllEfficiency));
            latency += double(peers) * t.latencyS;
        }
        return slowest + latency;
    }
    case Collective::P2P: {
        const NetworkTier& t = sys.tiers[g.tierCount - 1];
        return t.latencyS + bytes / tierBandwidth(t, bytes);
    }
    }
    return 0.0;
}

MoeA2aTraffic moeAllToAll(const System& sys, const GroupLayout& g, const MoeA2aRequest& r) {
    MoeA2aTraffic out;
    const double n = g.size;
    if (g.size <= 1 || r.tokens <= 0 || r.bytesPerToken <= 0) return out;
    const double copies = r.tokens * r.topK * r.bytesPerToken; // bytes of all copies
    // The innermost tier's domain holds `L` members of the group; the rest are `N` domains.
    int first = -1;
    for (int k = 0; k < g.tierCount; ++k)
        if (g.factor[k] > 1) {
            first = k;
            break;
        }
    const double L = first == 0 ? g.factor[0] : 1.0;
    const double nodes = n / L;
    // DeepEP sends a token to a GPU once, whichever of its experts there it chose: the chance
    // that a given GPU holds one of the k (drawn without replacement from E, E/n on each GPU).
    double rankHit = 0;
    const bool perGpu = r.dedupPerNode && r.experts >= g.size && r.experts % g.size == 0;
    if (perGpu) {
        const double e = r.experts, own = e / n;
        double miss = 1;
        for (int i = 0; i < r.topK; ++i)
            miss *= std::max(0.0, (e - own - i) / (e - i));
        rankHit = 1.0 - miss;
    }
    const double perToken = r.tokens * r.bytesPerToken;
    double remote = 0; // bytes leaving the domain
    double local = perGpu ? perToken * (L - 1) * rankHit : copies * (L - 1) / n;
    if (nodes > 1) {
        const double k = r.topK;
        double distinct = nodes * (1.0 - std::pow(1.0 - 1.0 / nodes, k));
        if (r.nodeLimit > 0) distinct = std::min(distinct, double(r.nodeLimit));
        out.remoteNodes = distinct * (nodes - 1) / nodes;
        if (r.dedupPerNode) {
            remote = perToken * out.remoteNodes;
            // Fan-out after the RDMA hop: the receiving GPU forwards to the others of that
            // domain among the destinations.
            local += perGpu ? perToken * (nodes - 1) * (L - 1) * rankHit
                            : copies * (n - L) / n * (L - 1) / L;
            out.logicalBytes = perToken * distinct;
        } else {
            remote = copies * (n - L) / n;
            if (r.nodeLimit > 0 && r.nodeLimit < nodes) remote *= r.nodeLimit / nodes;
            out.logicalBytes = copies;
        }
    } else {
        out.logicalBytes = perGpu ? perToken * L * rankHit : copies;
    }
    // Spread the cross-domain bytes over the outer tiers by the peers each one adds.
    long long inner = 1;
    double outerPeers = n - L;
    for (int k = 0; k < g.tierCount; ++k) {
        const int f = g.factor[k];
        const long long peers = inner * f - inner;
        inner *= f;
        if (f <= 1) continue;
        out.tierBytes[k] = k == 0 ? local : (outerPeers > 0 ? remote * peers / outerPeers : 0.0);
    }
    double slowest = 0, latency = r.overheadS;
    for (int k = 0; k < g.tierCount; ++k) {
        if (out.tierBytes[k] <= 0) continue;
        const NetworkTier& t = sys.tiers[k];
        // A kernel's own streaming efficiency (DeepEP's) is never above what the link reaches.
        const double linkEff = t.efficiency(1e300);
        const double eff = k == 0 && r.scaleUpEfficiency > 0
                               ? std::min(r.scaleUpEfficiency, linkEff)
                               : linkEff;
        // A flat dispatch is the fabric's many-to-many all-to-all; DeepEP's per-node one sends
        // rail-aligned and forwards over NVLink (NetworkTier::allToAllEfficiency).
        const double manyToMany = r.dedupPerNode ? 1.0 : t.allToAllEfficiency;
        const double stream = t.bytesPerS / t.oversubscription * eff * manyToMany;
        slowest = std::max(slowest, out.tierBytes[k] / stream);
        latency += t.latencyS;
        (k == 0 ? out.scaleUpBytes : out.scaleOutBytes) += out.tierBytes[k];
    }
    out.timeS = slowest + latency;
    out.latencyS = latency;
    return out;
}

AllReducePlan::AllReducePlan(const System& sys, const GroupLayout& g) : sys_(&sys), group_(g) {
    int spanned = 0;
    for (int k = 0; k < g.tierCount; ++k)
        if (g.factor[k] > 1) {
            tier_ = k;
            ++spanned;
        }
    if (spanned != 1) tier_ = -1;
}

double AllReducePlan::timeS(double bytes) const {
    if (!sys_ || group_.size <= 1 || bytes <= 0) return 0.0;
    if (tier_ < 0) return collectiveTime(*sys_, group_, Collective::AllReduce, bytes);
    // One tier: hierarchicalTime's single stage (its fill term, (sum − slowest)/pieces, is 0).
    const TierStage stage =
        tierStage(sys_->tiers[std::size_t(tier_)], group_.factor[std::size_t(tier_)],
                  Collective::AllReduce, bytes);
    return stage.latencyS + stage.transferS;
}

double AllReducePlan::timeS(double bytes, double log2Bytes) const {
    if (!sys_ || group_.size <= 1 || bytes <= 0) return 0.0;
    if (tier_ < 0) return collectiveTime(*sys_, group_, Collective::AllReduce, bytes);
    // tierStage's arithmetic for an all-reduce, its efficiency read at the logarithm given.
    const NetworkTier& t = sys_->tiers[std::size_t(tier_)];
    const int f = group_.factor[std::size_t(tier_)];
    const double bandwidth = t.bytesPerS / t.oversubscription * t.efficiency.atLog2(log2Bytes);
    return 2.0 * (f - 1) * t.latencyS +
           2.0 * double(f - 1) / f * bytes / (bandwidth * t.allReduceSpeedup);
}

namespace {
/// The tier that carries a message between ranks `stride` apart: the innermost that holds both.
const NetworkTier* p2pTier(const System& sys, long long stride) {
    if (sys.tiers.empty()) return nullptr;
    for (const auto& t : sys.tiers)
        if (t.gpus >= 2 * stride) return &t;
    return &sys.tiers.back();
}
} // namespace

double p2pTime(const System& sys, long long stride, double bytes) {
    return P2pPlan(sys, stride).timeS(bytes);
}

P2pPlan::P2pPlan(const System& sys, long long stride) : tier_(p2pTier(sys, stride)) {}

double P2pPlan::timeS(double bytes) const {
    if (!tier_ || bytes <= 0) return 0.0;
    return tier_->latencyS + bytes / tierBandwidth(*tier_, bytes);
}

double P2pPlan::timeS(double bytes, double log2Bytes) const {
    if (!tier_ || bytes <= 0) return 0.0;
    return tier_->latencyS + bytes / (tier_->bytesPerS / tier_->oversubscription *
                                      tier_->efficiency.atLog2(log2Bytes));
}

} // namespace madmax
