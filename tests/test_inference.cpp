// Inference serving (issue #5): KV cache and decode bytes by hand, invariants, objectives,
// the latency-throughput curve and the serving search.
#include "madmax/serving.hpp"
#include "madmax/strategy_space.hpp"
#include "madmax/search.hpp"
#include "test_support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>

using namespace madmax;

namespace {
Scenario tp2(const std::vector<std::string>& sets = {}) {
    return test::preset("serve-llama33-70b-2xh100-tp2", sets);
}
} // namespace

TEST_CASE("KV cache per token and per sequence, by hand") {
    // Llama 3.3 70B, TP2, FP8 cache: 80 layers × 2 (K and V) × (8 KV heads / 2) × 128 × 1 B.
    const Result r = evaluate(tp2());
    CHECK(r.inference.kvBytesPerToken == 80.0 * 2 * 4 * 128 * 1);
    // Admission reserves prompt + output: 1000 + 1000 tokens.
    CHECK(r.inference.kvBytesPerSequence == 81920.0 * 2000);
    CHECK(r.memory.kvCacheBytes == Approx(r.inference.batch * 81920.0 * 2000));
    // bf16 cache doubles it; TP8 leaves one KV head per GPU.
    CHECK(evaluate(tp2({"workload.kv_precision=bf16"})).inference.kvBytesPerToken ==
          80.0 * 2 * 4 * 128 * 2);
    const Result tp8 = evaluate(test::preset("serve-llama31-405b-8xh200"));
    CHECK(tp8.inference.kvBytesPerToken == 126.0 * 2 * 1 * 128 * 1);
    // The model's own count, whole (no TP split): K and V of its 8 KV heads of 128 a layer.
    CHECK(tp2().model.kvCacheElementsPerTokenPerLayer() == 2.0 * 8 * 128);
}

TEST_CASE("A batch-1 decode step reads every weight once, by hand") {
    const Scenario s = tp2({"workload.batch=1"});
    const Result r = evaluate(s);
    const Model& m = s.model;
    // Per GPU (TP2, FP8): the layers' matrices, 1 B per parameter, and the LM head, 2 B (an
    // FP8 checkpoint keeps it in BF16: NVIDIA's ModelOpt checkpoints list lm_head in
    // exclude_modules; DeepSeek-V3 §3.3.1 keeps the output head in BF16).
    const double perLayer =
        8192.0 * (64 * 128 / 2 + 2 * 4 * 128) + 64 * 128 / 2 * 8192.0 + 3 * 8192.0 * 28672 / 2;
    const double bytes = 80 * perLayer + 128256.0 * 8192 / 2 * 2;
    const double bw = s.system.gpu.hbmBytesPerS * s.system.gpu.calibration.decodeMemoryEfficiency;
    CHECK(r.inference.decodeWeightReadS ==
          Approx(bytes / bw).epsilon(0.01));  // + activation rows of batch 1
    CHECK(r.inference.decodeComputeS == 0.0); // nothing is compute-bound at batch 1
    CHECK(m.layers == 80);
}

TEST_CASE("Decode reads every sequence's resident KV cache") {
    const Scenario s = tp2({"workload.batch=64"});
    const Result r = evaluate(s);
    // Fixed 1000/1000: on average 1000 + 500.5 tokens resident per sequence.
    const double bw = s.system.gpu.hbmBytesPerS * s.system.gpu.calibration.decodeMemoryEfficiency;
    CHECK(r.inference.decodeKvReadS == Approx(64 * 1500.5 * 81920.0 / bw).epsilon(1e-9));
}

TEST_CASE("Prefill attention pays its softmax exponentials on top of its GEMMs") {
    // Llama 3.3 70B prefill on H100 (head dim 128): 512 tensor FLOPs per score (5.18e-13 s at
    // 989 TFLOP/s) and one exponential (2.59e-13 s at the preset's 3.865·10¹²/s), which add. The
    // exponentials' time E is ∝ 1 / rate, and nothing else in TTFT depends on it: twice the rate
    // saves E/2, a quarter of it costs 3E more, six times the saving.
    const Scenario base = tp2({"workload.batch=16"});
    const double ttft = evaluate(base).inference.ttftS;
    Scenario more = base, fewer = base;
    more.system.gpu.expPerS *= 2;
    fewer.system.gpu.expPerS /= 4;
    const double saved = ttft - evaluate(more).inference.ttftS;
    const double cost = evaluate(fewer).inference.ttftS - ttft;
    CHECK(saved > 0);
    CHECK(cost == Approx(6.0 * saved).epsilon(1e-6));
}

