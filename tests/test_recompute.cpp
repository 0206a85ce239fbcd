// Partial full recompute (strategy.recompute_layers, Megatron-Core recompute_method "block"):
// the first n layers of each model chunk recompute their forward and keep only their input, the
// others keep everything. Expected numbers are derived by hand on the toy scenario (l = 4,
// h = 1024, a = g = 8 heads of d = 128, f = 4096 plain GELU, V = 32768, s = 1024, b = 1, flash
// attention, TP 1: test::toyScenario) from Korthikanti et al. 2022 Table 2.
#include "test_support.hpp"

#include "madmax/error.hpp"
#include "madmax/flops.hpp"
#include "madmax/memory.hpp"
#include "madmax/pipeline.hpp"
#include "madmax/presets.hpp"
#include "madmax/search.hpp"
#include "madmax/validation.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace madmax;
using nlohmann::json;

namespace {

using test::toy;

Scenario toyFull(int layers) {
    return toy({{"strategy.recompute", "full"}, {"strategy.recompute_layers", layers}});
}

std::string errorFor(const test::Edits& edits) { return test::toyError(edits); }

/// A toy MoE (8 experts, top 2, expert width 512, the first `dense` layers dense) on the toy
/// hardware: 32 GPUs, EP 8, micro-batch 1, 32 sequences of 1,024, full recompute of the first
/// layer of each model chunk (recompute_layers = 1).
Scenario toyMoeRecomputingOne(int layers, int dense, int pp, int vp, int dp) {
    json doc = json::parse(R"({
  "schema": "madmax-scenario/1",
  "name": "toy-moe",
  "model": {"id": "toy-moe", "arch": "moe", "hidden": 1024, "heads": 8,
            "kv_heads": 8, "head_dim": 128, "vocab": 32768, "gated_mlp": false,
            "ffn_hidden": 4096, "moe": {"experts": 8, "top_k": 2, "expert_ffn_hidden": 512}},
  "gpus": 32,
  "strategy": {"tp": 1, "ep": 8, "micro_batch": 1, "zero_stage": 0, "recompute": "full",
               "recompute_layers": 1},
  "workload": {"kind": "training", "global_batch": 32, "seq_len": 1024, "precision": "bf16",
               "attention": "flash"}
})");
    doc["model"]["layers"] = layers;
    doc["model"]["moe"]["dense_layers"] = dense;
    doc["strategy"]["pp"] = pp;
    doc["strategy"]["vp"] = vp;
    doc["strategy"]["dp"] = dp;
    doc["system"] = test::toySystem();
    return parseScenario(doc, "toy-moe");
}

// Korthikanti et al. 2022 Table 2 on the toy, flash attention (no score matrices), TP 1:
// a layer keeps sbh·34 = 1024·1024·34 = 35,651,584 B; under full recompute its input, 2sbh =
// 2,097,152 B. One micro-batch in flight (PP 1); the loss's fp32 logits 4sV = 134,217,728 B.
constexpr double kKeep = 35651584.0, kInput = 2097152.0, kLogits = 134217728.0;

} // namespace

TEST_CASE("Recompute layers: the first n of a chunk keep their input, the others everything") {
    // n = 1: three layers keep 34sbh, one keeps 2sbh; no rebuilt layer on top, because the kept
    // layers' backward runs first and frees more than the rebuilt one holds.
    CHECK(evaluate(toyFull(1)).memory.activationsBytes ==
          Approx(3 * kKeep + kInput + kLogits).epsilon(1e-12));
    // n = 2: two and two.
    CHECK(evaluate(toyFull(2)).memory.activationsBytes ==
          Approx(2 * kKeep + 2 * kInput + kLogits).epsilon(1e-12));
    // n = 3: one kept layer.
    CHECK(evaluate(toyFull(3)).memory.activationsBytes ==
          Approx(kKeep + 3 * kInput + kLogits).epsilon(1e-12));
    // Every layer (0, or n = the chunk's 4): four inputs, and the layer backward rebuilds holds
    // its activations beside them less its own input (already kept): 4·2sbh + 32sbh.
    const double all = 4 * kInput + (kKeep - kInput) + kLogits;
    CHECK(evaluate(toyFull(0)).memory.activationsBytes == Approx(all).epsilon(1e-12));
    CHECK(evaluate(toyFull(4)).memory.activationsBytes == Approx(all).epsilon(1e-12));
}

