// FLOP counts against hand derivations and published conventions.
#include "madmax/flops.hpp"
#include "madmax/layer_gemms.hpp"
#include "test_support.hpp"

#include <catch2/catch.hpp>

using namespace madmax;

TEST_CASE("GPT layer GEMMs cost 24h^2 FLOPs per token (Narayanan et al. SC21, Eq. 3 derivation)") {
    const Model gpt = test::modelPreset("gpt3-175b");
    const double h = 12288;
    CHECK(layerGemmFlopsPerToken(gpt) == Approx(24.0 * h * h).epsilon(1e-12));
}

TEST_CASE("GQA and gated-MLP layer FLOPs: Llama 2 70B by hand") {
    // QKV 2·8192·(8192 + 2·8·128) + output 2·8192² + gated MLP 6·8192·28672.
    const Model m = test::modelPreset("llama2-70b");
    const double expected = 2.0 * 8192 * 10240 + 2.0 * 8192 * 8192 + 6.0 * 8192 * 28672;
    CHECK(expected == 1711276032.0);
    CHECK(layerGemmFlopsPerToken(m) == Approx(expected).epsilon(1e-12));
}

TEST_CASE("Hardware FLOPs with full recompute equal Megatron SC21 Eq. 3 for a GPT") {
    // 96·B·s·l·h²·(1 + s/6h + V/16lh): Narayanan et al. SC21, Eq. 3.
    const Model gpt = test::modelPreset("gpt3-175b");
    const double ours = hardwareFlopsPerStep(gpt, 1536, 2048, Recompute::Full);
    CHECK(ours == Approx(megatronSc21FlopsPerStep(gpt, 1536, 2048)).epsilon(1e-12));
}

TEST_CASE("Model FLOPs per token match the NeMo 24.07 table for Llama 2 70B") {
    // NeMo 24.07 performance summary: 759 model TFLOP/s/GPU at 1707 tokens/s/GPU
    // = 444.6 GFLOP per token (seq 4096). Our Megatron/PaLM convention must agree within 1%.
    const Model m = test::modelPreset("llama2-70b");
    const double perToken = modelFlopsPerStep(m, 1, 4096) / 4096;
    CHECK(perToken == Approx(759e12 / 1707).epsilon(0.01));
}

TEST_CASE("Parameter count of Llama 3 8B is exact") {
    // 8,030,261,248 parameters (the released model's safetensors index).
    CHECK(test::modelPreset("llama3-8b").totalParams() == 8030261248.0);
}

TEST_CASE("Selective recompute adds only the attention core") {
    const Model m = test::modelPreset("llama3-8b");
    const double base = modelFlopsPerStep(m, 8, 8192);
    const double sel = hardwareFlopsPerStep(m, 8, 8192, Recompute::Selective);
    CHECK(sel - base ==
          Approx(8.0 * 8192 * m.layers * attentionFlopsPerToken(m, 8192)).epsilon(1e-12));
    CHECK(hardwareFlopsPerStep(m, 8, 8192, Recompute::None) == base);
}

TEST_CASE("ViT: patch tokens, parameters and the classifier as published") {
    // Dosovitskiy et al. 2021 Table 1: ViT-L/16 307M, ViT-H/14 632M parameters; Dehghani et al.
    // 2023 Table 1: ViT-22B 21.7B. Tokens: (224/16)² + 1 = 197, (224/14)² + 1 = 257.
    const auto model = [](const char* id) {
        return parseModel(PresetLibrary::builtin().find(PresetKind::Model, id)->json, id, "model");
    };
    const Model l = model("vit-l-16"), h = model("vit-h-14"), g = model("vit-22b");
    CHECK(l.vitShape.tokens() == 197);
    CHECK(h.vitShape.tokens() == 257);
    CHECK(l.totalParams() == Approx(307e6).epsilon(0.02));
    CHECK(h.totalParams() == Approx(632e6).epsilon(0.02));
    CHECK(g.totalParams() == Approx(21.7e9).epsilon(0.02));
    // Bidirectional: every patch attends to all 197 tokens.
    CHECK_FALSE(l.causal);
    // The classifier runs once per image (2·1024·1000 FLOPs), the patch projection once per
    // patch (2·768·1024 each for 196 patches): spread over the 197 tokens,
    // (2,048,000 + 196·1,572,864) / 197 = 310,329,344 / 197 = 1,575,275.86 FLOPs per token.
    CHECK(lmHeadFlopsPerToken(l) == Approx(1575275.86).epsilon(1e-6));
    // An image of absurdly many patches is refused, not overflowed: (2^20 / 1)² + 1 tokens.
    nlohmann::json huge = PresetLibrary::builtin().find(PresetKind::Model, "vit-l-16")->json;
    huge["vit"]["image_size"] = 1 << 20;
    huge["vit"]["patch_size"] = 1;
    CHECK_THROWS_WITH(parseModel(huge, "m.json", "model"),
                      Catch::Contains("model.vit.image_size") && Catch::Contains("16,777,216"));
    // A sequence length other than the image's tokens is refused, naming the field.
    nlohmann::json doc = PresetLibrary::builtin().find(PresetKind::Scenario, "vit-22b-256-h100")->json;
    doc["workload"]["seq_len"] = 256;
    try {
        parseScenario(resolveScenario(doc, PresetLibrary::builtin(), "v.json"), "v.json");
        FAIL("no error");
    } catch (const InputError& e) {
        CHECK_THAT(std::string(e.what()), Catch::Contains("workload.seq_len") &&
                                              Catch::Contains("257"));
    }
}

