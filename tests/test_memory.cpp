// Activation (Korthikanti et al. 2022) and ZeRO (Rajbhandari et al. SC20) memory by hand.
#include "madmax/file_io.hpp"
#include "madmax/memory.hpp"
#include "madmax/pipeline.hpp"
#include "madmax/presets.hpp"
#include "madmax/validation.hpp"
#include "test_support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace madmax;

namespace {
struct Gpt3 {
    Model m = test::modelPreset("gpt3-175b");
    Strategy st;
    Workload w;
    Gpt3() {
        w.seqLen = 2048;
        w.globalBatch = 1;
        w.attention = AttentionKernel::Unfused;
        st.microBatch = 1;
    }
    const double sbh = 2048.0 * 12288.0; // s·b·h with b = 1
};
} // namespace

TEST_CASE("Korthikanti Eq. 1: no parallelism keeps sbh(34 + 5as/h)") {
    Gpt3 g;
    // 5as/h = 5·96·2048/12288 = 80
    CHECK(layerActivationBytes(g.m, g.st, g.w) == Approx(g.sbh * (34 + 80)).epsilon(1e-12));
}

TEST_CASE("Korthikanti Eq. 2: TP without SP keeps sbh(10 + 24/t + 5as/(ht))") {
    Gpt3 g;
    g.st.tp = 8;
    CHECK(layerActivationBytes(g.m, g.st, g.w) == Approx(g.sbh * (10 + 3 + 10)).epsilon(1e-12));
}

TEST_CASE("Korthikanti Eq. 3: TP with SP divides everything by t") {
    Gpt3 g;
    g.st.tp = 8;
    g.st.sequenceParallel = true;
    CHECK(layerActivationBytes(g.m, g.st, g.w) == Approx(g.sbh * 114 / 8).epsilon(1e-12));
}

TEST_CASE("Korthikanti Eq. 5: selective recompute (or flash attention) drops the 5as/h term") {
    Gpt3 g;
    g.st.tp = 8;
    g.st.sequenceParallel = true;
    g.st.recompute = Recompute::Selective;
    CHECK(layerActivationBytes(g.m, g.st, g.w) == Approx(g.sbh * 34 / 8).epsilon(1e-12));
    g.st.recompute = Recompute::None;
    g.w.attention = AttentionKernel::Flash;
    CHECK(layerActivationBytes(g.m, g.st, g.w) == Approx(g.sbh * 34 / 8).epsilon(1e-12));
}

TEST_CASE("Full recompute keeps only 2sbh per layer (÷t with SP) - CP divides s") {
    Gpt3 g;
    g.st.recompute = Recompute::Full;
    CHECK(layerActivationBytes(g.m, g.st, g.w) == Approx(2 * g.sbh));
    g.st.tp = 8;
    g.st.sequenceParallel = true;
    CHECK(layerActivationBytes(g.m, g.st, g.w) == Approx(2 * g.sbh / 8));
    g.st.cp = 2;
    CHECK(layerActivationBytes(g.m, g.st, g.w) == Approx(g.sbh / 8));
}

TEST_CASE("A MoE layer keeps per routed copy its input and the expert's FFN tensors, not its "
          "output") {
    // GPT-OSS-120B (h = 2880, 64 query heads and 8 KV heads of 64, 128 experts of f_e = 2880,
    // top-4, gated), one 8,192-token micro-batch, TP 1, EP 64, flash attention, by hand:
    //   attention (Korthikanti, no score matrix): Q 2sb·ad + K,V 4sb·gd + projection input
    //   2sb·ad = sb(8192 + 2048 + 8192) = 18,432 sb; replicated (norm inputs, QKV and MLP
    //   inputs, dropout masks) 10sbh = 28,800 sb; the router's fp32 logits 4E = 512 sb;
    //   32,768 routed copies (8,192 tokens × top-4), each its dispatched input 2h = 5,760 B,
    //   the up-projection output and activation 2·2f_e + 2f_e = 17,280 B, and — GPT-OSS clamps
    //   the activation's inputs (glu_clamp 7), and Megatron-Core's quick-GeGLU saves the
    //   clamped concatenation for its fused kernel besides the output the clamps save — a
    //   second copy of the up-projection output, 2·2f_e = 11,520 B.
    // Megatron-Core applies the router probabilities inside the expert activation
    // (weighted_bias_swiglu / _quick_geglu take permuted_probs), so the combine is a plain sum:
    // no copy of the expert output (2h a copy, 189 MB here) is kept for its backward.
    Model m = test::modelPreset("gpt-oss-120b");
    Strategy st;
    st.ep = 64;
    st.dp = 64;
    Workload w;
    w.seqLen = 8192;
    w.globalBatch = 64;
    const double sb = 8192.0, copies = 8192.0 * 4;
    const double attention = sb * (18432 + 28800 + 512);
    CHECK(layerActivationBytes(m, st, w, true) ==
          Approx(attention + copies * (5760 + 17280 + 11520)).epsilon(1e-12)); // 1,523,580,928 B
    // Selective recompute (module moe_act) drops the activation output, 2f_e a copy, and the
    // clamped copy: the recomputed activation keeps only its input.
    st.recompute = Recompute::Selective;
    CHECK(layerActivationBytes(m, st, w, true) ==
          Approx(attention + copies * (5760 + 11520)).epsilon(1e-12));
}

