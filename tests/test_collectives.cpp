// Ring and hierarchical α–β collective times against hand-derived values (docs/developer/model.md §3).
#include "madmax/collectives.hpp"
#include "test_support.hpp"

#include <catch2/catch.hpp>

using namespace madmax;

namespace {
System twoTier(double innerGBps, double innerLatUs, double outerGBps, double outerLatUs,
               int total = 64) {
    System s;
    NetworkTier in;
    in.gpus = 8;
    in.bytesPerS = innerGBps * 1e9;
    in.latencyS = innerLatUs * 1e-6;
    in.efficiency = LogCurve::constant(1.0);
    NetworkTier out = in;
    out.gpus = total;
    out.bytesPerS = outerGBps * 1e9;
    out.latencyS = outerLatUs * 1e-6;
    s.tiers = {in, out};
    return s;
}
} // namespace

TEST_CASE("Ring all-reduce on one tier: 2(n-1)α + 2(n-1)/n·S/B") {
    const System s = twoTier(100, 5, 10, 10);
    const GroupLayout g = layoutGroup(s, 8, 1);
    REQUIRE(g.factor[0] == 8);
    REQUIRE(g.factor[1] == 1);
    // 2·7·5 µs + 2·7/8·1 GB / 100 GB/s = 70 µs + 17.5 ms
    CHECK(collectiveTime(s, g, Collective::AllReduce, 1e9) == Approx(0.01757).epsilon(1e-9));
    // (n-1)α + (n-1)/n·S/B = 35 µs + 8.75 ms
    CHECK(collectiveTime(s, g, Collective::AllGather, 1e9) == Approx(0.008785).epsilon(1e-9));
    CHECK(collectiveTime(s, g, Collective::ReduceScatter, 1e9) == Approx(0.008785).epsilon(1e-9));
}

TEST_CASE("A prepared all-reduce is collectiveTime's, bit for bit, in one tier or several") {
    // AllReducePlan (the serving replica's TP all-reduce) takes a one-tier group's ring directly
    // and hands any other group to collectiveTime: the same number either way, for the presets'
    // curved link efficiencies and the hand systems above.
    const System h100 = test::preset("default").system;
    const System hand = twoTier(100, 5, 10, 10);
    for (const System* sys : {&h100, &hand})
        for (int n : {1, 2, 4, 8, 16, 64})
            for (long long stride : {1LL, 8LL}) {
                if (n * stride > sys->tiers.back().gpus) continue;
                const GroupLayout g = layoutGroup(*sys, n, stride);
                const AllReducePlan plan(*sys, g);
                for (double bytes : {0.0, 1.0, 4096.0, 1048576.0, 3.3e7, 8.6e9}) {
                    INFO("n " << n << " stride " << stride << " bytes " << bytes);
                    CHECK(plan.timeS(bytes) ==
                          collectiveTime(*sys, g, Collective::AllReduce, bytes));
                }
            }
    CHECK(AllReducePlan().timeS(1e6) == 0.0); // an unprepared plan moves nothing
}

TEST_CASE("Prepared collectives given log2 of the bytes agree with the plain ones, and a prepared "
          "send is p2pTime's") {
    // The serving replica passes log2(bytes) built from kept parts (log2 of its rows plus log2
    // of a row's bytes): the efficiency curve is then read at that logarithm, not at one taken
    // from the bytes, so the two forms agree to rounding, not bit for bit.
    const System h100 = test::preset("default").system;
    const System hand = twoTier(100, 5, 10, 10);
    const System oversubscribed = [&] { // a 2:1 network tier
        System s = hand;
        s.tiers[1].oversubscription = 2;
        return s;
    }();
    for (const System* sys : {&h100, &hand, &oversubscribed})
        for (long long stride : {1LL, 4LL, 8LL, 16LL}) {
            const P2pPlan send(*sys, stride);
            for (double bytes : {0.0, 1.0, 4096.0, 1048576.0, 3.3e7, 8.6e9}) {
                INFO("stride " << stride << " bytes " << bytes);
                CHECK(send.timeS(bytes) == p2pTime(*sys, stride, bytes));
                if (bytes > 0)
                    CHECK(send.timeS(bytes, std::log2(bytes)) ==
                          Approx(p2pTime(*sys, stride, bytes)).epsilon(1e-12));
            }
            for (int n : {2, 8, 16}) {
                if (n * stride > sys->tiers.back().gpus) continue;
                const AllReducePlan plan(*sys, layoutGroup(*sys, n, stride));
                for (double bytes : {1.0, 4096.0, 1048576.0, 3.3e7, 8.6e9})
                    CHECK(plan.timeS(bytes, std::log2(bytes)) ==
                          Approx(plan.timeS(bytes)).epsilon(1e-12));
            }
        }
    CHECK(P2pPlan().timeS(1e6) == 0.0);
    // A two-tier send by hand: 8 GPUs a node, ranks 8 apart cross the 10 GB/s tier (efficiency
    // 1 in the hand system) after its 10 µs latency: 1 MB takes 10 µs + 100 µs.
    CHECK(P2pPlan(hand, 8).timeS(1e6) == Approx(10e-6 + 1e6 / 10e9).epsilon(1e-12));
    // Oversubscribed 2:1, the same send gets half the tier's rate: 10 µs + 200 µs.
    CHECK(P2pPlan(oversubscribed, 8).timeS(1e6, std::log2(1e6)) ==
          Approx(10e-6 + 1e6 / 5e9).epsilon(1e-12));
}

