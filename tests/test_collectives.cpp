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

TEST_CASE(
    "Hierarchical all-reduce: reduce-scatter inside, all-reduce of S/8 across, all-gather inside") {
    const System s = twoTier(100, 1, 10, 10);
    const GroupLayout g = layoutGroup(s, 64, 1);
    REQUIRE(g.factor[0] == 8);
    REQUIRE(g.factor[1] == 8);
    // inner: 2·7·1 µs latency, 2·7/8·0.8 GB/100 GB/s = 14.0 ms of transfer;
    // outer: 2·7·10 µs latency, 2·7/8·0.1 GB/10 GB/s = 17.5 ms of transfer.
    // Pipelined in 4 MiB chunks (NCCL): the latencies, the slower stage's transfer, and the
    // faster stage for one chunk: 0.154 ms + 17.5 ms + 14.0 ms / (8e8 / 4,194,304).
    CHECK(collectiveTime(s, g, Collective::AllReduce, 8e8) ==
          Approx(0.000154 + 0.0175 + 0.014 / (8e8 / 4194304.0)).epsilon(1e-9));
    // One stage after the other would take 31.654 ms: the pipeline hides the faster one.
    CHECK(collectiveTime(s, g, Collective::AllReduce, 8e8) < 0.0180);
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
}

TEST_CASE("All-to-all sends (n-1)/n of the buffer through the slowest tier it crosses") {
    const System s = twoTier(100, 1, 10, 10);
    const GroupLayout g = layoutGroup(s, 16, 1); // two nodes of 8
    // 8 of 16 peers are off-node: half the buffer crosses the 10 GB/s tier; 7 + 8 latencies.
    CHECK(collectiveTime(s, g, Collective::AllToAll, 1e9) ==
          Approx(0.5e9 / 10e9 + 7 * 1e-6 + 8 * 10e-6).epsilon(1e-9));
}

TEST_CASE("nccl-tests bus bandwidth definition") {
    // busbw = algbw · 2(n-1)/n (NCCL tests, PERFORMANCE.md)
    CHECK(allReduceBusBandwidth(8e9, 1.0, 8) == Approx(14e9));
}