TEST_CASE("Serving invariants over random configurations") {
    std::mt19937 rng(5);
    int checked = 0;
    for (int i = 0; i < 400; ++i) {
        const std::vector<std::string> models = {"llama2-7b", "llama2-70b", "llama3-8b",
                                                 "llama33-70b"};
        Scenario s = tp2({"model=" + models[rng() % models.size()]});
        const auto tps = tpChoices(s.model, 8);
        s.strategy.tp = tps[rng() % tps.size()];
        s.gpus = s.strategy.tp;
        s.workload.inference.inputTokens = 1 + int(rng() % 4096);
        s.workload.inference.outputTokens = 1 + int(rng() % 2048);
        s.workload.seqLen = s.workload.inference.inputTokens + s.workload.inference.outputTokens;
        s.workload.inference.batch = 1 << (rng() % 9);
        s.workload.inference.outputDistribution = LengthDistribution(rng() % 3);
        if (explainInvalid(s)) continue;
        ++checked;
        const Result r = evaluate(s);
        REQUIRE(std::isfinite(r.inference.tpotS));
        CHECK(r.inference.tpotS > 0);
        CHECK(r.stepTimeS == Approx(r.computeS + r.exposedCommS + r.bubbleS));
        // More HBM bandwidth never raises TPOT.
        Scenario fast = s;
        fast.system.gpu.hbmBytesPerS *= 2;
        CHECK(evaluate(fast).inference.tpotS <= r.inference.tpotS * (1 + 1e-12));
        // A larger batch never lowers throughput; past the memory limit it is flagged.
        Scenario bigger = s;
        bigger.workload.inference.batch *= 2;
        const Result rb = evaluate(bigger);
        CHECK(rb.inference.outputTokensPerS >= r.inference.outputTokensPerS * (1 - 1e-9));
        if (rb.inference.batch > rb.inference.maxBatchThatFits)
            CHECK_FALSE(rb.memory.fits());
        else
            CHECK(rb.memory.fits());
    }
    CHECK(checked > 300);
}

TEST_CASE("Latency objectives pick the largest batch that meets them") {
    const Result free = evaluate(tp2());
    // Offline with an objective: the largest batch whose TPOT meets it; one more would not.
    const Result held = evaluate(tp2({"workload.tpot_objective_s=0.03"}));
    CHECK(held.inference.tpotS <= 0.03);
    CHECK(held.inference.batch < free.inference.batch);
    const Scenario plusOne = tp2({"workload.batch=" + std::to_string(held.inference.batch + 1)});
    CHECK(evaluate(plusOne).inference.tpotS > 0.03);
    // Server (Poisson arrivals): the mean batch leaves room for the 99th percentile in flight,
    // N + 2.33·√N, which itself meets the objective.
    const Result srv = evaluate(tp2({"workload.mode=server", "workload.tpot_objective_s=0.03"}));
    const double peak =
        std::ceil(srv.inference.batch + 2.33 * std::sqrt(double(srv.inference.batch)));
    CHECK(peak <= held.inference.batch);
    CHECK(srv.inference.batch < held.inference.batch);
    CHECK(srv.inference.tpotS <= 0.03);
    const Result impossible =
        evaluate(tp2({"workload.mode=server", "workload.ttft_objective_s=0.001"}));
    CHECK_FALSE(impossible.inference.meetsObjectives);
}

TEST_CASE("Server mode's batch is the largest whose 99th percentile meets the objective") {
    // The batch search probes where the objective's margin crosses zero; whatever it probes,
    // the answer must be the largest mean batch N whose peak ⌈N + 2.33·√N⌉, run offline,
    // meets the TPOT objective, and whose peak fits in memory.
    auto peak = [](int n) { return int(std::ceil(n + 2.33 * std::sqrt(double(n)))); };
    const int fit = evaluate(tp2()).inference.maxBatchThatFits;
    for (const char* objective : {"0.025", "0.03", "0.035", "0.05", "0.08", "0.2", "10"}) {
        INFO("TPOT objective " << objective);
        const Result srv = evaluate(
            tp2({"workload.mode=server", std::string("workload.tpot_objective_s=") + objective}));
        const int n = srv.inference.batch;
        REQUIRE(srv.inference.meetsObjectives);
        auto tpotAt = [&](int b) {
            return evaluate(tp2({"workload.batch=" + std::to_string(b)})).inference.tpotS;
        };
        const double limit = std::stod(objective);
        CHECK(peak(n) <= fit);
        CHECK(tpotAt(peak(n)) <= limit);
        CHECK((peak(n + 1) > fit || tpotAt(peak(n + 1)) > limit));
    }
    // Without objectives, server mode is bounded by the peak alone.
    const int n = evaluate(tp2({"workload.mode=server"})).inference.batch;
    CHECK(peak(n) <= fit);
    CHECK(peak(n + 1) > fit);
}