TEST_CASE("A published MoE run that fit is not flagged: Qwen3-30B-A3B on 16 H100 without "
          "recompute") {
    // Megatron-Bridge 25.11 (performance summary, DGX-H100): Qwen3-30B-A3B on 16 H100, FP8-CS,
    // GBS 512, MBS 2, seq 4096, TP 1, PP 2, VP 24, EP 8, 5,275 tokens/s/GPU. Its performance
    // script (scripts/performance/configs/qwen/qwen3_llm_pretrain.py, set_qwen3_common_configs)
    // sets recompute_granularity = None: the run kept every activation and fit in 80 GB. Counting
    // a copy of each expert output per routed token (2h B), as this model once did, put it at
    // 90.7 GB, 10.7 GB over.
    const auto doc = readJsonFile(MADMAX_PUBLIC_DATASET);
    const auto& cases = doc.at("cases");
    const auto c = std::find_if(cases.begin(), cases.end(), [](const nlohmann::json& x) {
        return x.at("id") == "mbridge2511-qwen3-30b-a3b-dgx-h100-16-fp8";
    });
    REQUIRE(c != cases.end());
    Scenario s = scenarioForCase(*c, PresetLibrary::builtin(), "public.json");
    s.strategy.recompute = Recompute::None;
    REQUIRE(s.strategy.pp == 2);
    REQUIRE(s.strategy.vp == 24);
    REQUIRE(s.strategy.microBatch == 2);
    const MemoryBreakdown mem = peakMemory(s);
    INFO("total " << mem.totalBytes() / 1e9 << " GB of " << mem.capacityBytes / 1e9);
    CHECK(mem.fits());
}

TEST_CASE("In-flight micro-batches: 1F1B holds min(p - stage, m) - interleaving adds (p-1)/(pv)") {
    Strategy st;
    st.pp = 8;
    CHECK(inFlightMicroBatches(st, 64, 0) == 8);
    CHECK(inFlightMicroBatches(st, 64, 7) == 1);
    CHECK(inFlightMicroBatches(st, 4, 0) == 4);
    st.vp = 2;
    st.schedule = PipelineSchedule::Interleaved;
    CHECK(inFlightMicroBatches(st, 64, 0) == Approx(8 * (1 + 7.0 / 16)));
}

TEST_CASE(
    "ZeRO stages shard optimizer state, then gradients, then weights (Rajbhandari et al. §5)") {
    Scenario s = test::preset("llama3-8b-fsdp-64-h100");
    s.strategy.zeroStage = 0;
    const double P = s.model.totalParams(); // TP = PP = 1: every parameter on every GPU
    const double N = s.strategy.dp;
    const MemoryBreakdown z0 = stageMemory(s, 0, s.model.layers);
    CHECK(z0.weightsBytes == Approx(2 * P));
    CHECK(z0.gradsBytes == Approx(2 * P)); // bf16 gradient reduction
    CHECK(z0.optimizerBytes == Approx(12 * P));
    s.strategy.zeroStage = 1;
    const MemoryBreakdown z1 = stageMemory(s, 0, s.model.layers);
    CHECK(z1.optimizerBytes == Approx(12 * P / N));
    CHECK(z1.gradsBytes == Approx(2 * P));
    s.strategy.zeroStage = 2;
    const MemoryBreakdown z2 = stageMemory(s, 0, s.model.layers);
    CHECK(z2.gradsBytes == Approx(2 * P / N));
    s.strategy.zeroStage = 3;
    const MemoryBreakdown z3 = stageMemory(s, 0, s.model.layers);
    CHECK(z3.weightsBytes ==
          Approx(2 * P / N + 2 * 2 * s.model.paramsPerLayer())); // + 2 gathered layers
    CHECK(z3.totalBytes() < z2.totalBytes());
    CHECK(z2.totalBytes() < z1.totalBytes());
    CHECK(z1.totalBytes() < z0.totalBytes());
}

