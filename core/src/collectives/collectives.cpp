#include "madmax/collectives.hpp"

#include <algorithm>
#include <cmath>

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

double collectiveTime(const System& sys, const GroupLayout& g, Collective op, double bytes) {
    if (g.size <= 1 || bytes <= 0) return 0.0;
    double total = 0;
    switch (op) {
    case Collective::AllGather:
    case Collective::ReduceScatter:
        if (sys.flatRingGathers && g.tierCount > 1) {
            // One ring over all n ranks (NCCL's algorithm for these two): every step moves S/n
            // per rank and waits for the slowest link the ring crosses.
            int outer = -1;
            for (int k = 0; k < g.tierCount; ++k)
                if (g.factor[k] > 1) outer = k;
            if (outer > 0) {
                const NetworkTier& t = sys.tiers[outer];
                return (g.size - 1) * t.latencyS +
                       double(g.size - 1) / g.size * bytes / tierBandwidth(t, bytes);
            }
        }
        [[fallthrough]];
    case Collective::AllReduce: {
        // Hierarchical: reduce-scatter inside the innermost tier, then across the next on the
        // 1/f share, and so on; an all-gather retraces the steps; an all-reduce does both.
        // The stages run pipelined (NCCL moves the buffer in chunks, so the network works on
        // one chunk while NVLink works on the next): the slowest stage's transfer, plus the
        // others' for one chunk each (the fill), plus every stage's latencies.
        double chunk = bytes, latency = 0, slowest = 0, sum = 0;
        for (int k = 0; k < g.tierCount; ++k) {
            const int f = g.factor[k];
            if (f <= 1) continue;
            const NetworkTier& t = sys.tiers[k];
            const double steps = op == Collective::AllReduce ? 2.0 : 1.0;
            const double speedup = op == Collective::AllReduce ? t.allReduceSpeedup : 1.0;
            latency += steps * (f - 1) * t.latencyS;
            const double transfer =
                steps * double(f - 1) / f * chunk / (tierBandwidth(t, chunk) * speedup);
            slowest = std::max(slowest, transfer);
            sum += transfer;
            chunk /= f;
        }
        const double pieces = std::max(1.0, bytes / kPipelineChunkBytes);
        total = latency + slowest + (sum - slowest) / pieces;
        return total;
    }
    case Collective::AllToAll: {
        // Each rank sends bytes·(peers in this tier)/n through tier k; links of different tiers
        // work at once, so the slowest tier bounds the transfer; latencies add per peer.
        double slowest = 0, latency = 0;
        long long inner = 1;
        for (int k = 0; k < g.tierCount; ++k) {
            const int f = g.factor[k];
            if (f <= 1) continue;
            const NetworkTier& t = sys.tiers[k];
            const long long peers = inner * f - inner;
            inner *= f;
            const double share = bytes * double(peers) / g.size;
            slowest = std::max(slowest, share / tierBandwidth(t, bytes));
            latency += double(peers) * t.latencyS;
        }
        return slowest + latency;
    }
    case Collective::P2P: {
        const NetworkTier& t = sys.tiers[g.tierCount - 1];
        return t.latencyS + bytes / tierBandwidth(t, bytes);
    }
    }
    return total;
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
        const double stream = t.bytesPerS / t.oversubscription * t.efficiency(1e300);
        slowest = std::max(slowest, out.tierBytes[k] / stream);
        latency += t.latencyS;
        (k == 0 ? out.scaleUpBytes : out.scaleOutBytes) += out.tierBytes[k];
    }
    out.timeS = slowest + latency;
    return out;
}

double p2pTime(const System& sys, long long stride, double bytes) {
    if (sys.tiers.empty() || bytes <= 0) return 0.0;
    const NetworkTier* tier = &sys.tiers.back();
    for (const auto& t : sys.tiers)
        if (t.gpus >= 2 * stride) {
            tier = &t;
            break;
        }
    return tier->latencyS + bytes / tierBandwidth(*tier, bytes);
}

} // namespace madmax