TEST_CASE("The batch solve ends on the largest meeting batch for MoE, speculation and TTFT") {
    // Whatever order the probes take (secant, chord or bisection), the answer is unique: the
    // largest mean batch whose peak, run offline, meets the objectives; one more does not. Here
    // on DeepSeek-V3 with two-batch overlap (TPOT bends where the experts turn compute-bound)
    // and on Llama with drafts and a TTFT objective as well.
    auto peak = [](int n) { return int(std::ceil(n + 2.33 * std::sqrt(double(n)))); };
    struct Case {
        const char* preset;
        double tpot, ttft; // objectives (0: none)
        int drafts;
    };
    for (const Case& c : {Case{"serve-deepseek-v3-16xh200", 0.05, 0, 0},
                          Case{"serve-deepseek-v3-16xh200", 0.03, 0, 0},
                          Case{"serve-llama33-70b-2xh100-tp2", 0.04, 0, 3},
                          Case{"serve-llama33-70b-2xh100-tp2", 0.05, 0.3, 0}}) {
        const std::vector<std::string> common = {"workload.draft_tokens=" +
                                                 std::to_string(c.drafts)};
        std::vector<std::string> server = common;
        server.push_back("workload.mode=server");
        server.push_back("workload.tpot_objective_s=" + std::to_string(c.tpot));
        if (c.ttft > 0) server.push_back("workload.ttft_objective_s=" + std::to_string(c.ttft));
        const Result srv = evaluate(test::preset(c.preset, server));
        const int n = srv.inference.batch;
        INFO(c.preset << " TPOT " << c.tpot << " TTFT " << c.ttft << " batch " << n);
        REQUIRE(srv.inference.meetsObjectives);
        REQUIRE(n > 1);
        // Offline at batch b, no objectives: the figures the probes compared.
        auto meetsAt = [&](int b) {
            std::vector<std::string> offline = common;
            offline.push_back("workload.batch=" + std::to_string(b));
            const Result r = evaluate(test::preset(c.preset, offline));
            return r.inference.tpotS <= c.tpot && (c.ttft <= 0 || r.inference.ttftS <= c.ttft);
        };
        CHECK(meetsAt(peak(n)));
        CHECK((peak(n + 1) > srv.inference.maxBatchThatFits || !meetsAt(peak(n + 1))));
    }
}

TEST_CASE("An objective batch 1 just misses is not met, one it just meets is, by batch 1") {
    // The solve starts its bracket at no batch, whose margin it only estimates (the weights'
    // read time), and probes batch 1 only when every batch above fails: an objective 0.1%
    // under batch 1's TPOT must still come out unmet, and 0.1% over it met at batch 1 or more.
    for (const char* preset : {"serve-llama33-70b-2xh100-tp2", "serve-deepseek-v3-16xh200"}) {
        INFO(preset);
        const double t1 = evaluate(test::preset(preset, {"workload.batch=1"})).inference.tpotS;
        auto at = [&](double objective) {
            return evaluate(test::preset(
                preset, {"workload.tpot_objective_s=" + std::to_string(objective)}));
        };
        const Result under = at(0.999 * t1);
        CHECK_FALSE(under.inference.meetsObjectives);
        CHECK(under.inference.batch == 1);
        const Result over = at(1.001 * t1);
        CHECK(over.inference.meetsObjectives);
        CHECK(over.inference.batch >= 1);
        CHECK(over.inference.tpotS <= 1.001 * t1);
    }
}

TEST_CASE(
    "The latency-throughput curve rises in both latency and throughput until memory runs out") {
    const auto curve = latencyThroughputCurve(tp2());
    REQUIRE(curve.size() >= 6);
    for (std::size_t i = 1; i < curve.size(); ++i) {
        CHECK(curve[i].tpotS >= curve[i - 1].tpotS);
        if (curve[i].fits)
            CHECK(curve[i].outputTokensPerSPerGpu >= curve[i - 1].outputTokensPerSPerGpu);
    }
    CHECK_FALSE(curve.back().fits); // the curve runs past the memory limit, flagged
}

