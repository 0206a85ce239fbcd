// Serving as deployed in 2026 (issue #29): prefill/decode disaggregation, speculative decoding,
// prefix caching, redundant experts, both roofline sides, cost per token. Hand derivations on
// the toy and on the built-in serving presets.
#include "test_support.hpp"

#include "madmax/presets.hpp"
#include "madmax/report.hpp"
#include "madmax/scenario_io.hpp"
#include "madmax/serving.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace madmax;
using Catch::Matchers::Contains;

namespace {
/// The toy model served on the toy system: 1,000-token prompts, 100-token outputs, batch 8.
Scenario toyServing(test::Edits edits = {}) {
    test::Edits base = {{"workload", nlohmann::json{{"kind", "inference"},
                                                    {"input_tokens", 1000},
                                                    {"output_tokens", 100},
                                                    {"batch", 8},
                                                    {"precision", "bf16"}}}};
    base.insert(base.end(), edits.begin(), edits.end());
    return test::toy(base);
}
} // namespace

TEST_CASE("Speculative decoding: tokens per step is Leviathan et al.'s closed form") {
    InferenceWorkload w;
    CHECK(w.tokensPerStep() == 1.0); // no drafts
    w.draftTokens = 3;
    w.acceptanceRate = 0.8;
    // (1 − 0.8⁴) / (1 − 0.8) = 0.5904 / 0.2 = 2.952.
    CHECK(w.tokensPerStep() == Approx(2.952));
    w.acceptanceRate = 1.0;
    CHECK(w.tokensPerStep() == 4.0); // every draft accepted: k + 1
    w.acceptanceRate = 0.0;
    CHECK(w.tokensPerStep() == 1.0); // none accepted: the verified token alone
    // The engine's TPOT is the decode round over those tokens.
    const Result r = evaluate(toyServing({{"workload.draft_tokens", 3},
                                          {"workload.acceptance_rate", 0.8}}));
    CHECK(r.inference.tokensPerStep == Approx(2.952));
    const double round = r.inference.decodeS() + r.inference.prefillPerIterationS;
    CHECK(r.inference.tpotS == Approx(round / 2.952));
    CHECK(r.inference.draftS > 0);
}

TEST_CASE("Disaggregation: the KV cache sent per request, bytes and time by hand") {
    // Toy: 4 layers × 2 (K and V) × 8 KV heads × 128 × 2 B = 16,384 B per token; a 1,000-token
    // prompt is 16.384 MB, over the toy's 10 GB/s scale-out link at efficiency 1 and no latency:
    // 1.6384 ms.
    const Result r = evaluate(toyServing({{"workload.phase", "decode"}}));
    CHECK(r.inference.kvBytesPerToken == 16384.0);
    CHECK(r.inference.kvTransferBytes == 16384.0 * 1000);
    CHECK(r.inference.kvTransferS == Approx(16.384e6 / 10e9));
    // Aggregated serving sends nothing.
    CHECK(evaluate(toyServing()).inference.kvTransferS == 0.0);
}

TEST_CASE("Disaggregated with a free network is two independent pools") {
    // A decode pool's round is the aggregated round without its interleaved prefills; with the
    // network free its TTFT share is half a round, and the prefill pool's TTFT is the prompt.
    const test::Edits freeNet = {{"system.tiers.1.gbps", 1e6}};
    test::Edits agg = freeNet, dec = freeNet, pre = freeNet;
    dec.push_back({"workload.phase", "decode"});
    pre.push_back({"workload.phase", "prefill"});
    const Result a = evaluate(toyServing(agg)), d = evaluate(toyServing(dec)),
                 p = evaluate(toyServing(pre));
    CHECK(d.inference.tpotS ==
          Approx(a.inference.tpotS - a.inference.prefillPerIterationS).epsilon(1e-9));
    // (1e6 Gb/s leaves 0.13 µs of the 16 MB transfer: 1e-3 relative covers it.)
    CHECK(d.inference.ttftS == Approx(d.inference.tpotS / 2).epsilon(1e-3));
    CHECK(p.inference.ttftS == Approx(a.inference.ttftS - a.inference.tpotS / 2).epsilon(1e-3));
    // The prefill pool serves prompts: its throughput is prompt tokens, requests × prompt.
    CHECK(p.inference.inputTokensPerS == Approx(p.inference.requestsPerS * 1000));
    CHECK(p.tokensPerS == p.inference.inputTokensPerS);
}

TEST_CASE("Prefix caching removes prefill compute, not KV memory") {
    const Result none = evaluate(toyServing()), half = evaluate(toyServing(
                                                    {{"workload.prefix_cache_hit", 0.5}}));
    CHECK(half.inference.prefillComputeS < none.inference.prefillComputeS);
    CHECK(half.inference.ttftS < none.inference.ttftS);
    CHECK(half.inference.kvBytesPerSequence == none.inference.kvBytesPerSequence);
    CHECK(half.memory.kvCacheBytes == none.memory.kvCacheBytes);
}