TEST_CASE("A model that does not fit is flagged with a negative margin") {
    // Llama 3.1 405B with 16 B/param of weights, grads and optimizer on 8 GPUs: ~810 GB each.
    const Scenario s = test::preset(
        "default", {"model=llama31-405b", "gpus=8", "strategy.dp=1", "strategy.pp=1",
                    "strategy.vp=1", "strategy.schedule=1f1b", "workload.global_batch=8"});
    const Result r = evaluate(s);
    CHECK_FALSE(r.memory.fits());
    CHECK(r.memory.marginBytes() < -500e9);
}

TEST_CASE("Activations of a GQA layer and of an MLA layer, by hand (Korthikanti Table 2 extended)") {
    // s = 4096, b = 1, TP 8 without SP, flash attention, no recompute.
    Strategy st;
    st.tp = 8;
    Workload w;
    w.seqLen = 4096;
    w.globalBatch = 1;
    w.attention = AttentionKernel::Flash;
    const double sb = 4096;
    // Llama 2 70B: split by TP: Q 2sb·64·128, K and V 4sb·8·128, the output projection's input
    // 2sb·64·128, the gated MLP 6sb·28672 = 208,896 sb; replicated 10sb·8192 = 81,920 sb.
    // 208,896/8 + 81,920 = 108,032 sb.
    const Model llama = test::modelPreset("llama2-70b");
    CHECK(layerActivationBytes(llama, st, w) == Approx(108032.0 * sb).epsilon(1e-12));
    // DeepSeek-V3's dense layers (MLA): Q 2sb·128·192, the up-projected K and V
    // 2sb·128·(192 + 128), the output projection's input 2sb·128·128, the gated MLP 6sb·18432:
    // 274,432 sb split; replicated 10sb·7168 plus the latents 2sb·(1536 + 512): 75,776 sb.
    // 274,432/8 + 75,776 = 110,080 sb.
    const Model ds = test::modelPreset("deepseek-v3");
    CHECK(layerActivationBytes(ds, st, w, false) == Approx(110080.0 * sb).epsilon(1e-12));
    // Selective recompute rebuilds the per-head Q, K and V from the latents: 143,360 sb split,
    // 17,920 + 75,776 = 93,696 sb.
    st.recompute = Recompute::Selective;
    CHECK(layerActivationBytes(ds, st, w, false) == Approx(93696.0 * sb).epsilon(1e-12));
}

TEST_CASE("A stage's memory by index holds that stage's own layers") {
    // Eight layers, the first four dense, on pp 2: stage 1 holds layers 4–7, all MoE. Asked by
    // index and layer count it is the stage distinctStages lays out, not the first four layers.
    const Scenario s = test::preset(
        "qwen3-30b-a3b-8-b200-eager",
        {"model.layers=8", "model.moe.dense_layers=4", "model.ffn_hidden=6144", "strategy.pp=2",
         "strategy.ep=4"});
    const PipelineStages st = distinctStages(s);
    REQUIRE(st.count == 2);
    REQUIRE(st.stage[1].moeLayers == 4);
    const MemoryBreakdown byIndex = stageMemory(s, 1, 4), laidOut = stageMemory(s, st.stage[1]);
    CHECK(byIndex.weightsBytes == laidOut.weightsBytes);
    CHECK(byIndex.activationsBytes == laidOut.activationsBytes);
}

TEST_CASE("Offloading MoE layers frees one MoE layer's activations per layer offloaded") {
    // Qwen3-30B-A3B (every layer MoE), offloading its first n layers: all but the last one
    // sent leave the GPU, so each further layer offloaded frees one MoE layer's activations
    // (for the micro-batches in flight) — the same amount each time.
    auto act = [](int n) {
        return peakMemory(test::preset("qwen3-30b-a3b-8-b200-eager",
                                       {"strategy.recompute=none",
                                        "strategy.offload_layers=" + std::to_string(n)}))
            .activationsBytes;
    };
    const double a1 = act(1), a2 = act(2), a3 = act(3);
    REQUIRE(a1 > a2);
    CHECK(a1 - a2 == Approx(a2 - a3).epsilon(1e-9));
}