TEST_CASE("Recompute layers: the recomputed forward's time and FLOPs are n of the chunk's l") {
    const Result all = evaluate(toyFull(0));
    const Result none = evaluate(toy());
    REQUIRE(all.compute.recomputeS > 0);
    // Each recomputed layer runs the same forward again: n of the 4 layers take n/4 of it.
    for (int n = 1; n <= 4; ++n) {
        const Result r = evaluate(toyFull(n));
        INFO("n = " << n);
        CHECK(r.compute.recomputeS == Approx(all.compute.recomputeS * n / 4.0).epsilon(1e-12));
        // Hardware FLOPs add the recomputed layers' forward: (G + A) per token and layer, the
        // whole model's extra being 4 layers' worth under full recompute.
        CHECK(r.hardwareFlopsPerStep - r.modelFlopsPerStep ==
              Approx((all.hardwareFlopsPerStep - all.modelFlopsPerStep) * n / 4.0)
                  .epsilon(1e-12));
        CHECK(r.modelFlopsPerStep == Approx(none.modelFlopsPerStep).epsilon(1e-15));
        // The layers that keep their activations run the backward they run without recompute.
        CHECK(r.compute.backwardS == Approx(none.compute.backwardS).epsilon(1e-12));
    }
    // By hand, one layer recomputed: its forward GEMMs 2·(h(ad + 2gd) + adh + 2hf) =
    // 2·(3,145,728 + 1,048,576 + 8,388,608) = 25,165,824 FLOPs per token, and its attention
    // core QKᵀ and PV, 2·2·s·a·d = 4,194,304 per token (all 1,024 keys: the FLOP counts' non-
    // causal convention, Megatron SC21 Eq. 3); 16 sequences of 1,024 tokens.
    const Result one = evaluate(toyFull(1));
    CHECK(one.hardwareFlopsPerStep - one.modelFlopsPerStep ==
          Approx(16 * 1024 * (25165824.0 + 4194304.0)).epsilon(1e-12));
}

TEST_CASE("Recompute layers: more layers recomputed never save time and never cost memory") {
    double lastTime = evaluate(toy()).stepTimeS, lastMem = 1e300;
    for (int n = 1; n <= 4; ++n) {
        const Result r = evaluate(toyFull(n));
        INFO("n = " << n);
        CHECK(r.stepTimeS >= lastTime);
        CHECK(r.memory.totalBytes() <= lastMem);
        lastTime = r.stepTimeS;
        lastMem = r.memory.totalBytes();
    }
    // n = the whole chunk is full recompute of every layer, to the last digit.
    const Result four = evaluate(toyFull(4)), all = evaluate(toyFull(0));
    CHECK(four.stepTimeS == all.stepTimeS);
    CHECK(four.memory.totalBytes() == all.memory.totalBytes());
    CHECK(four.hardwareFlopsPerStep == Approx(all.hardwareFlopsPerStep).epsilon(1e-15));
}

TEST_CASE("Recompute layers count per model chunk: interleaved stages recompute n per chunk") {
    // 8 layers on PP 2 × VP 2: chunks of 2 layers; stage 0 holds chunks 0 and 2 (layers 0–1,
    // 4–5), stage 1 chunks 1 and 3. n = 1: one layer of each chunk, two per stage, four in all.
    const Scenario s = toy({{"model.layers", 8},
                            {"gpus", 16},
                            {"strategy.pp", 2},
                            {"strategy.vp", 2},
                            {"strategy.dp", 8},
                            {"strategy.recompute", "full"},
                            {"strategy.recompute_layers", 1}});
    CHECK(largestChunkLayers(s) == 2);
    const RecomputedLayers all = modelRecomputedLayers(s);
    CHECK(all.layers == 4);
    CHECK(all.moeLayers == 0);
    for (const PipelineStage& st : distinctStages(s)) {
        CHECK(st.layers == 4);
        CHECK(st.recomputedLayers == 2);
    }
    // A chunk of 2 layers cannot recompute 3.
    const std::string e = errorFor({{"model.layers", 8},
                                    {"gpus", 16},
                                    {"strategy.pp", 2},
                                    {"strategy.vp", 2},
                                    {"strategy.dp", 8},
                                    {"strategy.recompute", "full"},
                                    {"strategy.recompute_layers", 3}});
    CHECK_THAT(e, Catch::Contains("strategy.recompute_layers = 3 exceeds the 2 layers of a model "
                                  "chunk"));
}