TEST_CASE("All-reduce over 8 nodes of 8: NCCL's rail-aligned ring, its tree, and the "
          "hierarchical schedule only with in-network reduction") {
    System s = twoTier(100, 1, 10, 10);
    const GroupLayout g = layoutGroup(s, 64, 1);
    REQUIRE(g.factor[0] == 8);
    REQUIRE(g.factor[1] == 8);
    // Ring over the rails (NCCL: one channel per NIC, leaving each node through that NIC's
    // GPU): of the 2·63/64·S a rank forwards, 1/8 leaves on its own 10 GB/s NIC and 7/8 stays
    // on the 100 GB/s NVLink; per byte max(7/8 / 100e9, 1 / (8 · 10e9)) = 1.25e-11 s. Its 126
    // steps each pay the network's exposed latency, NCCL's per protocol scaled by this tier's
    // 10 µs over the presets' 6 (src/graph/tuning.cc: Simple 14 µs, 23.3 here), plus the
    // protocol's base latency; the fastest protocol runs:
    //   LL     6.6 µs + 126 · 5.0 · 10/6 µs + 1.575e9 · max(2.5e-11, 1/20.4e9) = 78.26 ms
    //   LL128  14 µs + 126 · 8.5 · 10/6 µs + 1.575e9 · 1.25e-11 / 0.92      = 23.198 ms
    //   Simple 8.4 µs + 126 · 14 · 10/6 µs + 1.575e9 · 1.25e-11             = 22.636 ms
    const double ring = 8.4e-6 + 126 * 14e-6 * 10.0 / 6.0 + 2.0 * 63 / 64 * 8e8 * 1.25e-11;
    // Double binary tree: each node sends 2S over its 8 NICs at 0.92 (NCCL's derating), plus
    // 2·(7·1 µs + log2(8)·10 µs) = 74 µs: 21.813 ms — faster than the ring's 126 exposed
    // network latencies, so auto takes the tree.
    const double tree = 74e-6 + 2 * 8e8 / (0.92 * 8 * 10e9);
    CHECK(ring == Approx(0.0226359).epsilon(1e-6));
    CHECK(collectiveTime(s, g, Collective::AllReduce, 8e8) == Approx(tree).epsilon(1e-9));
    s.allReduceAlgorithm = AllReduceAlgorithm::Ring;
    CHECK(collectiveTime(s, g, Collective::AllReduce, 8e8) == Approx(ring).epsilon(1e-9));
    s.allReduceAlgorithm = AllReduceAlgorithm::Tree;
    CHECK(collectiveTime(s, g, Collective::AllReduce, 8e8) == Approx(tree).epsilon(1e-9));
    // Four nodes are no longer each other's only peers: the tree moves 2S per node there too
    // (2·(7·1 + 2·10) µs = 54 µs of latency).
    const GroupLayout four = layoutGroup(s, 32, 1);
    CHECK(collectiveTime(s, four, Collective::AllReduce, 8e8) ==
          Approx(54e-6 + 2 * 8e8 / (0.92 * 8 * 10e9)).epsilon(1e-9));
    s.allReduceAlgorithm = AllReduceAlgorithm::Auto;
    // With SHARP in the network switches (all_reduce_speedup 2 on the outer tier) the
    // hierarchical schedule runs: reduce-scatter inside (2·7/8·0.8 GB/100 GB/s = 14.0 ms), the
    // S/8 share across (2·7/8·0.1 GB/10 GB/s / 2 = 8.75 ms), pipelined in 4 MiB chunks: the
    // latencies (2·7·1 + 2·7·10 µs = 154 µs), the slower stage, the faster for one chunk.
    s.tiers[1].allReduceSpeedup = 2.0;
    CHECK(collectiveTime(s, g, Collective::AllReduce, 8e8) ==
          Approx(154e-6 + 0.014 + 0.00875 / (8e8 / 4194304.0)).epsilon(1e-9));
}