TEST_CASE("An offloaded prefix cache loads its hits' KV layer by layer beside the prefill") {
    // Half of each 1,000-token prompt hits the cache: 500 tokens × 16,384 B (the toy's KV per
    // token, above) = 8.192 MB load into the GPU per prompt; at 1 GB/s, 8.192 ms.
    const test::Edits pool = {{"workload.phase", "prefill"},
                              {"workload.prefix_cache_hit", 0.5},
                              {"system.tiers.1.gbps", 1e6}};
    auto withTier = [&](test::Edits more) {
        test::Edits e = pool;
        e.insert(e.end(), more.begin(), more.end());
        return evaluate(toyServing(e));
    };
    const Result gpu = withTier({});
    const Result slow = withTier({{"workload.prefix_cache_tier", "host"},
                                  {"workload.prefix_cache_load_gbps", 1.0}});
    const Result fast = withTier({{"workload.prefix_cache_tier", "host"},
                                  {"workload.prefix_cache_load_gbps", 1e4}});
    CHECK(gpu.inference.prefixLoadS == 0.0);
    CHECK(slow.inference.prefixLoadS == Approx(8.192e-3).epsilon(1e-12));
    // A pass is the 8,192-token chunk: 8192 / 500 = 16.384 prompts, so D = 16.384 × 8.192 ms
    // of loads beside C, the pass's compute (the GPU tier's pass, the network free). Each of
    // the 4 layers loads before it computes: a two-stage pipeline, max(C, D) + min(C, D)/4.
    const double C = gpu.stepTimeS;
    const double slowD = 16.384 * 8.192e-3, fastD = slowD / 1e4;
    REQUIRE(slowD > C);
    CHECK(slow.stepTimeS == Approx(slowD + C / 4).epsilon(1e-9));
    CHECK(fast.stepTimeS == Approx(C + fastD / 4).epsilon(1e-9));
    // TTFT: one prompt, computing c and loading d = 8.192 ms, the same pipeline.
    const double c = gpu.inference.ttftS - gpu.inference.kvTransferS, d = 8.192e-3;
    CHECK(slow.inference.ttftS - slow.inference.kvTransferS ==
          Approx(std::max(c, d) + std::min(c, d) / 4).epsilon(1e-9));
    // The tier holds the cache, not the active sequences: GPU memory is unchanged.
    CHECK(slow.memory.kvCacheBytes == gpu.memory.kvCacheBytes);
    // Without a rate of its own the tier loads over the GPU's link to host memory.
    const Result host = withTier({{"workload.prefix_cache_tier", "host"},
                                  {"system.host_link_gbps", 2.0}});
    CHECK(host.inference.prefixLoadS == Approx(8.192e-3 / 2).epsilon(1e-12));
    CHECK(host.inference.prefixLoadBytesPerS == 2e9);
    CHECK(slow.inference.prefixLoadBytesPerS == 1e9);
    CHECK(gpu.inference.prefixLoadBytesPerS == 0.0);
    // Aggregated serving: the interleaved prefills carry the same loads, so they grow.
    const Result aggGpu = evaluate(toyServing({{"workload.prefix_cache_hit", 0.5}}));
    const Result aggSlow = evaluate(toyServing({{"workload.prefix_cache_hit", 0.5},
                                                {"workload.prefix_cache_tier", "host"},
                                                {"workload.prefix_cache_load_gbps", 1.0}}));
    CHECK(aggSlow.inference.prefillPerIterationS > aggGpu.inference.prefillPerIterationS);
    CHECK(aggSlow.inference.tpotS > aggGpu.inference.tpotS);
}

TEST_CASE("A finite benchmark runs its requests in waves, its throughput over the makespan") {
    // The toy serves 8 replicas (TP 1 on 8 GPUs) at batch 8: waves of C = 64 requests, each
    // 100 output rounds long. 160 requests: two full waves and a last one of 32, spread 4 a
    // replica, so makespan = TTFT + 2·100·TPOT(8) + 100·TPOT(4) (the last wave's rounds run
    // batch 4; TPOT is the round, one token a sequence per round without speculation).
    const Result steady8 = evaluate(toyServing());
    const Result steady4 = evaluate(toyServing({{"workload.batch", 4}}));
    const Result finite = evaluate(toyServing({{"workload.requests", 160}}));
    const double makespan =
        steady8.inference.ttftS + 200 * steady8.inference.tpotS + 100 * steady4.inference.tpotS;
    CHECK(finite.inference.waves == 3);
    CHECK(finite.inference.makespanS == Approx(makespan).epsilon(1e-12));
    CHECK(finite.inference.outputTokensPerS == Approx(160 * 100 / makespan).epsilon(1e-12));
    CHECK(finite.tokensPerS == finite.inference.outputTokensPerS);
    CHECK(finite.inference.requestsPerS == Approx(160 / makespan).epsilon(1e-12));
    CHECK(finite.inference.tpotS == steady8.inference.tpotS); // a full wave's round
    CHECK(finite.inference.outputTokensPerS < steady8.inference.outputTokensPerS);
    // Fewer requests than the batch holds: 20 run at once, ceil(20/8) = 3 a replica.
    const Result few = evaluate(toyServing({{"workload.requests", 20}}));
    const Result steady3 = evaluate(toyServing({{"workload.batch", 3}}));
    CHECK(few.inference.batch == 3);
    CHECK(few.inference.waves == 1);
    CHECK(few.inference.makespanS ==
          Approx(steady3.inference.ttftS + 100 * steady3.inference.tpotS).epsilon(1e-12));
    // Many waves tend to the steady state: 64,000 requests, 1,000 full waves.
    const Result many = evaluate(toyServing({{"workload.requests", 64000}}));
    CHECK(many.inference.outputTokensPerS ==
          Approx(steady8.inference.outputTokensPerS).epsilon(1e-4));
    // Without a request count nothing changes.
    CHECK(steady8.inference.makespanS == 0.0);
    CHECK(steady8.inference.waves == 0);
    // The latency-throughput curve sweeps steady states: a request count does not cap it.
    const auto endless = latencyThroughputCurve(toyServing(), 64);
    const auto bounded = latencyThroughputCurve(toyServing({{"workload.requests", 20}}), 64);
    REQUIRE(bounded.size() >= endless.size());
    for (const CurvePoint& p : bounded) {
        const auto same = std::find_if(endless.begin(), endless.end(),
                                       [&](const CurvePoint& q) { return q.batch == p.batch; });
        if (same == endless.end()) continue; // the capped operating point, an extra batch
        CHECK(p.outputTokensPerSPerGpu == same->outputTokensPerSPerGpu);
    }
    CHECK(bounded.back().batch == 64);
}