TEST_CASE("Recompute layers on a MoE model: the leading dense layers come first") {
    // DeepSeek-V3 preset: 61 layers, the first 3 dense; PP 4 with 14 layers first, 15 last, 16
    // on each middle stage. n = 5: stage 0 recomputes layers 0–4 (3 dense, 2 MoE), every other
    // stage 5 MoE layers: 20 layers in all, 17 MoE.
    const Scenario s = test::preset("deepseek-v3-256-gb200",
                                    {"strategy.recompute=full", "strategy.recompute_layers=5"});
    const RecomputedLayers all = modelRecomputedLayers(s);
    CHECK(all.layers == 20);
    CHECK(all.moeLayers == 17);
    const PipelineStages stages = distinctStages(s);
    CHECK(stages.stage[0].recomputedLayers == 5);
    CHECK(stages.stage[0].recomputedMoeLayers == 2);
    CHECK(stages.stage[1].recomputedMoeLayers == 5); // the last stage
    // The stage with the most kept layers holds no less memory than under full recompute of
    // every layer, and no more than without recompute.
    const double part = peakMemory(s).activationsBytes;
    const double every =
        peakMemory(test::preset("deepseek-v3-256-gb200", {"strategy.recompute=full"}))
            .activationsBytes;
    const double none =
        peakMemory(test::preset("deepseek-v3-256-gb200", {"strategy.recompute=none"}))
            .activationsBytes;
    CHECK(part > every);
    CHECK(part < none);
}

TEST_CASE("Recompute layers: bad values name the field and the fix") {
    CHECK_THAT(errorFor({{"strategy.recompute_layers", 2}}),
               Catch::Contains("strategy.recompute_layers = 2") &&
                   Catch::Contains("applies to strategy.recompute = \"full\" only"));
    CHECK_THAT(errorFor({{"strategy.recompute", "full"}, {"strategy.recompute_layers", -1}}),
               Catch::Contains("recompute_layers") && Catch::Contains("out of range"));
    CHECK_THAT(errorFor({{"strategy.recompute", "full"}, {"strategy.recompute_layers", "two"}}),
               Catch::Contains("recompute_layers") && Catch::Contains("integer"));
    CHECK_THAT(errorFor({{"strategy.recompute", "full"}, {"strategy.recompute_layers", 1.5}}),
               Catch::Contains("recompute_layers"));
    CHECK_THAT(errorFor({{"strategy.recompute", "full"}, {"strategy.recompute_layers", 5}}),
               Catch::Contains("exceeds the 4 layers of a model chunk"));
    CHECK_THAT(errorFor({{"strategy.recompute", "full"},
                         {"strategy.recompute_layers", 1},
                         {"workload.frozen", json{{"layers", 2}}}}),
               Catch::Contains("recompute_layers with frozen layers") &&
                   Catch::Contains("not modelled"));
}

TEST_CASE("Recompute layers survive a save and load, and reports say them") {
    const Scenario s = toyFull(2);
    const Scenario back = parseScenario(toJson(s), "saved.json");
    CHECK(back.strategy.recompute == Recompute::Full);
    CHECK(back.strategy.recomputeLayers == 2);
    CHECK(recomputeLabel(back.strategy) == "full (first 2 layers of each chunk)");
    CHECK(recomputeLabel(toyFull(0).strategy) == "full");
    CHECK(strategySpec(back.strategy).find("recompute=full,recompute_layers=2") !=
          std::string::npos);
    // A baseline spec names it too, and reads back.
    CHECK(parseStrategySpec("recompute=full,recompute_layers=3", toy()).recomputeLayers == 3);
    // A baseline that says selective drops a scenario's layer count (it applies to full only).
    CHECK(parseStrategySpec("recompute=selective", s).recomputeLayers == 0);
}