TEST_CASE("A ring across nodes pays the network's latency on every step, at NCCL's fastest "
          "protocol") {
    // 16 ranks over two nodes of 8 (NVLink 100 GB/s, network 10 GB/s at the presets' 6 µs, so
    // NCCL's own network latencies), an all-gather: 15 steps, per byte 1.25e-11 (above).
    const System s = twoTier(100, 1, 10, 6, 16);
    const GroupLayout g = layoutGroup(s, 16, 1);
    // 64 KiB: LL, 6.6 µs + 15 · 5.0 µs + 61,440 B · max(2.5e-11, 1/39e9 on two nodes) = 83.18 µs
    // (LL128 14 + 127.5 µs + 0.83 µs, Simple 8.4 + 210 µs + 0.77 µs).
    CHECK(collectiveTime(s, g, Collective::AllGather, 65536.0) ==
          Approx(6.6e-6 + 15 * 5e-6 + 15.0 / 16 * 65536.0 / 39e9).epsilon(1e-9));
    // 16 MiB: LL128, 14 µs + 15 · 8.5 µs + 15,728,640 B · 1.25e-11 / 0.92 = 355.2 µs (LL 6.6 +
    // 75 + 403.3 µs, Simple 8.4 + 210 + 196.6 µs).
    CHECK(collectiveTime(s, g, Collective::AllGather, 16777216.0) ==
          Approx(14e-6 + 15 * 8.5e-6 + 15.0 / 16 * 16777216.0 * 1.25e-11 / 0.92).epsilon(1e-9));
    // 1 GiB: Simple, 8.4 µs + 15 · 14 µs + 1,006,632,960 B · 1.25e-11 = 12.801 ms.
    CHECK(collectiveTime(s, g, Collective::AllGather, 1073741824.0) ==
          Approx(8.4e-6 + 15 * 14e-6 + 15.0 / 16 * 1073741824.0 * 1.25e-11).epsilon(1e-9));
    // The per-step network latency is the tier's: at 3 µs it halves; NVLink's does not enter.
    System fast = s;
    fast.tiers[1].latencyS = 3e-6;
    fast.tiers[0].latencyS = 50e-6;
    CHECK(collectiveTime(fast, g, Collective::AllGather, 65536.0) ==
          Approx(6.6e-6 + 15 * 2.5e-6 + 15.0 / 16 * 65536.0 / 39e9).epsilon(1e-9));
    // Never faster with a slower network latency, at any size.
    System slow = s;
    slow.tiers[1].latencyS = 12e-6;
    for (double bytes : {1e3, 1e5, 1e7, 1e9})
        CHECK(collectiveTime(slow, g, Collective::AllGather, bytes) >
              collectiveTime(s, g, Collective::AllGather, bytes));
}

TEST_CASE("All-reduce across nodes with NVLink SHARP inside: NCCL's NVLS tree latency") {
    // Two nodes of 8 (NVLink 100 GB/s at 1 µs, network 10 GB/s at the presets' 6 µs), an
    // all-reduce of 1 MB. Without NVLS the tree chains the node's 8 GPUs: 2·(7·1 + 1·6) µs =
    // 26 µs, plus S over the node's 8 NICs at 0.92 (two nodes: S each way), 1e6 / 7.36e10 =
    // 13.587 µs: 39.587 µs.
    System s = twoTier(100, 1, 10, 6, 16);
    const GroupLayout g = layoutGroup(s, 16, 1);
    const double transfer = 1e6 / (0.92 * 8 * 10e9);
    CHECK(collectiveTime(s, g, Collective::AllReduce, 1e6) ==
          Approx(26e-6 + transfer).epsilon(1e-9));
    // With NVLS in the node (the scale-up tier's all_reduce_speedup above 1) the node reduces
    // in its switch: NCCL's NVLS tree, 25 µs for the NVLS step and 20.9 µs per network level
    // each way (src/graph/tuning.cc): 25 + 2·1·20.9 = 66.8 µs, plus the same transfer:
    // 80.387 µs. The ring would take 204.7 µs (30 steps at LL's 5 µs, 6.6 µs base, 1.875e6 B
    // at 39 GB/s), so the tree runs.
    s.tiers[0].allReduceSpeedup = 1.3;
    CHECK(collectiveTime(s, g, Collective::AllReduce, 1e6) ==
          Approx(66.8e-6 + transfer).epsilon(1e-9));
    // Four nodes: two levels each way, 25 + 4·20.9 = 108.6 µs, and 2S over the NICs.
    CHECK(collectiveTime(s, layoutGroup(s, 32, 1), Collective::AllReduce, 1e6) ==
          Approx(108.6e-6 + 2 * transfer).epsilon(1e-9));
    // The network levels scale with the tier's latency: at 3 µs they halve, 25 + 20.9 µs.
    s.tiers[1].latencyS = 3e-6;
    CHECK(collectiveTime(s, g, Collective::AllReduce, 1e6) ==
          Approx(45.9e-6 + transfer).epsilon(1e-9));
}