TEST_CASE("A decode round shows both sides of each roofline") {
    // The MLA decode batch the issue names (DeepSeek-V3, 960 sequences): the attention core is
    // math-bound there, so no KV-read time is charged, but its KV-read side is still reported.
    const Result r = evaluate(test::preset("serve-deepseek-v3-16xh200"));
    CHECK(r.inference.decodeKvReadS == 0.0);
    CHECK(r.inference.decodeKvSideS > 0.0);
    CHECK(r.inference.decodeAttentionSideS > r.inference.decodeKvSideS);
    // The KV side by hand: 61 layers, each sequence's 1,000 + 500.5 resident tokens of MLA
    // latent and rope key (512 + 64 FP8 bytes, DeepSeek-V3 config), at the decode HBM rate.
    const Scenario s = test::preset("serve-deepseek-v3-16xh200");
    const double bw = s.system.gpu.hbmBytesPerS * s.system.gpu.calibration.decodeMemoryEfficiency;
    CHECK(r.inference.decodeKvSideS ==
          Approx(61 * r.inference.batch * 1500.5 * 576.0 / bw).epsilon(1e-9));
    CHECK(r.inference.decodeWeightSideS > 0.0);
    CHECK(r.inference.decodeGemmSideS > 0.0);
    CHECK_THAT(formatReport(test::preset("serve-deepseek-v3-16xh200"), r),
               Contains("attention reads KV"));
}

TEST_CASE("Absorbed MLA decode runs its own kernel's efficiencies (FlashMLA's on Hopper)") {
    // calibration mla_decode_efficiency and mla_decode_memory_efficiency: the absorbed MLA
    // decode attention's share of the 16-bit peak and of HBM bandwidth. The H200 preset gives
    // the compute side only (H100's SM and clock: FlashMLA's, below), so its KV reads take
    // decode's own efficiency; halving both doubles both sides of the attention's roofline and
    // nothing else.
    const Scenario h200 = test::preset("serve-deepseek-v3-16xh200");
    const ComputeCalibration& cal = h200.system.gpu.calibration;
    CHECK(cal.mlaDecodeEfficiency == Approx(0.655));
    CHECK(cal.mlaDecodeMemoryEfficiency == cal.decodeMemoryEfficiency);
    const Result base = evaluate(h200);
    const Result half = evaluate(test::preset(
        "serve-deepseek-v3-16xh200",
        {"system.gpu.calibration.mla_decode_efficiency=" + std::to_string(cal.mlaDecodeEfficiency / 2),
         "system.gpu.calibration.mla_decode_memory_efficiency=" +
             std::to_string(cal.decodeMemoryEfficiency / 2)}));
    CHECK(half.inference.decodeAttentionSideS ==
          Approx(2 * base.inference.decodeAttentionSideS).epsilon(1e-9));
    CHECK(half.inference.decodeKvSideS == Approx(2 * base.inference.decodeKvSideS).epsilon(1e-9));
    CHECK(half.inference.decodeWeightSideS == base.inference.decodeWeightSideS);
    CHECK(half.inference.tpotS > base.inference.tpotS);
    // A prefill pool attends the heads' own way, in the fused kernel: untouched.
    const std::string prefill = "workload.phase=\"prefill\"";
    const std::vector<std::string> slowPrefill = {
        prefill, "system.gpu.calibration.mla_decode_efficiency=0.01"};
    CHECK(evaluate(test::preset("serve-deepseek-v3-16xh200", slowPrefill)).tokensPerS ==
          evaluate(test::preset("serve-deepseek-v3-16xh200", {prefill})).tokensPerS);
    // H800 and H100 carry FlashMLA's release figures on H800 SXM5 (README at b31bfe7): 580
    // TFLOP/s compute-bound, 3,000 GB/s memory-bound. The memory side is over 3.35 TB/s. The
    // compute side is over what the engine's attention rule allows (op_cost.hpp
    // attentionComputeS: tensor time plus one exponential a score): a score of absorbed MLA is
    // 2·(2·512 + 64) = 2,176 FLOPs, at 989 TFLOP/s plus 1 / 3.865e12 s, so 580 TFLOP/s is
    // 580 · (1/989 + 1/(3.865 · 2,176)) = 0.6554 of it (580/989 = 0.586 would count the
    // exponentials twice: inside the kernel's rate and again in the rule).
    const double allowed = 1.0 / (1.0 / 989.0 + 1.0 / (3.865 * 2176.0));
    CHECK(allowed == Approx(885.0).epsilon(1e-3));
    for (const char* gpu : {"h800-sxm5-80gb", "h100-sxm5-80gb", "h200-sxm-141gb"}) {
        const Preset* found = PresetLibrary::builtin().find(PresetKind::Gpu, gpu);
        REQUIRE(found);
        const Gpu g = parseGpu(found->json, found->origin, "gpu");
        CHECK(g.expPerS == Approx(3.865e12).epsilon(1e-9));
        CHECK(g.peak16() == Approx(989e12).epsilon(1e-9));
        CHECK(g.calibration.mlaDecodeEfficiency == Approx(580.0 / allowed).epsilon(2e-3));
        // FlashMLA's 3,000 GB/s was measured on H800's 3.35 TB/s HBM3; H200's HBM3e has no figure.
        if (g.hbmBytesPerS == Approx(3.35e12))
            CHECK(g.calibration.mlaDecodeMemoryEfficiency == Approx(3000.0 / 3350.0).epsilon(2e-3));
        else
            CHECK(g.calibration.mlaDecodeMemoryEfficiency == g.calibration.decodeMemoryEfficiency);
    }
    // So a compute-bound absorbed decode on H800 attends at FlashMLA's own 580 TFLOP/s: 64
    // sequences of 1,000 + 500.5 resident tokens, 128 heads, 61 layers, 2,176 FLOPs a score.
    const Result h800 = evaluate(test::preset(
        "serve-deepseek-v3-16xh200", {"system.gpu=\"h800-sxm5-80gb\"", "workload.batch=64"}));
    CHECK(h800.inference.decodeAttentionSideS ==
          Approx(61 * 64 * 1500.5 * 128 * 2176.0 / 580e12).epsilon(2e-3));
    // A model without MLA never reads them.
    const std::vector<std::string> low = {"system.gpu.calibration.mla_decode_efficiency=0.01"};
    CHECK(evaluate(test::preset("serve-llama2-70b-8xh100-offline", low)).inference.tpotS ==
          evaluate(test::preset("serve-llama2-70b-8xh100-offline")).inference.tpotS);
}

