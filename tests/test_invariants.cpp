// Invariants over a randomized sweep of valid scenarios: every preset model and system, with
// random parallel degrees, batch, recompute, ZeRO stage (and ZeRO-3 coordinator) and overlap
// switches.
#include "madmax/memory.hpp"
#include "test_support.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>

using namespace madmax;

namespace {

std::vector<int> divisors(int n, int cap) {
    std::vector<int> d;
    for (int i = 1; i <= n && i <= cap; ++i)
        if (n % i == 0) d.push_back(i);
    return d;
}

/// Draw scenarios until `count` valid ones have been produced (fixed seed: reproducible).
std::vector<Scenario> randomScenarios(int count) {
    const auto& lib = PresetLibrary::builtin();
    std::vector<Model> models;
    for (const Preset* p : lib.list(PresetKind::Model)) {
        Model m = parseModel(p->json, p->origin, "model");
        if (!m.isDlrm()) models.push_back(std::move(m)); // DLRM: test_dlrm.cpp draws its own
    }
    std::vector<System> systems;
    for (const Preset* p : lib.list(PresetKind::System))
        systems.push_back(test::systemPreset(p->id));

    std::mt19937 rng(20241129);
    auto pick = [&](const auto& v) {
        return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)];
    };
    std::vector<Scenario> out;
    while (int(out.size()) < count) {
        Scenario s;
        s.model = pick(models);
        s.system = pick(systems);
        Strategy& st = s.strategy;
        st.tp = pick(divisors(s.model.kvHeads, 16));
        st.pp = pick(divisors(s.model.layers, 32));
        st.vp = st.pp > 1 ? pick(divisors(s.model.layers / st.pp, 4)) : 1;
        st.schedule = st.vp > 1 ? PipelineSchedule::Interleaved : PipelineSchedule::OneFOneB;
        st.cp = pick(std::vector<int>{1, 1, 2, 4});
        st.dp = pick(std::vector<int>{1, 2, 4, 8, 16, 32, 64});
        st.microBatch = pick(std::vector<int>{1, 2, 4});
        st.zeroStage = pick(std::vector<int>{0, 1, 2, 3});
        // DeepSpeed's legacy ZeRO-3 coordinator on half the dense ZeRO-3 draws.
        if (st.zeroStage == 3 && !s.model.isMoe() && rng() % 2)
            st.fsdpStyle = FsdpStyle::DeepSpeedLegacy;
        st.sequenceParallel = rng() % 2;
        st.tpCommOverlap = rng() % 2;
        st.dpOverlap = rng() % 4 != 0;
        st.recompute = Recompute(rng() % 3);
        s.workload.seqLen = pick(std::vector<int>{1024, 2048, 4096, 8192});
        s.workload.precision =
            pick(std::vector<Precision>{Precision::BF16, Precision::FP16, Precision::FP8});
        s.workload.attention = rng() % 3 ? AttentionKernel::Flash : AttentionKernel::Unfused;
        const int mbs = st.pp * pick(std::vector<int>{1, 2, 4});
        s.workload.globalBatch = st.dp * st.microBatch * mbs;
        s.gpus = st.tp * st.pp * st.cp * st.dp;
        if (!explainInvalid(s)) out.push_back(std::move(s));
    }
    return out;
}

Scenario scaled(Scenario s, double flops, double hbm, double net, double host = 1,
                double exps = 1) {
    for (auto& p : s.system.gpu.peakFlops)
        p *= flops;
    s.system.gpu.expPerS *= exps;
    s.system.gpu.hbmBytesPerS *= hbm;
    for (auto& t : s.system.tiers)
        t.bytesPerS *= net;
    s.system.gpu.calibration.hostOpS /= host;
    return s;
}

} // namespace