TEST_CASE("A two-node ring pools the node's NICs: all NICs against one by hand") {
    // 16 ranks over two nodes of 8 (NVLink 100 GB/s, no latency), an all-gather of 1.6 GB.
    // Eight NICs of 10 GB/s (one per GPU): per byte max(7/8 / 100e9, 1/(8·10e9)) = 1.25e-11,
    // 15/16 · 1.6e9 · 1.25e-11 = 18.75 ms, plus NCCL's Simple base latency, 8.4 µs (a
    // zero-latency network makes its steps free). One NIC per node (1.25 GB/s per GPU's share):
    // 1/(8·1.25e9) = 1e-10 per byte, 150 ms — eight times slower, all of it the network.
    const System all = twoTier(100, 0, 10, 0, 16);
    const System one = twoTier(100, 0, 1.25, 0, 16);
    const GroupLayout g = layoutGroup(all, 16, 1);
    CHECK(collectiveTime(all, g, Collective::AllGather, 1.6e9) ==
          Approx(0.01875 + 8.4e-6).epsilon(1e-9));
    CHECK(collectiveTime(one, g, Collective::AllGather, 1.6e9) ==
          Approx(0.15 + 8.4e-6).epsilon(1e-9));
    CHECK(collectiveTime(all, g, Collective::ReduceScatter, 1.6e9) ==
          Approx(0.01875 + 8.4e-6).epsilon(1e-9));
    // When NVLink is the narrower side (7/8 / 100e9 > 1/(8·20e9)), it paces the ring instead.
    const System fastNics = twoTier(100, 0, 20, 0, 16);
    CHECK(collectiveTime(fastNics, g, Collective::AllGather, 1.6e9) ==
          Approx(15.0 / 16 * 1.6e9 * 8.75e-12 + 8.4e-6).epsilon(1e-9));
    // All-reduce on two nodes: the tree sends S once each way per node (each node is the
    // other's only peer) over its 8 NICs at 0.92: 1.6e9 / (0.92 · 80e9) = 21.74 ms, against
    // the ring's 2·15/16 · 1.6e9 · 1.25e-11 + 8.4 µs = 37.51 ms: the tree wins, as NCCL
    // measures on two nodes (NVIDIA/nccl#812, nccl-tests#196: busbw above the NICs' line rate).
    CHECK(collectiveTime(all, g, Collective::AllReduce, 1.6e9) ==
          Approx(1.6e9 / (0.92 * 80e9)).epsilon(1e-9));
    System ring = all;
    ring.allReduceAlgorithm = AllReduceAlgorithm::Ring;
    CHECK(collectiveTime(ring, g, Collective::AllReduce, 1.6e9) ==
          Approx(0.0375 + 8.4e-6).epsilon(1e-9));
}

TEST_CASE("A group strided by the node size crosses the network, one GPU per node") {
    const System s = twoTier(100, 1, 10, 10);
    const GroupLayout g = layoutGroup(s, 8, 8);
    CHECK(g.factor[0] == 1);
    CHECK(g.factor[1] == 8);
    CHECK(collectiveTime(s, g, Collective::AllGather, 8e8) ==
          Approx(7 * 10e-6 + 7.0 / 8 * 8e8 / 10e9).epsilon(1e-9));
}

