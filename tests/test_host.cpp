// The host launch bound: eager PyTorch issues every kernel from one CPU thread, and after a
// host sync (dropless MoE routing copies the token counts to the host) it issues nothing until
// the GPU has caught up. Where the host is slower than the GPU, the GPU idles.
#include "engine/layer_builder.hpp"
#include "engine/stream_sim.hpp"
#include "madmax/codesign.hpp"
#include "training/step.hpp"
#include "transformer/layer.hpp"
#include "madmax/validation.hpp"
#include "test_support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace madmax;
using madmax::detail::Phase;
using madmax::detail::SimOp;
using madmax::detail::StreamSim;

namespace {

SimOp compute(const char* label, double us, int kernels, bool sync = false, int dep = -1) {
    SimOp op;
    op.label = label;
    op.phase = Phase::Forward;
    op.durationS = us * 1e-6;
    op.kernels = kernels;
    op.hostSync = sync;
    op.deps = {dep, -1};
    return op;
}

} // namespace

TEST_CASE("Hand-derived host bound without a sync: a layer takes max(GPU, host)") {
    // Two ops, 10 µs (1 kernel) then 5 µs (3 kernels): 15 µs of GPU, 4 launches.
    auto layer = [](double hostUs) {
        StreamSim sim;
        const int a = sim.add(compute("A", 10, 1));
        sim.add(compute("B", 5, 3, false, a));
        sim.run();
        sim.addHostStalls(hostUs * 1e-6, "host launch stalls");
        return sim;
    };
    // 2 µs a launch: the host needs 8 µs, the GPU 15 — the GPU paces, nothing is added.
    const StreamSim fast = layer(2.0);
    CHECK(fast.makespanS() == Approx(15e-6));
    CHECK(fast.hostStallS() == 0.0);
    // 6 µs a launch: 24 µs of host, so the layer repeats every 24 µs; 9 µs of GPU idle.
    const StreamSim slow = layer(6.0);
    CHECK(slow.makespanS() == Approx(24e-6));
    CHECK(slow.hostStallS() == Approx(9e-6));
    CHECK(slow.busyS(Phase::Forward) == Approx(24e-6));
}

TEST_CASE("Hand-derived host bound with a sync: the cycle from the sync to the next one") {
    // A MoE layer in miniature: attention 100 µs (1 launch), router 10 µs (1 launch, then the
    // host waits for it), 16 expert GEMMs of 20 µs together, combine 30 µs (1 launch). GPU:
    // 160 µs. At 5 µs a launch the host spends 95 µs a layer, less than the GPU, yet it paces
    // the layer: from the router's end it issues the 16 expert launches (until 80 µs), the
    // combine (85), the next attention (90) and router (95). The combine runs 85–115, the
    // attention 115–215, the router 215–225: 225 µs a layer, 65 of them idle.
    auto layer = [](bool sync) {
        StreamSim sim;
        const int attn = sim.add(compute("attention", 100, 1));
        const int router = sim.add(compute("router", 10, 1, sync, attn));
        const int experts = sim.add(compute("experts", 20, 16, false, router));
        sim.add(compute("combine", 30, 1, false, experts));
        sim.run();
        return sim;
    };
    StreamSim sim = layer(true);
    CHECK(sim.makespanS() == Approx(160e-6));
    sim.addHostStalls(5e-6, "host launch stalls");
    CHECK(sim.makespanS() == Approx(225e-6));
    CHECK(sim.hostStallS() == Approx(65e-6));
    // With the same host cost but no sync the host runs ahead: 95 µs < 160 µs, no stall.
    StreamSim free = layer(false);
    free.addHostStalls(5e-6, "host launch stalls");
    CHECK(free.makespanS() == Approx(160e-6));
    CHECK(free.hostStallS() == 0.0);
}

TEST_CASE("Hand-derived host bound with two syncs: the segments between them add") {
    // A (50 µs, 1 launch, the host waits for it), B (50 µs, 10 launches), C (5 µs, 1 launch,
    // a second wait: GPT-OSS's clamped activation copies its offset to the GPU), D (50 µs, 10
    // launches), at 4 µs a launch. GPU: 155 µs; host: 22 launches, 88 µs.
    //   One sync (A): from A's end the host issues B (0–40, first kernel at 4), C (44), D
    //   (44–84, first at 48), A (88). B runs 4–54, C 54–59, D 59–109, A 109–159: 159 µs.
    //   Two syncs: B runs 4–54, C 54–59, and the host waits until 59; it issues D (59–99,
    //   first at 63) and A (103): D runs 63–113, A 113–163: 163 µs, 8 of them idle.
    auto layer = [](bool secondSync) {
        StreamSim sim;
        const int a = sim.add(compute("A", 50, 1, true));
        const int b = sim.add(compute("B", 50, 10, false, a));
        const int c = sim.add(compute("C", 5, 1, secondSync, b));
        sim.add(compute("D", 50, 10, false, c));
        sim.run();
        sim.addHostStalls(4e-6, "host launch stalls");
        return sim;
    };
    const StreamSim one = layer(false), two = layer(true);
    CHECK(one.makespanS() == Approx(159e-6));
    CHECK(one.hostStallS() == Approx(4e-6));
    CHECK(two.makespanS() == Approx(163e-6));
    CHECK(two.hostStallS() == Approx(8e-6));
    // A segment lasts at least as long as the host takes to issue it: A (1 µs, 1 launch) and B
    // (1 µs, 10 launches), each waited for, at 5 µs a launch. From A's end the host issues B's
    // ten kernels (0–50): B cannot end before 50. From B's end it issues A (5), which runs 5–6.
    // 50 + 6 = 56 µs a layer, more than the host's 55 µs in all.
    StreamSim tight;
    const int a = tight.add(compute("A", 1, 1, true));
    tight.add(compute("B", 1, 10, true, a));
    tight.run();
    tight.addHostStalls(5e-6, "host launch stalls");
    CHECK(tight.makespanS() == Approx(56e-6));
}