TEST_CASE("Search: recompute_layers tries full recompute of the first n layers per chunk") {
    Scenario s = toy();
    SearchSpace space;
    parseRestriction("recompute=full,recompute_layers=1,2", space);
    REQUIRE(space.recomputeLayers == std::vector<int>{1, 2});
    SearchOptions o;
    o.topN = 1000;
    o.threads = 1;
    o.prune = false;
    const SearchResult r = search(s, space, o);
    REQUIRE_FALSE(r.top.empty());
    bool one = false, two = false;
    for (const Candidate& c : r.top) {
        CHECK(c.strategy.recompute == Recompute::Full);
        CHECK((c.strategy.recomputeLayers == 1 || c.strategy.recomputeLayers == 2));
        CHECK(c.strategy.recomputeLayers < largestChunkLayers([&] {
                  Scenario x = s;
                  x.strategy = c.strategy;
                  x.gpus = c.gpus;
                  return x;
              }()));
        one |= c.strategy.recomputeLayers == 1;
        two |= c.strategy.recomputeLayers == 2;
    }
    CHECK(one);
    CHECK(two);
    // Without the dimension, full recompute is of every layer only.
    SearchSpace plain;
    parseRestriction("recompute=full", plain);
    for (const Candidate& c : search(s, plain, o).top)
        CHECK(c.strategy.recomputeLayers == 0);
    CHECK_THROWS_AS(parseRestriction("recompute_layers=-1", space), InputError);
}

TEST_CASE("Recompute layers on an interleaved MoE: dense and MoE layers by their chunk positions") {
    // 8 layers, the first 3 dense, on PP 2 × VP 2 (chunks of 2 layers): stage 0 holds chunks 0
    // and 2 (layers 0–1 and 4–5), stage 1 chunks 1 and 3 (layers 2–3, 6–7). n = 1 recomputes
    // layers 0 and 4 on stage 0 (one dense, one MoE), 2 and 6 on stage 1: 4 in all, 2 MoE.
    const Scenario s = toyMoeRecomputingOne(8, 3, 2, 2, 16);
    const RecomputedLayers all = modelRecomputedLayers(s);
    CHECK(all.layers == 4);
    CHECK(all.moeLayers == 2);
    const PipelineStages stages = distinctStages(s);
    REQUIRE(stages.stage[0].first);
    CHECK(stages.stage[0].recomputedLayers == 2);
    CHECK(stages.stage[0].recomputedMoeLayers == 1); // layer 4; layer 0 is dense
    CHECK(stages.stage[1].recomputedMoeLayers == 2); // layers 2 and 6 are MoE
    // Hardware FLOPs add those four layers' forward: two dense and two MoE layers' GEMMs and
    // four attention cores per token, over 32 sequences of 1,024 tokens.
    const Result r = evaluate(s);
    const Model& m = s.model;
    const double perToken = 2 * layerGemmFlopsPerToken(m) + 2 * moeLayerGemmFlopsPerToken(m) +
                            4 * attentionFlopsPerToken(m, 1024);
    CHECK(r.hardwareFlopsPerStep - r.modelFlopsPerStep ==
          Approx(32 * 1024 * perToken).epsilon(1e-12));
}

TEST_CASE("Recompute layers over four even stages: each stage's chunk starts where it sits") {
    // 16 layers, the first 6 dense, PP 4 (no interleaving): stages hold layers 0–3, 4–7, 8–11
    // and 12–15. n = 1 recomputes layers 0, 4, 8 and 12: the first two dense, the last two MoE.
    const Scenario s = toyMoeRecomputingOne(16, 6, 4, 1, 8);
    const RecomputedLayers all = modelRecomputedLayers(s);
    CHECK(all.layers == 4);
    CHECK(all.moeLayers == 2);
}