TEST_CASE("MLA decode absorbed or expanded: the expanded form's up-projection and K/V by hand") {
    // DeepSeek-V3 on H200 (TP1, attention DP), 64 sequences of 1,000 + 500.5 resident tokens.
    // Expanded (DeepSeek-V2 §2.1.2's naive form): each step up-projects every cached latent to
    // the 128 heads' keys and values, d_c = 512 → 128 × (128 + 128) = 32,768 outputs, so
    // 2 × 512 × 32,768 = 33,554,432 FLOPs a key in one GEMM, and writes them (16-bit) for a
    // standard attention of 2 × (192 + 128) FLOPs a score to read back: 131,072 bytes a key on
    // top of the 576-byte FP8 latent both forms read.
    const std::vector<std::string> at64 = {"workload.batch=64"};
    const std::vector<std::string> expandedEdits = {"workload.batch=64",
                                                    "workload.mla_decode=\"expanded\""};
    const Scenario s = test::preset("serve-deepseek-v3-16xh200", at64);
    const Result absorbed = evaluate(s);
    const Result expanded = evaluate(test::preset("serve-deepseek-v3-16xh200", expandedEdits));
    const Gpu& gpu = s.system.gpu;
    const double bw = gpu.hbmBytesPerS * gpu.calibration.decodeMemoryEfficiency;
    const double ctx = 1500.5;
    CHECK(expanded.inference.decodeKvSideS ==
          Approx(61 * 64 * ctx * (576.0 + 131072.0) / bw).epsilon(1e-9));
    // The math side: per micro-batch (two-batch overlap runs the 64 as two of 32), the
    // attention core at the expanded dimensions and the up-projection GEMM at its efficiency.
    const int halves = s.strategy.moeA2aOverlap ? 2 : 1;
    const double rows = 64.0 / halves, keys = rows * ctx, scores = keys * 128;
    const double core = (scores * 640 / gpu.peak16() + scores / gpu.expPerS) /
                        gpu.calibration.attentionEfficiency;
    const double up = keys * 33554432.0 /
                      (gpu.peak16() * gpu.calibration.gemmEfficiency(keys * 33554432.0));
    CHECK(expanded.inference.decodeAttentionSideS ==
          Approx(61 * halves * (core + up)).epsilon(1e-9));
    // Far slower than absorbed, as a step's work grows with context × heads; the prompt's
    // prefill (always the expanded form) and the weights are untouched.
    CHECK(expanded.inference.tpotS > 4 * absorbed.inference.tpotS);
    CHECK(expanded.inference.prefillComputeS == absorbed.inference.prefillComputeS);
    CHECK(expanded.inference.decodeWeightSideS == absorbed.inference.decodeWeightSideS);
    // A model without MLA refuses the switch, naming it; a saved scenario keeps it.
    CHECK_THAT(test::toyError({{"workload", {{"kind", "inference"}, {"input_tokens", 10},
                                             {"output_tokens", 10},
                                             {"mla_decode", "expanded"}}}}),
               Contains("mla_decode"));
    CHECK_THAT(test::toyError({{"workload", {{"kind", "inference"}, {"input_tokens", 10},
                                             {"output_tokens", 10}, {"mla_decode", "folded"}}}}),
               Contains("mla_decode"));
    const nlohmann::json once =
        toJson(test::preset("serve-deepseek-v3-16xh200", expandedEdits));
    CHECK(once["workload"]["mla_decode"] == "expanded");
    CHECK(toJson(parseScenario(once, "roundtrip")) == once);
}