// The layer's GEMM list (madmax/layer_gemms.hpp) is the one owner of the shapes that training,
// serving and FLOP counting read (issue #32); these hold it to the published configurations.

TEST_CASE("Layer GEMMs: Llama 2 70B on 8 and 16 tensor-parallel ranks by hand") {
    // h = 8192, 64 query heads and 8 KV heads of 128, gated MLP of 28672 (Touvron et al. 2023).
    const Model m = test::modelPreset("llama2-70b");
    const AttentionGemms tp8 = attentionGemms(m, 8);
    REQUIRE(tp8.count == 1);
    CHECK(tp8.projections[0].n == 64.0 * 128 / 8 + 2.0 * 128); // 1024 query + 2·128 K, V
    CHECK(tp8.projections[0].k == 8192);
    CHECK(tp8.output.n == 8192);
    CHECK(tp8.output.k == 1024);
    // TP 16 exceeds the 8 KV heads: each rank keeps one whole KV head (replicated), not half.
    const AttentionGemms tp16 = attentionGemms(m, 16);
    CHECK(tp16.projections[0].n == 512 + 2.0 * 128);
    const MlpGemms mlp = mlpGemms(m, double(m.ffnHidden), 8);
    CHECK(mlp.up.n == 2.0 * 3584); // gate and up, 28672 / 8 each
    CHECK(mlp.up.k == 8192);
    CHECK(mlp.down.n == 8192);
    CHECK(mlp.down.k == 3584);
    CHECK(routerGemm(m).n == 0); // dense: no router
}

TEST_CASE("Layer GEMMs: DeepSeek-V3's MLA projections by hand (DeepSeek-V2 §2.1)") {
    // h = 7168, 128 heads, q latent 1536, KV latent 512, nope 128, rope 64, v 128
    // (DeepSeek-V3 config.json); the down-projections whole, the up-projections split by heads.
    const Model m = test::modelPreset("deepseek-v3");
    const AttentionGemms g = attentionGemms(m, 4);
    REQUIRE(g.count == 4);
    CHECK(g.projections[0].n == 1536); // W_DQ
    CHECK(g.projections[0].k == 7168);
    CHECK(g.projections[1].n == 32.0 * 192); // W_UQ: 128/4 heads of 128 + 64
    CHECK(g.projections[1].k == 1536);
    CHECK(g.projections[2].n == 512 + 64); // W_DKV + W_KR
    CHECK(g.projections[2].k == 7168);
    CHECK(g.projections[3].n == 32.0 * 256); // W_UK + W_UV: 128 + 128 per head
    CHECK(g.projections[3].k == 512);
    CHECK(g.output.n == 7168);
    CHECK(g.output.k == 32.0 * 128);
    CHECK(g.queryUp.n == g.projections[1].n);
    CHECK(g.keyValueUp.k == 512);
    const GemmShape router = routerGemm(m);
    CHECK(router.n == 256); // 256 routed experts
    CHECK(router.k == 7168);
}

TEST_CASE("Layer GEMMs' FLOPs are twice the layer's weights, norms aside, for every model") {
    // An independent count: Model's parameter formulas (with the norms' h, and MLA's latent
    // norms), against the GEMM list's 2·N·K on one rank.
    for (const char* id : {"gpt3-175b", "llama2-70b", "llama31-405b", "deepseek-v3",
                           "mixtral-8x7b", "qwen3-235b-a22b", "gpt-oss-120b", "vit-22b"}) {
        INFO(id);
        const Model m = test::modelPreset(id);
        const double h = double(m.hidden);
        const double norms =
            m.mla ? h + double(m.mlaShape.kvLoraRank + m.mlaShape.qLoraRank) : h;
        CHECK(attentionGemmFlopsPerToken(m) == 2.0 * (m.attentionParamsPerLayer() - norms));
        if (m.ffnHidden > 0)
            CHECK(mlpGemms(m, double(m.ffnHidden), 1).flopsPerRow() ==
                  2.0 * (m.mlpParamsPerLayer() - h));
        if (m.isMoe())
            CHECK(mlpGemms(m, double(m.moe.expertFfn), 1).flopsPerRow() ==
                  2.0 * m.expertParams());
    }
}