TEST_CASE("A scale-up domain that spans nodes (NVL72) keeps a 64-GPU group on NVLink") {
    System s = twoTier(900, 2, 50, 6, 1152);
    s.tiers[0].gpus = 72;
    s.gpusPerNode = 4;
    const GroupLayout g = layoutGroup(s, 64, 1);
    CHECK(g.factor[0] == 64);
    CHECK(g.factor[1] == 1);
}

TEST_CASE("In-switch reduction speeds up only the bandwidth term of an all-reduce") {
    System s = twoTier(100, 5, 10, 10);
    s.tiers[0].allReduceSpeedup = 2.0;
    const GroupLayout g = layoutGroup(s, 8, 1);
    CHECK(collectiveTime(s, g, Collective::AllReduce, 1e9) ==
          Approx(70e-6 + 0.0175 / 2).epsilon(1e-9));
    CHECK(collectiveTime(s, g, Collective::AllGather, 1e9) == Approx(0.008785).epsilon(1e-9));
}

TEST_CASE("Point-to-point uses the innermost tier holding both neighbours") {
    const System s = twoTier(100, 1, 10, 10);
    CHECK(p2pTime(s, 1, 1e8) == Approx(1e-6 + 1e8 / 100e9).epsilon(1e-12));
    CHECK(p2pTime(s, 8, 1e8) == Approx(10e-6 + 1e8 / 10e9).epsilon(1e-12));
    CHECK(p2pTime(s, 8, 0.0) == 0.0); // nothing to send: no latency either
}

TEST_CASE("All-to-all sends (n-1)/n of the buffer through the slowest tier it crosses") {
    const System s = twoTier(100, 1, 10, 10);
    const GroupLayout g = layoutGroup(s, 16, 1); // two nodes of 8
    // 8 of 16 peers are off-node: half the buffer crosses the 10 GB/s tier; 7 + 8 latencies.
    CHECK(collectiveTime(s, g, Collective::AllToAll, 1e9) ==
          Approx(0.5e9 / 10e9 + 7 * 1e-6 + 8 * 10e-6).epsilon(1e-9));
}

TEST_CASE("A flat all-to-all takes the tier's all-to-all share of its bandwidth but rings and "
          "DeepEP's per-node dispatch do not") {
    // Two nodes of 8 at 100 and 10 GB/s, α 1 and 10 µs; the network tier's all-to-all reaches
    // half its (ring) efficiency, as on the B200 cluster of nccl-tests-b200.json (its flat
    // all-to-all's inter-node half at 22.6 GB/s per GPU, its rings at the NIC's rate).
    System s = twoTier(100, 1, 10, 10);
    const System ring = s;
    s.tiers[1].allToAllEfficiency = 0.5;
    const GroupLayout g = layoutGroup(s, 16, 1);
    // Half the buffer crosses the network at 10 GB/s × 0.5: 0.5 GB / 5 GB/s + 7 + 8 latencies.
    CHECK(collectiveTime(s, g, Collective::AllToAll, 1e9) ==
          Approx(0.5e9 / 5e9 + 7 * 1e-6 + 8 * 10e-6).epsilon(1e-9));
    for (Collective op : {Collective::AllGather, Collective::ReduceScatter, Collective::AllReduce})
        CHECK(collectiveTime(s, g, op, 1e9) == collectiveTime(ring, g, op, 1e9));
    // A MoE dispatch: the flat one is the fabric's all-to-all, DeepEP's per-node one is not.
    MoeA2aRequest r;
    r.tokens = 4096;
    r.topK = 2;
    r.bytesPerToken = 4096;
    const MoeA2aTraffic flatHalf = moeAllToAll(s, g, r), flatRing = moeAllToAll(ring, g, r);
    REQUIRE(flatHalf.scaleOutBytes > 0);
    // The network bounds it: its bytes at 5 GB/s instead of 10 GB/s, the latencies alike.
    CHECK(flatHalf.timeS - flatHalf.latencyS == Approx(flatHalf.scaleOutBytes / 5e9).epsilon(1e-12));
    CHECK(flatRing.timeS - flatRing.latencyS == Approx(flatRing.scaleOutBytes / 10e9).epsilon(1e-12));
    r.dedupPerNode = true;
    CHECK(moeAllToAll(s, g, r).timeS == moeAllToAll(ring, g, r).timeS);
}

TEST_CASE("nccl-tests bus bandwidth definition") {
    // busbw = algbw · 2(n-1)/n (NCCL tests, PERFORMANCE.md)
    CHECK(allReduceBusBandwidth(8e9, 1.0, 8) == Approx(14e9));
}