TEST_CASE("Redundant experts: EP divides experts plus copies, weights grow with the copies") {
    // DeepSeek-V3/R1's decode unit (open-infra-index day 6): 256 experts + 32 redundant over
    // EP144, two per GPU.
    const std::vector<std::string> ep144 = {"gpus=144", "strategy.dp=144", "strategy.ep=144",
                                            "system=dgx-h100-superpod"};
    CHECK_THROWS_WITH(test::preset("serve-deepseek-v3-16xh200", ep144),
                      Contains("strategy.redundant_experts"));
    std::vector<std::string> with = ep144;
    with.push_back("strategy.redundant_experts=32");
    const Scenario s = test::preset("serve-deepseek-v3-16xh200", with);
    const Result r = evaluate(s);
    CHECK(r.inference.outputTokensPerS > 0);
    // 288 expert slots over 144 GPUs vs 256 over 128: 2 experts per GPU both ways, the same
    // weights per GPU.
    std::vector<std::string> ep128 = {"gpus=128", "strategy.dp=128", "strategy.ep=128",
                                      "system=dgx-h100-superpod"};
    CHECK(r.memory.weightsBytes ==
          Approx(evaluate(test::preset("serve-deepseek-v3-16xh200", ep128)).memory.weightsBytes));
    // Training routes to the model's experts only; a dense model has none to copy.
    CHECK_THROWS_WITH(test::preset("deepseek-v3-256-gb200", {"strategy.redundant_experts=32"}),
                      Contains("serving"));
    CHECK_THAT(test::toyError({{"strategy.redundant_experts", 2}}),
               Contains("mixture-of-experts"));
}

TEST_CASE("Serving's cost and energy per token follow price and power") {
    const Scenario s = test::preset("serve-deepseek-v3-16xh200");
    const Result r = evaluate(s);
    REQUIRE(s.system.pricePerGpuHour > 0);
    CHECK(r.inference.dollarsPerMillionTokens ==
          Approx(s.gpus * s.system.pricePerGpuHour / 3600 / r.tokensPerS * 1e6));
    if (s.system.gpu.powerW > 0)
        CHECK(r.inference.joulesPerToken == Approx(s.gpus * s.system.gpu.powerW / r.tokensPerS));
}

TEST_CASE("Serving deployment fields: each bad value names its field") {
    CHECK_THAT(test::toyError({{"workload", {{"kind", "inference"}, {"input_tokens", 10},
                                             {"output_tokens", 10}, {"prefix_cache_hit", 1.0}}}}),
               Contains("prefix_cache_hit"));
    CHECK_THAT(test::toyError({{"workload", {{"kind", "inference"}, {"input_tokens", 10},
                                             {"output_tokens", 10}, {"acceptance_rate", 0.7}}}}),
               Contains("draft_tokens"));
    CHECK_THAT(test::toyError({{"workload", {{"kind", "inference"}, {"input_tokens", 10},
                                             {"output_tokens", 10}, {"phase", "both"}}}}),
               Contains("phase"));
    CHECK_THAT(test::toyError({{"workload", {{"kind", "inference"}, {"input_tokens", 10},
                                             {"output_tokens", 10}, {"draft_tokens", 99}}}}),
               Contains("draft_tokens"));
    // The prefix cache's tier: a known name; a rate only for an offload tier, never negative;
    // an offload tier with no rate of its own and no host link is refused, naming both fixes.
    auto served = [](nlohmann::json extra) {
        nlohmann::json w = {{"kind", "inference"}, {"input_tokens", 10}, {"output_tokens", 10},
                            {"prefix_cache_hit", 0.5}};
        w.update(extra);
        return w;
    };
    CHECK_THAT(test::toyError({{"workload", served({{"prefix_cache_tier", "disk"}})}}),
               Contains("prefix_cache_tier"));
    CHECK_THAT(test::toyError({{"workload", served({{"prefix_cache_load_gbps", 5}})}}),
               Contains("prefix_cache_load_gbps") && Contains("prefix_cache_tier"));
    CHECK_THAT(test::toyError({{"workload", served({{"prefix_cache_tier", "host"},
                                                    {"prefix_cache_load_gbps", -1}})}}),
               Contains("prefix_cache_load_gbps"));
    CHECK_THAT(test::toyError({{"workload", served({{"prefix_cache_tier", "host"}})},
                               {"system.host_link_gbps", 0}}),
               Contains("prefix_cache_load_gbps") && Contains("host_link_gbps"));
    CHECK_THAT(test::toyError({{"workload", served({{"prefix_cache_tier", "host"},
                                                    {"prefix_cache_load_gbps", 1e-6}})}}),
               Contains("prefix_cache_load_gbps") && Contains("0.001"));
    // A finite benchmark: fixed-length requests all queued at once, offline and aggregated.
    for (const auto& [key, value] :
         std::vector<std::pair<std::string, nlohmann::json>>{{"mode", "server"},
                                                             {"phase", "decode"},
                                                             {"output_distribution", "uniform"}}) {
        INFO(key);
        CHECK_THAT(test::toyError({{"workload", served({{"requests", 100}, {key, value}})}}),
                   Contains("workload.requests") && Contains("set requests to 0"));
    }
    CHECK_THAT(test::toyError({{"workload", served({{"requests", -5}})}}), Contains("requests"));
    // A valid offload tier survives the file's round trip.
    const Scenario host = test::toy({{"workload", served({{"prefix_cache_tier", "host"},
                                                          {"prefix_cache_load_gbps", 5}})}});
    const nlohmann::json once = toJson(host);
    CHECK(once["workload"]["prefix_cache_tier"] == "host");
    CHECK(toJson(parseScenario(once, "roundtrip")) == once);
}