TEST_CASE("The serving search maximises tokens/s per GPU under the objectives") {
    const Scenario base = test::preset("serve-llama2-70b-8xh100-offline");
    ServingSearchOptions o;
    o.tpotObjectiveS = 0.1;
    const ServingSearchResult r = searchServing(base, o);
    REQUIRE_FALSE(r.top.empty());
    CHECK(r.top.front().tpotS <= 0.1);
    for (std::size_t i = 1; i < r.top.size(); ++i)
        CHECK(r.top[i].score <= r.top[i - 1].score);
    // It beats the MLPerf layout held to the same objective.
    Scenario mlperf = base;
    mlperf.workload.inference.mode = ServingMode::Server;
    mlperf.workload.inference.tpotObjectiveS = 0.1;
    CHECK(r.top.front().outputTokensPerSPerGpu >=
          evaluate(mlperf).inference.outputTokensPerSPerGpu * (1 - 1e-9));
}

TEST_CASE("The serving search honours --restrict tp, pp and ep, and refuses what does not apply") {
    // `--restrict` had been ignored by the serving search: tp=3 still listed TP 1 layouts.
    const Scenario base = test::preset("serve-llama2-70b-8xh100-offline");
    ServingSearchOptions o;
    o.tp = {2};
    o.pp = {1, 2};
    const ServingSearchResult r = searchServing(base, o);
    REQUIRE_FALSE(r.top.empty());
    for (const auto& c : r.top) {
        CHECK(c.scenario.strategy.tp == 2);
        CHECK((c.scenario.strategy.pp == 1 || c.scenario.strategy.pp == 2));
    }
    o.tp = {3}; // divides none of Llama 2 70B's 64 heads
    CHECK(searchServing(base, o).evaluated == 0);
    // MoE: EP as restricted (DeepSeek-V3 on 16 H200).
    ServingSearchOptions e;
    e.ep = {8};
    for (const auto& c : searchServing(test::preset("serve-deepseek-v3-16xh200"), e).top)
        CHECK(c.scenario.strategy.ep == 8);
    // The training-shaped search of a serving scenario (design space, sweeps) passes them on.
    SearchSpace space;
    parseRestriction("tp=2", space);
    for (const auto& c : search(base, space, SearchOptions{}).top)
        CHECK(c.strategy.tp == 2);
    // Other GPU counts are not a serving search's to try: said, not ignored.
    parseRestriction("gpus=16", space);
    REQUIRE(explainSearchSpace(base, space));
    CHECK_THAT(*explainSearchSpace(base, space), Catch::Contains("runs at the scenario's 8 GPUs"));
    std::string out, err;
    CHECK(test::runCli("search serve-llama2-70b-8xh100-offline --restrict mb=2", &out, &err) == 2);
    CHECK_THAT(err, Catch::Contains("--restrict: mb: does not apply to a serving search"));
}

TEST_CASE("The serving operating point lies on its own latency-throughput curve") {
    // Issue #9: the explorer's operating point sat off its curve (server mode and objectives
    // pick a batch between the powers of two the curve swept).
    for (const char* id : {"serve-llama2-70b-8xh100-offline", "serve-llama2-70b-8xh100-server",
                           "serve-llama31-405b-8xh200", "serve-llama33-70b-2xh100-tp2"}) {
        INFO(id);
        const Scenario s = test::preset(id);
        const Result r = evaluate(s);
        const auto curve = latencyThroughputCurve(s);
        const auto at = std::find_if(curve.begin(), curve.end(), [&](const CurvePoint& p) {
            return p.batch == r.inference.batch;
        });
        REQUIRE(at != curve.end());
        CHECK(at->tpotS == Approx(r.inference.tpotS).epsilon(1e-9));
        CHECK(at->outputTokensPerSPerGpu ==
              Approx(r.inference.outputTokensPerSPerGpu).epsilon(1e-9));
    }
}