TEST_CASE("Host launch cost: CUDA graphs remove it, a GPU-bound dense step never sees it") {
    using test::preset;
    // The default scenario (dense, GPU-bound): the host cost changes nothing.
    const Result dense = evaluate(preset("default"));
    const Result denseNoHost = evaluate(preset("default", {"system.gpu.calibration.host_op_us=0"}));
    CHECK(dense.stepTimeS == denseNoHost.stepTimeS);
    CHECK(dense.compute.hostStallS == 0.0);
    // Qwen3-30B-A3B at micro-batch 1 on 8 B200 (Megatron-Bridge 25.11's row): 16 local experts
    // of 256 tokens each, and a host sync after every router — host-bound.
    const std::vector<std::string> b200 = {
        "model=qwen3-30b-a3b",       "system=dgx-b200-superpod", "gpus=8",
        "strategy.tp=1",             "strategy.pp=1",            "strategy.vp=1",
        "strategy.schedule=1f1b",    "strategy.ep=8",            "strategy.dp=8",
        "strategy.sequence_parallel=false", "strategy.recompute=none",
        "strategy.micro_batch=1",    "workload.global_batch=512", "workload.seq_len=4096",
        "workload.precision=fp8",    "workload.fp8_scaling=block"};
    const Result eager = evaluate(preset("default", b200));
    auto graphsSets = b200;
    graphsSets.push_back("strategy.cuda_graphs=true");
    const Result graphs = evaluate(preset("default", graphsSets));
    auto noHostSets = b200;
    noHostSets.push_back("system.gpu.calibration.host_op_us=0");
    const Result noHost = evaluate(preset("default", noHostSets));
    CHECK(graphs.stepTimeS == noHost.stepTimeS);
    CHECK(graphs.compute.hostStallS == 0.0);
    // Eager: most of the step is the GPU waiting for the host (the measured row runs at 9,299
    // tokens/s/GPU; the GPU alone would do about 2.7× that).
    CHECK(eager.compute.hostStallS > 0.5 * eager.stepTimeS);
    CHECK(eager.stepTimeS == Approx(eager.computeS + eager.exposedCommS + eager.bubbleS));
    CHECK(eager.tokensPerSPerGpu == Approx(9299).epsilon(0.05));
    CHECK(graphs.tokensPerSPerGpu > 2.0 * eager.tokensPerSPerGpu);
    // Current scaling quantises in three kernels (amax, scale, cast) where block scaling uses
    // one: two launches more per quantisation, so a host-bound layer idles longer.
    auto currentSets = b200;
    currentSets.back() = "workload.fp8_scaling=current";
    const Result current = evaluate(preset("default", currentSets));
    CHECK(current.compute.hostStallS > eager.compute.hostStallS);
    // A slower host is never faster, a faster one never slower.
    auto withHost = [&](double us) {
        auto sets = b200;
        sets.push_back("system.gpu.calibration.host_op_us=" + std::to_string(us));
        return evaluate(preset("default", sets)).stepTimeS;
    };
    CHECK(withHost(20) <= withHost(40));
    CHECK(withHost(40) <= withHost(80));
    CHECK(withHost(80) == Approx(2.0 * withHost(40)).epsilon(0.25)); // host-bound: ~linear
}

TEST_CASE("Co-design knob host_speed: a faster host speeds a host-bound step, not a GPU-bound one") {
    using test::preset;
    const Scenario bound = preset("qwen3-30b-a3b-8-b200-eager");
    const Scenario faster = scaleKnob(bound, "host_speed", 2.0);
    CHECK(faster.system.gpu.calibration.hostOpS ==
          Approx(bound.system.gpu.calibration.hostOpS / 2.0));
    CHECK(evaluate(faster).stepTimeS < 0.8 * evaluate(bound).stepTimeS);
    const Scenario dense = preset("default");
    CHECK(evaluate(scaleKnob(dense, "host_speed", 2.0)).stepTimeS == evaluate(dense).stepTimeS);
    CHECK(evaluate(scaleKnob(dense, "host_speed", 0.5)).stepTimeS == evaluate(dense).stepTimeS);
    CHECK_THROWS_WITH(scaleKnob(dense, "host_sped", 2.0),
                      Catch::Contains("did you mean \"host_speed\""));
}

TEST_CASE("Selective recompute of MLA issues its two up-projection GEMMs") {
    // MLA's selective recompute runs the query and the key/value up-projections again before
    // the attention core: two GEMMs, so two launches in bf16 (no input casts) for the host to
    // issue (LayerCosts::gemmKernels). Counted on the backward of one DeepSeek-V3 layer.
    const Scenario s = test::preset("deepseek-v3-256-gb200", {"strategy.recompute=selective",
                                                             "workload.precision=bf16"});
    REQUIRE(s.model.mla);
    const detail::StepContext ctx = detail::makeContext(s);
    const detail::LayerCosts c = detail::layerCosts(s, ctx.shape, ctx.oc, ctx.groups);
    StreamSim sim;
    detail::LayerBuilder b(sim, s.strategy);
    detail::attentionBackward(b, s, c, 2.0);
    int kernels = -1;
    for (int i = 0; i < sim.size(); ++i)
        if (std::string(sim.op(i).label) == "MLA up-projections (recompute)")
            kernels = sim.op(i).kernels;
    CHECK(kernels == 2);
}