TEST_CASE("A deployment below capacity: a prefill pool idles, a decode pool runs a smaller batch") {
    // Mean load 0.5 (workload.mean_load): a prefill pool is busy half the time, so its prompt
    // tokens per second halve while each pass stays as it is at capacity.
    const test::Edits pool = {{"workload.phase", "prefill"}};
    test::Edits halfPool = pool;
    halfPool.push_back({"workload.mean_load", 0.5});
    const Result full = evaluate(toyServing(pool)), half = evaluate(toyServing(halfPool));
    CHECK(half.inference.inputTokensPerS == Approx(full.inference.inputTokensPerS / 2));
    CHECK(half.tokensPerS == half.inference.inputTokensPerS);
    CHECK(half.inference.requestsPerS == Approx(full.inference.requestsPerS / 2));
    CHECK(half.stepTimeS == full.stepTimeS);
    // Its prompts queue for it: an M/D/1 queue of service s = pass ÷ prompts (8,192-token
    // passes of 1,000-token prompts: 8.192 a pass), mean wait ρ·s / (2(1 − ρ)) = s/2 at 0.5.
    const double s = full.stepTimeS / 8.192;
    CHECK(half.inference.prefillQueueS == Approx(s / 2));
    CHECK(half.inference.ttftS == Approx(full.inference.ttftS + s / 2));
    CHECK(full.inference.prefillQueueS == 0.0); // saturated: the service alone, as offline
    CHECK(half.inference.poolLoad == 0.5);
    // Server mode with a TTFT objective D above the service: the load where the wait fits,
    // ρ = 2D / (s + 2D); here D = s, so ρ = 2/3 and the wait is exactly D.
    test::Edits server = pool;
    server.push_back({"workload.mode", "server"});
    server.push_back({"workload.ttft_objective_s", full.inference.ttftS + s});
    const Result capped = evaluate(toyServing(server));
    CHECK(capped.inference.poolLoad == Approx(2.0 / 3.0));
    CHECK(capped.inference.ttftS == Approx(full.inference.ttftS + s));
    CHECK(capped.inference.inputTokensPerS == Approx(full.inference.inputTokensPerS * 2 / 3));
    CHECK(capped.inference.meetsObjectives);
    // An objective below the service itself is not met at any load.
    server.back() = {"workload.ttft_objective_s", full.inference.ttftS / 2};
    CHECK_FALSE(evaluate(toyServing(server)).inference.meetsObjectives);
    CHECK(half.modelTflopsPerGpu == Approx(full.modelTflopsPerGpu / 2));
    // Cost per token doubles: the idle GPUs are paid for (servingCost's formula, above).
    // A decode pool at 0.5 of batch 8 holds 4 sequences: exactly the batch-4 pool's figures.
    const Result dec4 = evaluate(toyServing({{"workload.phase", "decode"}, {"workload.batch", 4}}));
    const Result decHalf = evaluate(toyServing(
        {{"workload.phase", "decode"}, {"workload.mean_load", 0.5}}));
    CHECK(decHalf.inference.batch == 4);
    CHECK(decHalf.inference.tpotS == dec4.inference.tpotS);
    CHECK(decHalf.inference.outputTokensPerS == dec4.inference.outputTokensPerS);
    // At least one sequence: 0.01 of batch 8 rounds to none, and one is served.
    CHECK(evaluate(toyServing({{"workload.mean_load", 0.01}})).inference.batch == 1);
    // Aggregated serving with no batch given holds its share of the largest that fits.
    const Result fits = evaluate(toyServing({{"workload.batch", 0}}));
    const Result fitsQuarter =
        evaluate(toyServing({{"workload.batch", 0}, {"workload.mean_load", 0.25}}));
    CHECK(fitsQuarter.inference.batch ==
          std::max(1, int(std::lround(0.25 * fits.inference.batch))));
    // Bad values name the field and the fix; a saved scenario keeps the load.
    auto served = [](nlohmann::json extra) {
        nlohmann::json w = {{"kind", "inference"}, {"input_tokens", 10}, {"output_tokens", 10}};
        w.update(extra);
        return w;
    };
    CHECK_THAT(test::toyError({{"workload", served({{"mean_load", 0}})}}), Contains("mean_load"));
    CHECK_THAT(test::toyError({{"workload", served({{"mean_load", 1.5}})}}),
               Contains("mean_load"));
    CHECK_THAT(test::toyError({{"workload", served({{"mean_load", "half"}})}}),
               Contains("mean_load"));
    CHECK_THAT(test::toyError({{"workload", served({{"mean_load", 0.5}, {"requests", 100}})}}),
               Contains("mean_load") && Contains("finite benchmark"));
    const nlohmann::json once = toJson(test::toy({{"workload", served({{"mean_load", 0.7}})}}));
    CHECK(once["workload"]["mean_load"] == 0.7);
    CHECK(toJson(parseScenario(once, "roundtrip")) == once);
    CHECK_FALSE(toJson(toyServing())["workload"].contains("mean_load")); // 1: not written
    // The latency-throughput curve sweeps the concurrency itself: a load only picks its point
    // (batch 4 of 8 here), which lies on the saturated curve.
    const auto saturated = latencyThroughputCurve(toyServing(), 16);
    const auto halfLoad = latencyThroughputCurve(toyServing({{"workload.mean_load", 0.5}}), 16);
    REQUIRE(halfLoad.size() == saturated.size()); // 4 and 8 are powers of two: no extra point
    for (std::size_t i = 0; i < halfLoad.size(); ++i) {
        CHECK(halfLoad[i].batch == saturated[i].batch);
        CHECK(halfLoad[i].tpotS == saturated[i].tpotS);
    }
}