TEST_CASE("Invariants hold over 10,000 random valid scenarios") {
    const auto scenarios = randomScenarios(10000);
    REQUIRE(scenarios.size() == 10000);
    int failures = 0;
    for (const Scenario& s : scenarios) {
        const Result r = evaluate(s);
        const bool finitePositive =
            std::isfinite(r.stepTimeS) && r.stepTimeS > 0 && std::isfinite(r.mfu) && r.mfu > 0 &&
            std::isfinite(r.memory.totalBytes()) && r.memory.totalBytes() > 0 && r.computeS > 0 &&
            r.exposedCommS >= 0 && r.bubbleS >= 0;
        // More bandwidth (network or HBM), more FLOP/s or a faster host is never slower.
        const double faster = 1.0 + 1e-12;
        const bool netMonotone = evaluate(scaled(s, 1, 1, 2)).stepTimeS <= r.stepTimeS * faster;
        const bool hbmMonotone = evaluate(scaled(s, 1, 2, 1)).stepTimeS <= r.stepTimeS * faster;
        const bool flopsMonotone = evaluate(scaled(s, 2, 1, 1)).stepTimeS <= r.stepTimeS * faster;
        // A host that issues kernels twice as fast is never slower either.
        const bool hostMonotone = evaluate(scaled(s, 1, 1, 1, 2)).stepTimeS <= r.stepTimeS * faster;
        // Nor are special-function units with twice the exponential rate (softmax).
        const bool expMonotone =
            evaluate(scaled(s, 1, 1, 1, 1, 2)).stepTimeS <= r.stepTimeS * faster;
        const bool identity = std::fabs(r.stepTimeS - (r.computeS + r.exposedCommS + r.bubbleS)) <=
                              1e-9 * r.stepTimeS;
        if (!(finitePositive && netMonotone && hbmMonotone && flopsMonotone && hostMonotone &&
              expMonotone && identity)) {
            ++failures;
            if (failures <= 5) {
                INFO("scenario: " << toJson(s).dump());
                CHECK(finitePositive);
                CHECK(netMonotone);
                CHECK(hbmMonotone);
                CHECK(flopsMonotone);
                CHECK(hostMonotone);
                CHECK(expMonotone);
                CHECK(identity);
            }
        }
    }
    CHECK(failures == 0);
}

TEST_CASE("ZeRO-3 memory <= ZeRO-1 <= ZeRO-0, and recompute never adds activation memory, over "
          "10,000 scenarios") {
    int failures = 0;
    for (Scenario s : randomScenarios(10000)) {
        auto total = [&](int zero) {
            s.strategy.zeroStage = zero;
            return stageMemory(s, 0, s.model.layers / s.strategy.pp);
        };
        const auto z0 = total(0), z1 = total(1), z3 = total(3);
        const bool zeroOrder = z3.weightsBytes + z3.gradsBytes + z3.optimizerBytes <=
                                   z1.weightsBytes + z1.gradsBytes + z1.optimizerBytes &&
                               z1.totalBytes() <= z0.totalBytes();
        Strategy st = s.strategy;
        st.recompute = Recompute::None;
        const double none = layerActivationBytes(s.model, st, s.workload);
        st.recompute = Recompute::Selective;
        const double sel = layerActivationBytes(s.model, st, s.workload);
        st.recompute = Recompute::Full;
        const double full = layerActivationBytes(s.model, st, s.workload);
        const bool recomputeOrder = sel <= none && full <= sel;
        if (!(zeroOrder && recomputeOrder) && ++failures <= 5) {
            INFO("scenario: " << toJson(s).dump());
            CHECK(zeroOrder);
            CHECK(recomputeOrder);
        }
    }
    CHECK(failures == 0);
}

TEST_CASE("ZeRO-3 at a fixed global batch: throughput per GPU falls as the ranks grow") {
    // Llama 3 8B, FSDP over 64 → 2048 H100 at 2048 sequences per step: each GPU's share of the
    // compute shrinks while every layer's all-gather and reduce-scatter still crosses a ring of
    // all the ranks, whose n−1 network steps grow with n (issue #12).
    double last = 1e300;
    for (int g : {64, 128, 256, 512, 1024, 2048}) {
        const Scenario s = test::preset("llama3-8b-fsdp-64-h100",
                                        {"gpus=" + std::to_string(g),
                                         "strategy.dp=" + std::to_string(g),
                                         "workload.global_batch=2048"});
        const double perGpu = evaluate(s).tokensPerSPerGpu;
        INFO(g << " GPUs: " << perGpu << " tokens/s/GPU");
        CHECK(perGpu < last);
        last = perGpu;
    }
}