TEST_CASE("A decode pool's model FLOPs count generated tokens only, an aggregated one prompts too") {
    // 2 FLOPs per active parameter per token (Kaplan et al. 2020). One replica of TP2; fixed
    // 1000-token prompts and outputs with no prefix cache: an aggregated round also computes
    // 1000/1000 prompt tokens per generated one, a decode pool none (its prompts were prefilled
    // elsewhere).
    const Scenario agg = tp2();
    const Result a = evaluate(agg);
    const double params = agg.model.activeParams();
    CHECK(a.modelFlopsPerStep == Approx(2.0 * params * a.inference.batch * 2.0));
    const Result d = evaluate(tp2({"workload.phase=decode"}));
    CHECK(d.modelFlopsPerStep == Approx(2.0 * params * d.inference.batch));
}

TEST_CASE("The serving search's result does not depend on its thread count") {
    // The layouts are dealt round the threads (the pool's, evaluateLayouts) and their findings
    // put back in order: 1, 2, 7 threads and the search's own choice (0) find the same
    // configurations, counts, ranking and front.
    const Scenario base = test::preset("serve-deepseek-v3-16xh200");
    ServingSearchOptions o;
    o.draftTokens = {0, 1};
    o.topN = 1000;
    auto run = [&](int threads) {
        o.threads = threads;
        return searchServing(base, o);
    };
    const ServingSearchResult one = run(1);
    REQUIRE(one.top.size() > 10);
    for (int threads : {2, 7, 0}) {
        const ServingSearchResult many = run(threads);
        INFO(threads << " threads");
        CHECK(many.evaluated == one.evaluated);
        CHECK(many.feasible == one.feasible);
        REQUIRE(many.top.size() == one.top.size());
        REQUIRE(many.pareto.size() == one.pareto.size());
        for (std::size_t i = 0; i < one.top.size(); ++i) {
            CHECK(many.top[i].score == one.top[i].score);
            CHECK(many.top[i].scenario.strategy.tp == one.top[i].scenario.strategy.tp);
            CHECK(many.top[i].scenario.strategy.ep == one.top[i].scenario.strategy.ep);
            CHECK(many.top[i].batch == one.top[i].batch);
        }
        for (std::size_t i = 0; i < one.pareto.size(); ++i)
            CHECK(many.pareto[i].tpotS == one.pareto[i].tpotS);
    }
}

TEST_CASE("The serving search's kept prefill passes change no figure") {
    // The search keeps each layout's prefill passes across its draft lengths (PrefillMemo);
    // every configuration it reports must have exactly the figures evaluate() gives its
    // scenario alone, with and without a latency objective (whose batch search probes several
    // batches of one configuration).
    const Scenario base = test::preset("serve-deepseek-v3-16xh200");
    for (double tpot : {0.0, 0.05}) {
        ServingSearchOptions o;
        o.draftTokens = {0, 1, 2, 3};
        o.tpotObjectiveS = tpot;
        o.topN = 40;
        o.threads = 1;
        const ServingSearchResult r = searchServing(base, o);
        REQUIRE(r.top.size() >= 8);
        for (const ServingCandidate& c : r.top) {
            INFO("TPOT objective " << tpot << ", batch " << c.batch);
            const Result alone = evaluate(c.scenario);
            CHECK(alone.inference.outputTokensPerSPerGpu == c.outputTokensPerSPerGpu);
            CHECK(alone.inference.ttftS == c.ttftS);
            CHECK(alone.inference.tpotS == c.tpotS);
            CHECK(alone.inference.batch == c.batch);
        }
    }
    // The disaggregated plan sizes its pools from its candidates' scenarios: they must run the
    // batch the pool searches found (under an objective, the server-mode solve finds it again).
    ServingSearchOptions o;
    o.tpotObjectiveS = 0.05;
    const DisaggregatedPlan plan = searchDisaggregated(base, o);
    REQUIRE(plan.found);
    CHECK(evaluate(plan.decode.scenario).inference.batch == plan.decode.batch);
    CHECK(evaluate(plan.prefill.scenario).inference.batch == plan.prefill.batch);
}

TEST_CASE("Serving MFU is the model TFLOP/s per GPU against the GPU's peak") {
    // Llama 3.3 70B on 2 H100 in FP8: the model FLOPs per GPU per second over the FP8 peak.
    const Scenario s = tp2();
    const Result r = evaluate(s);
    REQUIRE(r.modelTflopsPerGpu > 0);
    CHECK(r.mfu == Approx(r.modelTflopsPerGpu * 1e12 / s.system.gpu.peak(Precision::FP8))
                       .epsilon(1e-12));
    CHECK(r.mfu < 1.0);
}