TEST_CASE("A prefill pool's curve sweeps its load: TTFT's queueing against prompt throughput") {
    // The same pass at every load: prompt tokens/s per GPU is the load × the saturated pool's,
    // and TTFT is the service plus the M/D/1 wait ρ·s / (2(1 − ρ)), s = pass ÷ prompts (the
    // toy's 8,192-token passes of 1,000-token prompts). The scenario's own load is a point;
    // the saturated load is not (its TTFT is the service alone, as offline).
    const test::Edits pool = {{"workload.phase", "prefill"}, {"workload.mean_load", 0.66}};
    const Result full = evaluate(toyServing({{"workload.phase", "prefill"}}));
    const double s = full.stepTimeS / 8.192;
    const auto curve = latencyThroughputCurve(toyServing(pool));
    REQUIRE(curve.size() == std::size(kLoadCurve) + 1);
    bool own = false;
    for (std::size_t i = 0; i < curve.size(); ++i) {
        const CurvePoint& p = curve[i];
        INFO(p.load);
        CHECK(p.load < 1.0);
        own = own || p.load == 0.66;
        CHECK(p.promptTokensPerSPerGpu == Approx(p.load * full.tokensPerSPerGpu));
        CHECK(p.ttftS == Approx(full.inference.ttftS + p.load * s / (2 * (1 - p.load))));
        CHECK(p.tpotS == 0.0);
        if (i > 0) CHECK(p.ttftS > curve[i - 1].ttftS);
    }
    CHECK(own);
    // A decode pool's curve still sweeps its batch, with no prompt figure.
    for (const CurvePoint& p : latencyThroughputCurve(toyServing({{"workload.phase", "decode"}}), 8))
        CHECK(p.promptTokensPerSPerGpu == 0.0);
}

TEST_CASE("Prefill and decode pools balanced for the request mix, by hand on the toy") {
    // r_p, r_d: requests per second per GPU of each pool; the prefill share of the GPUs is
    // r_d / (r_p + r_d) (DistServe §4), each pool whole replicas (the toy's are one GPU).
    const Scenario pre = toyServing({{"workload.phase", "prefill"}});
    const Scenario dec = toyServing({{"workload.phase", "decode"}});
    const double rp = evaluate(pre).inference.requestsPerS / pre.gpus;
    const double rd = evaluate(dec).inference.requestsPerS / dec.gpus;
    const PoolBalance b = balancePools(pre, dec, 64);
    CHECK(b.prefillShare == Approx(rd / (rp + rd)));
    CHECK(b.prefillGpus + b.decodeGpus <= 64);
    CHECK(std::abs(b.prefillGpus - b.prefillShare * 64) <= 1.0);
    CHECK(b.requestsPerS ==
          Approx(std::min(rp * b.prefillGpus, rd * b.decodeGpus)));
    CHECK(b.outputTokensPerS == Approx(b.requestsPerS * 100));
    CHECK(b.tpotS == evaluate(dec).inference.tpotS);
    // Neither pool alone is the deployment: both phases named, one request mix.
    CHECK_THROWS_WITH(balancePools(dec, dec, 64), Contains("phase \"prefill\""));
    CHECK_THROWS_WITH(balancePools(pre, toyServing({{"workload.phase", "decode"},
                                                    {"workload.output_tokens", 50}}), 64),
                      Contains("one request mix"));
}

TEST_CASE("madmax pools sizes a disaggregated deployment from two pool scenarios") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("madmax-pools-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    for (const char* phase : {"prefill", "decode"}) {
        nlohmann::json doc =
            PresetLibrary::builtin().find(PresetKind::Scenario, "serve-deepseek-v3-16xh200")->json;
        doc["workload"]["phase"] = phase;
        std::ofstream(dir / (std::string(phase) + ".json")) << doc.dump();
    }
    std::string out;
    REQUIRE(test::runCli("pools " + (dir / "prefill.json").string() + " " +
                             (dir / "decode.json").string() + " --gpus 64 --json",
                         &out) == 0);
    const nlohmann::json j = nlohmann::json::parse(out);
    // Whole EP-16 groups on each side, the two together within the GPUs given.
    CHECK(j["prefill_gpus"].get<int>() % 16 == 0);
    CHECK(j["decode_gpus"].get<int>() % 16 == 0);
    CHECK(j["prefill_gpus"].get<int>() + j["decode_gpus"].get<int>() <= 64);
    CHECK(j["output_tokens_per_s"].get<double>() > 0);
    std::string err;
    CHECK(test::runCli("pools " + (dir / "decode.json").string() + " " +
                           (dir / "decode.json").string() + " --gpus 64",
                       nullptr, &err) == 2);
    CHECK_THAT(err, Contains("phase"));
    fs::remove_all(dir);
}

TEST_CASE("The serving search tries speculative settings and draws the throughput/TPOT front") {
    ServingSearchOptions o;
    o.draftTokens = {0, 1, 2};
    o.topN = 1000;
    const ServingSearchResult r = searchServing(test::preset("serve-deepseek-v3-16xh200"), o);
    REQUIRE(r.feasible > 0);
    bool drafted = false;
    for (const auto& c : r.top) drafted |= c.scenario.workload.inference.draftTokens > 0;
    CHECK(drafted);
    // The front: by rising TPOT, each faster per GPU than the one before, and nothing in the
    // search beats any of its points on both.
    REQUIRE_FALSE(r.pareto.empty());
    for (std::size_t i = 1; i < r.pareto.size(); ++i) {
        CHECK(r.pareto[i].tpotS >= r.pareto[i - 1].tpotS);
        CHECK(r.pareto[i].outputTokensPerSPerGpu > r.pareto[i - 1].outputTokensPerSPerGpu);
    }
    for (const auto& f : r.pareto)
        for (const auto& c : r.top)
            CHECK_FALSE((c.tpotS < f.tpotS && c.outputTokensPerSPerGpu > f.outputTokensPerSPerGpu));
}