TEST_CASE("Layer GEMMs: MLA without a query latent projects queries from the hidden state") {
    // DeepSeek-V2-Lite's form (q_lora_rank 0): W_Q (h → a·(nope + rope)) instead of W_DQ, W_UQ.
    Model m = test::modelPreset("deepseek-v3");
    m.mlaShape.qLoraRank = 0;
    const AttentionGemms g = attentionGemms(m, 8);
    REQUIRE(g.count == 3);
    CHECK(g.projections[0].n == 16.0 * 192); // 128/8 heads of 128 + 64
    CHECK(g.projections[0].k == 7168);
    CHECK(g.projections[1].n == 576);
    CHECK(g.projections[2].n == 16.0 * 256);
    // Its attention parameters: W_Q 7168·128·192 = 176,160,768 in place of the query latent's
    // 48,760,320 (DeepSeek-V3's, tested in test_moe.cpp); the KV side 7168·576 + 512 +
    // 512·128·256 = 20,906,496, W_O 117,440,512 and the norm's 7,168: 314,514,944.
    CHECK(m.attentionParamsPerLayer() == 314514944.0);
}

// Mutation survivors of seed 8 (issue #32): sliding-window attention's share of layers and
// FLOPs, and the training step's GEMM FLOPs with nothing frozen, each by hand.

TEST_CASE("Sliding-window attention: the windowed layers' share is a ceiling of layers / every") {
    // Gemma-style interleaving: layers 0, every, 2·every, … use the window, so
    // ceil(layers / every) of them do.
    Model m = test::modelPreset("llama2-70b");
    CHECK(windowedLayerFraction(m) == 0.0); // no window, no windowed layer
    m.slidingWindow = 1024;
    m.slidingWindowEvery = 2;
    m.layers = 36;
    CHECK(windowedLayerFraction(m) == Approx(18.0 / 36.0)); // 0.5
    m.layers = 5;
    CHECK(windowedLayerFraction(m) == Approx(3.0 / 5.0)); // layers 0, 2, 4
    m.slidingWindowEvery = 3;
    m.layers = 7;
    CHECK(windowedLayerFraction(m) == Approx(3.0 / 7.0)); // layers 0, 3, 6
    m.slidingWindowEvery = 1;
    CHECK(windowedLayerFraction(m) == 1.0);
}

TEST_CASE("Sliding-window attention FLOPs per token: Llama 2 70B's heads with a 1,024 window") {
    // 64 heads × 2·(128 + 128) FLOPs a score = 32,768 FLOPs per key. Every second layer of 80
    // windowed (half): at a 4,096 context, 32,768 × (0.5 × 4,096 + 0.5 × 1,024) = 83,886,080;
    // at 512, inside the window, every layer sees all 512 keys: 16,777,216.
    Model m = test::modelPreset("llama2-70b");
    CHECK(attentionFlopsPerToken(m, 4096) == Approx(32768.0 * 4096));
    m.slidingWindow = 1024;
    m.slidingWindowEvery = 2;
    CHECK(attentionFlopsPerToken(m, 4096) == Approx(83886080.0));
    CHECK(attentionFlopsPerToken(m, 512) == Approx(16777216.0));
}

TEST_CASE("Training GEMM FLOPs per step: three passes of 24h² a layer plus the LM head") {
    // GPT-3 175B, nothing frozen, one sequence of 2,048: forward, input gradient and weight
    // gradient each 2 FLOPs a weight a token: 3 × 2,048 × (96 × 24 × 12,288² + 2 × 12,288 ×
    // 51,200) = 2.14518e15 (Narayanan et al. SC21, Eq. 3 without the attention term).
    const Model gpt = test::modelPreset("gpt3-175b");
    REQUIRE(gpt.vocab == 51200); // the preset's padded vocabulary
    const double h = 12288;
    const double expected = 3.0 * 2048 * (96.0 * 24.0 * h * h + 2.0 * h * 51200);
    CHECK(trainingGemmFlopsPerStep(gpt, Frozen{}, 1, 2048) == Approx(expected).epsilon(1e-12));
    CHECK(expected == Approx(2.14518e15).epsilon(1e-5));
}

TEST_CASE("MoE layer GEMM FLOPs: attention, the k routed and the shared experts, the router") {
    // DeepSeek-V3 per token: MLA's projections 2·(11,010,048 + 37,748,736 + 4,128,768 +
    // 16,777,216 + 117,440,512) = 374,210,560 (the weights of test_moe.cpp's count without
    // the norms); 8 routed + 1 shared SwiGLU experts of 2,048, each 2·3·7168·2048 =
    // 88,080,384: 792,723,456; the router 2·7168·256 = 3,670,016. In all 1,170,604,032.
    const Model m = test::modelPreset("deepseek-v3");
    CHECK(moeLayerGemmFlopsPerToken(m) == 1170604032.0);
}