TEST_CASE("The serving search sets aggregated against disaggregated on the same GPUs") {
    // Llama 2 70B on 8 H100: each pool's best layout is searched on half the GPUs with its phase
    // set, then the two are balanced over all 8 (balancePools): the plan is that balance, and
    // each pool's layout is a search result of its phase.
    const Scenario base = test::preset("serve-llama2-70b-8xh100-offline");
    const DisaggregatedPlan d = searchDisaggregated(base, {});
    REQUIRE(d.found);
    CHECK(d.prefill.scenario.workload.inference.phase == ServingPhase::Prefill);
    CHECK(d.decode.scenario.workload.inference.phase == ServingPhase::Decode);
    CHECK(d.pools.prefillGpus + d.pools.decodeGpus <= base.gpus);
    CHECK(d.pools.prefillGpus >= 1);
    CHECK(d.pools.decodeGpus >= 1);
    const PoolBalance again = balancePools(d.prefill.scenario, d.decode.scenario, base.gpus);
    CHECK(d.pools.outputTokensPerSPerGpu == Approx(again.outputTokensPerSPerGpu));
    CHECK(d.evaluated > 0);
    // A finite benchmark runs offline: under latency objectives the search refuses it by name.
    {
        Scenario offline = base;
        offline.workload.inference.requests = 3000;
        offline.workload.inference.outputDistribution = LengthDistribution::Fixed;
        ServingSearchOptions tpot;
        tpot.tpotObjectiveS = 0.05;
        CHECK_THROWS_WITH(searchServing(offline, tpot), Contains("workload.requests"));
        CHECK_FALSE(searchServing(offline, {}).top.empty());
    }
    // A finite benchmark is the aggregated engine's: its pools are planned as a stream.
    Scenario finite = base;
    finite.workload.inference.requests = 3000;
    const DisaggregatedPlan f = searchDisaggregated(finite, {});
    REQUIRE(f.found);
    CHECK(f.pools.outputTokensPerSPerGpu == Approx(d.pools.outputTokensPerSPerGpu));
    // A training scenario has no pools, and says why.
    const DisaggregatedPlan none = searchDisaggregated(test::preset("default"), {});
    CHECK_FALSE(none.found);
    CHECK_THAT(none.why, Contains("not a serving scenario"));
    // The command prints both, and its JSON carries the plan.
    std::string out, text;
    REQUIRE(test::runCli("search serve-llama2-70b-8xh100-offline --json", &out) == 0);
    const auto j = nlohmann::json::parse(out);
    REQUIRE(j.contains("disaggregated"));
    CHECK(j["disaggregated"]["found"] == true);
    CHECK(j["disaggregated"]["prefill"]["gpus"].get<int>() == d.pools.prefillGpus);
    REQUIRE(test::runCli("search serve-deepseek-v3-16xh200", &text) == 0);
    CHECK_THAT(text, Contains("Disaggregated on the same GPUs"));
}

TEST_CASE("A prefill pool whose KV cache leaves slower than it computes waits for the network") {
    // Each chunk's prompts send their KV cache while the next chunk computes: a pass lasts the
    // longer of the two. A pass is the default 8,192-token chunk, 8.192 prompts of 1,000; at
    // 0.01 GB/s the 16.384 MB each sends (above) takes 1.6384 s, 13.4217728 s a pass, far
    // longer than its prefill, so the pass is the sending; what it adds over the compute is
    // exposed communication (TP 1: the pass has no other), and the compute is the pass with a
    // free network.
    const Result fast = evaluate(toyServing({{"workload.phase", "prefill"},
                                             {"system.tiers.1.gbps", 1e6}}));
    const Result slow = evaluate(toyServing({{"workload.phase", "prefill"},
                                             {"system.tiers.1.gbps", 0.01}}));
    CHECK(slow.stepTimeS == Approx(8.192 * 1.6384).epsilon(1e-9));
    CHECK(slow.exposedCommS == Approx(slow.stepTimeS - fast.stepTimeS).epsilon(1e-6));
    CHECK(slow.compute.forwardS == Approx(fast.stepTimeS).epsilon(1e-6));
    // Its MFU: the pass's model FLOPs over the pass, the GPUs and their peak (100 TFLOP/s).
    CHECK(slow.mfu == Approx(slow.modelFlopsPerStep / (slow.stepTimeS * 8 * 100e12)).epsilon(1e-12));
}

TEST_CASE("A request's end-to-end latency is TTFT and a TPOT per further token") {
    // (output − 1) tokens after the first, each one TPOT (continuous batching's steady state).
    for (const char* phase : {"aggregated", "decode"}) {
        INFO(phase);
        const Result r = evaluate(toyServing({{"workload.phase", phase}}));
        CHECK(r.inference.e2eLatencyS ==
              Approx(r.inference.ttftS + 99 * r.inference.tpotS).epsilon(1e-12));
    }
}

TEST_CASE("The largest batch that fits fits, one more does not, even for tiny requests") {
    // Two-token prompts and outputs: a sequence's KV cache (4 tokens) weighs less than its
    // activations and fp32 logits (32,768 × 4 B), the case where iterating b ← ⌊free(b)/KV⌋
    // oscillates. The solve bisects: at its batch the deployment fits, one more does not.
    for (int tokens : {2, 16, 1000}) {
        INFO(tokens);
        const test::Edits e = {{"workload.input_tokens", tokens}, {"workload.output_tokens", tokens},
                               {"workload.batch", 0}};
        const int fit = evaluate(toyServing(e)).inference.maxBatchThatFits;
        REQUIRE(fit >= 1);
        test::Edits at = e, over = e;
        at.back() = {"workload.batch", fit};
        over.back() = {"workload.batch", fit + 1};
        CHECK(evaluate(toyServing(at)).memory.fits());
        CHECK_FALSE(evaluate(toyServing(over)).memory.fits());
    }
}
