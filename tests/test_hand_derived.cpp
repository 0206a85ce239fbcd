// The engine against numbers derived by hand, on a toy scenario with round hardware numbers
// (100 TFLOP/s, efficiency 0.5 everywhere a curve is, 1 TB/s HBM at efficiency 1, no launch
// overhead, no link latency, 100 GB/s NVLink in nodes of 8, 10 GB/s network). Each expected
// value is worked out in the comment above it from the formula's source, not from the code:
// change one constant of the physics and one of these goes red (tools/mutation-check.sh).
#include "test_support.hpp"

#include "engine/op_cost.hpp"
#include "madmax/collectives.hpp"
#include "madmax/flops.hpp"
#include "madmax/memory.hpp"
#include "madmax/report.hpp"

#include <catch2/catch.hpp>

using namespace madmax;
using nlohmann::json;

namespace {

// Toy model: l = 4, h = 1024, a = g = 8 heads of d = 128, f = 4096 (plain GELU MLP), V = 32768
// (test::toyScenario on the shared toy hardware).
using test::toy;

double seconds(const Result& r, ParallelDim d, Collective c, bool exposed = false) {
    const CommTime& t = r.comm[int(d)][int(c)];
    return exposed ? t.exposedS : t.serializedS;
}

using test::opSeconds;

// Parameters (Model::paramsPerLayer etc.), by hand:
//   attention h(ad + 2gd) + adh + h = 1024·3072 + 1024·1024 + 1024 = 4,195,328
//   MLP 2hf + h = 8,388,608 + 1024 = 8,389,632; a layer 12,584,960; four layers 50,339,840
//   embedding = LM head = Vh = 33,554,432; final norm 1024
//   one stage holding everything: 117,449,728
constexpr double kStageParams = 117449728.0;

} // namespace

TEST_CASE("Hand-derived: DP gradient all-reduce is a ring over the NVLink domain") {
    // ZeRO-0, DP 8 inside one node, dp_overlap off: every byte is exposed. Gradients in bf16:
    // 2 · 117,449,728 = 234,899,456 B. Ring all-reduce 2(n−1)/n · S / B (docs/developer/model.md §3, NCCL
    // tests' busbw): 1.75 · 234,899,456 / 1e11 = 4.110740e-3 s, however it is bucketed.
    const Result r = evaluate(toy({{"strategy.dp_overlap", false}}));
    CHECK(seconds(r, ParallelDim::DP, Collective::AllReduce) == Approx(4.110740e-3).epsilon(1e-6));
    CHECK(seconds(r, ParallelDim::DP, Collective::AllReduce, true) ==
          Approx(4.110740e-3).epsilon(1e-6));
}

TEST_CASE("Hand-derived: overlapped DP reduction exposes only what outlasts the backward pass") {
    // Buckets of 40 MB: ceil(234,899,456 / 4e7) = 6 buckets become ready at an even rate over
    // the last backward pass (b seconds) and are reduced one at a time (PyTorch DDP, Li et al.
    // VLDB 2020): they finish at max(b + T/6, b/6 + T) with T = 4.110740e-3 s; the exposed part
    // is that minus b. b is the engine's backward per micro-batch (pp = 1: the whole stage).
    const Result r = evaluate(toy());
    const double T = 4.110740e-3, b = r.backwardPerMicroBatchS;
    const double expected = std::min(T, std::max(b + T / 6, b / 6 + T) - b);
    CHECK(seconds(r, ParallelDim::DP, Collective::AllReduce, true) ==
          Approx(expected).epsilon(1e-6));
    CHECK(expected < T); // the overlap hides something here
}

TEST_CASE("Hand-derived: ZeRO-2 reduce-scatters after every micro-batch") {
    // Reduce-scatter (n−1)/n · S / B per pass = 0.875 · 234,899,456 / 1e11 = 2.055370e-3 s;
    // 16 sequences over DP 8 at micro-batch 1 = 2 micro-batches, so 2 passes = 4.110740e-3 s.
    // The updated bf16 weights come back by an all-gather of the same size: 2.055370e-3 s.
    const Result r = evaluate(toy({{"strategy.zero_stage", 2}, {"strategy.dp_overlap", false}}));
    CHECK(seconds(r, ParallelDim::DP, Collective::ReduceScatter) ==
          Approx(4.110740e-3).epsilon(1e-6));
    CHECK(seconds(r, ParallelDim::DP, Collective::AllGather) == Approx(2.055370e-3).epsilon(1e-6));
    CHECK(seconds(r, ParallelDim::DP, Collective::AllGather, true) ==
          Approx(2.055370e-3).epsilon(1e-6));
}

TEST_CASE("Hand-derived: the optimizer step streams Adam state through HBM") {
    // Adam reads and writes fp32 master, m and v (24 B), reads the bf16 gradient (2 B) and writes
    // bf16 weights (2 B): 28 B per parameter at 1 TB/s. ZeRO-0: 117,449,728 · 28 / 1e12 =
    // 3.288592e-3 s; ZeRO-1 over 8 ranks: an eighth, 4.110740e-4 s.
    CHECK(evaluate(toy()).compute.optimizerS == Approx(3.288592e-3).epsilon(1e-6));
    CHECK(evaluate(toy({{"strategy.zero_stage", 1}})).compute.optimizerS ==
          Approx(4.110740e-4).epsilon(1e-6));
}

TEST_CASE("Hand-derived: op durations of one layer on the roofline") {
    EvaluateOptions withTimeline;
    withTimeline.timeline = true;
    const Result r = evaluate(toy(), withTimeline);
    // Causal flash attention (Dao 2022): 4·T·s·a·d / 2 = 4·1024·1024·1024 / 2 = 2.147484e9 FLOPs
    // at 100 TFLOP/s · 0.5 = 4.294967e-5 s; backward 2.5× (FlashAttention-2 §3.1) at 0.69 of the
    // forward's efficiency (FlashAttention-3: 561 against 648 TFLOP/s) 1.073742e-4 / 0.69 =
    // 1.556148e-4 s. The toy GPU has no exponential rate, so no softmax time is added.
    CHECK(opSeconds(r, "attention core") == Approx(4.294967e-5).epsilon(1e-6));
    CHECK(opSeconds(r, "attention core (bwd)") == Approx(1.556148e-4).epsilon(1e-6));
    // MLP up GEMM 2·T·f·h = 2·1024·4096·1024 = 8.589935e9 FLOPs → 1.717987e-4 s (compute-bound:
    // its 14.7 MB take 1.5e-5 s at 1 TB/s); backward of the down GEMM is 2× its forward.
    CHECK(opSeconds(r, "MLP up GEMM") == Approx(1.717987e-4).epsilon(1e-6));
    CHECK(opSeconds(r, "MLP down GEMM (bwd)") == Approx(3.435974e-4).epsilon(1e-6));
    // Residual add + dropout after the MLP: 7 passes of half-width traffic and 2 full passes over
    // T·h bf16 elements = 11 · 1,048,576 B = 1.153434e-5 s.
    CHECK(opSeconds(r, "residual") == Approx(1.153434e-5).epsilon(1e-6));
    // Each op is named once for its direction (a regression: backward ops read "(bwd) (bwd)").
    for (const auto& e : r.timeline)
        CHECK(e.label.find("(bwd) (bwd)") == std::string::npos);
}

TEST_CASE("Hand-derived: a GEMM's per-row rates give gemmBoundsAt's bounds") {
    // The serving engine keeps each weight's rates (detail::GemmRates) and asks them at every
    // probe's rows. An 8192 x 28672 FP8 weight on a toy GPU (1 PFLOP/s at scale 0.8, 2 TB/s at
    // efficiency 0.9): its reads 8192·28672·1 B / 1.8e12 B/s = 130.50 us; per row
    // (8192 + 28672)·2 B / 1.8e12 = 40.96 ns; math per row 2·8192·28672 / 0.8e15 = 587.2 ns.
    Gpu gpu;
    gpu.hbmBytesPerS = 2e12;
    const detail::GemmPrecision fp8{1e15, 0.8, 1.0, 2.0, 2.0, 0.9, 0.5};
    const detail::GemmRates r(gpu, fp8, 28672, 8192);
    CHECK(r.weightReadS == Approx(8192.0 * 28672 / 1.8e12).epsilon(1e-12));
    CHECK(r.weightReadS == Approx(130.50e-6).epsilon(1e-4));
    CHECK(r.rowReadS == Approx(40.96e-9).epsilon(1e-4));
    CHECK(r.mathRowS == Approx(587.2e-9).epsilon(1e-4));
    for (const detail::GemmPrecision& p : {fp8, detail::GemmPrecision::sixteenBit(2e15, 0.85)})
        for (double rows : {1.0, 7.0, 64.0, 300.0, 8192.0})
            for (double padded : {rows, std::ceil(rows / 64) * 64})
                for (double eff : {0.05, 0.61, 1.0}) {
                    const detail::GemmBounds a =
                        detail::GemmRates(gpu, p, 28672, 8192).at(rows, eff, padded);
                    const detail::GemmBounds b =
                        detail::gemmBoundsAt(gpu, p, rows, 28672, 8192, eff, padded);
                    CHECK(a.computeS == Approx(b.computeS).epsilon(1e-12));
                    CHECK(a.memoryS == Approx(b.memoryS).epsilon(1e-12));
                }
}

TEST_CASE("Hand-derived: softmax exponentials add to fused attention's tensor-core time") {
    EvaluateOptions withTimeline;
    withTimeline.timeline = true;
    // The toy layer's attention: T·keys·a = 1024 · 512 · 8 = 4,194,304 scores, one exponential
    // each forward and again backward (P recomputed), which the tensor cores wait for
    // (docs/developer/physics.md). At 0.1·10¹² exponentials/s they take 4.194304e-5 s; the
    // forward's 2.147484e9 tensor FLOPs at 100 TFLOP/s 2.147484e-5 s: (2.147484e-5 +
    // 4.194304e-5) / 0.5 = 1.268358e-4 s. Backward: (2.5 · 2.147484e-5 + 4.194304e-5) /
    // (0.5 · 0.69) = 2.771888e-4 s.
    const Result slow = evaluate(toy({{"system.gpu.peak_exp_tera_per_s", 0.1}}), withTimeline);
    CHECK(opSeconds(slow, "attention core") == Approx(1.268358e-4).epsilon(1e-6));
    CHECK(opSeconds(slow, "attention core (bwd)") == Approx(2.771888e-4).epsilon(1e-6));
    // Ten times the rate: (2.147484e-5 + 4.194304e-6) / 0.5 = 5.133829e-5 s — still more than
    // the tensor cores alone (4.294967e-5 s): a faster SFU always helps, by less and less.
    const Result fast = evaluate(toy({{"system.gpu.peak_exp_tera_per_s", 1.0}}), withTimeline);
    CHECK(opSeconds(fast, "attention core") == Approx(5.133829e-5).epsilon(1e-6));
    // Head dim 64 halves the FLOPs per score (1.073742e-5 s) but not the exponentials: at
    // 0.4·10¹²/s (1.048576e-5 s) the forward takes 4.244636e-5 s, at 0.2·10¹²/s 6.341788e-5 s.
    const auto d64 = [&](double rate) {
        return opSeconds(evaluate(toy({{"model.head_dim", 64},
                                      {"system.gpu.peak_exp_tera_per_s", rate}}),
                                  withTimeline),
                         "attention core");
    };
    CHECK(d64(0.4) == Approx(4.244636e-5).epsilon(1e-6));
    CHECK(d64(0.2) == Approx(6.341788e-5).epsilon(1e-6));
}

TEST_CASE("FlashAttention-3's head-dim scaling on H100 follows the serial tensor + softmax bound") {
    // FlashAttention-3 (Shah et al. 2024, Figs. 5-6; H100 SXM5, BF16, 16k tokens, non-causal):
    // forward 497 / 648 / 756 TFLOP/s at head dims 64 / 128 / 256, backward 474 / 561 at 64 /
    // 128. The engine's attention time on the H100 preset, as FLOP/s relative to head dim 128,
    // must match those ratios within 5% (a max of tensor and softmax time would give 1.00
    // throughout: 0.77 and 1.17 forward, 0.85 backward, all fail it).
    const Gpu h100 = test::preset("default").system.gpu;
    REQUIRE(h100.expPerS > 0);
    const double p16 = h100.peak16();
    const auto rate = [&](int d, bool bwd) {
        const double flops = (bwd ? 2.5 : 1.0) * 4.0 * d; // per score: QKᵀ and PV, 2·d each
        return flops / madmax::detail::attentionComputeS(h100, p16, flops, 1.0, bwd);
    };
    CHECK(rate(64, false) / rate(128, false) == Approx(497.0 / 648.0).epsilon(0.05));
    CHECK(rate(256, false) / rate(128, false) == Approx(756.0 / 648.0).epsilon(0.05));
    CHECK(rate(64, true) / rate(128, true) == Approx(474.0 / 561.0).epsilon(0.05));
    // And backward over forward at head dim 128: 561 / 648.
    CHECK(rate(128, true) / rate(128, false) == Approx(561.0 / 648.0).epsilon(0.05));
}

TEST_CASE("Hand-derived: TP all-reduces block the compute stream") {
    // TP 8 in one node, no SP: every layer all-reduces T·h·2 = 2,097,152 B twice forward and
    // twice backward, each 2·(7/8)·2,097,152 / 1e11 = 3.670016e-5 s; the embedding adds one
    // forward and the LM head one backward. 16 micro-batches (DP 1): 16 · (4·4 + 2) = 288
    // all-reduces = 1.056965e-2 s, all of it exposed (no overlap).
    // (Megatron-LM before September 2021: tp_grad_overlap off.)
    const Result r =
        evaluate(toy({{"strategy.tp", 8}, {"strategy.dp", 1}, {"strategy.tp_grad_overlap", false}}));
    CHECK(seconds(r, ParallelDim::TP, Collective::AllReduce) == Approx(1.056965e-2).epsilon(1e-6));
    CHECK(seconds(r, ParallelDim::TP, Collective::AllReduce, true) ==
          Approx(1.056965e-2).epsilon(1e-6));
}

TEST_CASE("Hand-derived: the backward's TP all-reduce hides behind the weight-gradient GEMM") {
    // Megatron-LM's asynchronous TP all-reduce (since September 2021) and Transformer Engine's
    // Linear: a column-parallel linear's backward computes the input gradient, launches its
    // all-reduce, and runs the weight-gradient GEMM beside it; the next op waits for both.
    // Toy, TP 8: each all-reduce 3.670016e-5 s (above). Weight gradients at 50 TFLOP/s:
    //   MLP up  2·T·h·f/8 = 2·1024·1024·512 = 1.073742e9 FLOPs → 2.147484e-5 s, so
    //           3.670016e-5 − 2.147484e-5 = 1.522532e-5 s of its all-reduce stays exposed;
    //   QKV     2·T·h·(a + 2g)d/8 = 2·1024·1024·384 = 8.053064e8 FLOPs → 1.610613e-5 s, so
    //           3.670016e-5 − 1.610613e-5 = 2.059403e-5 s stays exposed.
    // The forward's two per layer, the embedding's and the LM head's stay whole: per micro-batch
    // 10 · 3.670016e-5 + 4 · (1.522532e-5 + 2.059403e-5) = 5.102790e-4 s; 16 micro-batches
    // 8.164464e-3 s exposed of the same 1.056965e-2 s sent, and the step 2.405186e-3 s shorter.
    const test::Edits tp8 = {{"strategy.tp", 8}, {"strategy.dp", 1}};
    const Result on = evaluate(toy(tp8));
    test::Edits serial = tp8;
    serial.emplace_back("strategy.tp_grad_overlap", false);
    const Result off = evaluate(toy(serial));
    CHECK(seconds(on, ParallelDim::TP, Collective::AllReduce) == Approx(1.056965e-2).epsilon(1e-6));
    CHECK(seconds(on, ParallelDim::TP, Collective::AllReduce, true) ==
          Approx(8.164464e-3).epsilon(1e-6));
    CHECK(off.stepTimeS - on.stepTimeS == Approx(2.405186e-3).epsilon(1e-5));
    // The compute is the same work, split in two ops: the input gradient, then the weight's.
    EvaluateOptions o;
    o.timeline = true;
    const Result t = evaluate(toy(tp8), o);
    CHECK(opSeconds(t, "MLP up GEMM (bwd, weight gradient)") == Approx(2.147484e-5).epsilon(1e-6));
    CHECK(opSeconds(t, "QKV GEMM (bwd, input gradient)") == Approx(1.610613e-5).epsilon(1e-6));
    CHECK(on.compute.backwardS == Approx(off.compute.backwardS).epsilon(1e-12));
}

TEST_CASE("Hand-derived: with sequence parallelism TP traffic is reduce-scatter + all-gather") {
    // Each all-reduce becomes a reduce-scatter and an all-gather of (7/8)·2,097,152 / 1e11 =
    // 1.835008e-5 s each: per layer 4 of each, plus the embedding's reduce-scatter (forward) and
    // the LM head's all-gather (backward): 16 · 17 = 272 of each = 4.991222e-3 s.
    // (tp_grad_overlap off: the input of QKV and MLP up kept whole for the weight gradient.)
    const Result r = evaluate(toy({{"strategy.tp", 8},
                                   {"strategy.dp", 1},
                                   {"strategy.sequence_parallel", true},
                                   {"strategy.tp_grad_overlap", false}}));
    CHECK(seconds(r, ParallelDim::TP, Collective::ReduceScatter) ==
          Approx(4.991222e-3).epsilon(1e-6));
    CHECK(seconds(r, ParallelDim::TP, Collective::AllGather) == Approx(4.991222e-3).epsilon(1e-6));
    CHECK(seconds(r, ParallelDim::TP, Collective::AllReduce) == 0);
    // Megatron-LM with SP (Korthikanti et al. 2022, whose activation memory keeps those inputs
    // sharded) all-gathers them again in the backward, beside the input-gradient GEMM: two more
    // all-gathers per layer, 16 · (17 + 8) = 400 = 7.340032e-3 s; reduce-scatters unchanged.
    const Result regather = evaluate(
        toy({{"strategy.tp", 8}, {"strategy.dp", 1}, {"strategy.sequence_parallel", true}}));
    CHECK(seconds(regather, ParallelDim::TP, Collective::AllGather) ==
          Approx(7.340032e-3).epsilon(1e-6));
    CHECK(seconds(regather, ParallelDim::TP, Collective::ReduceScatter) ==
          Approx(4.991222e-3).epsilon(1e-6));
}

TEST_CASE("Hand-derived: pipeline p2p crosses the network when a stage pair spans nodes") {
    // 16 GPUs, DP 8 inside each node, PP 2 outermost: stage neighbours are 8 ranks apart, in
    // different nodes, so p2p runs at 10 GB/s: T·h·2 = 2,097,152 B → 2.097152e-4 s, forward and
    // backward, for each of 16/8 = 2 micro-batches: 8.388608e-4 s.
    const Result r = evaluate(toy({{"gpus", 16}, {"strategy.pp", 2}, {"strategy.dp", 8}}));
    CHECK(seconds(r, ParallelDim::PP, Collective::P2P) == Approx(8.388608e-4).epsilon(1e-6));
    // 1F1B bubble: (p − 1)/v micro-batch passes of the critical stage (Narayanan et al. SC21
    // §2.2): one forward + backward, p2p included.
    CHECK(r.bubbleS ==
          Approx(r.forwardPerMicroBatchS + r.backwardPerMicroBatchS).epsilon(1e-9));
}

TEST_CASE("Hand-derived: memory per GPU from Korthikanti et al. and ZeRO") {
    // Activations per layer, flash attention, no TP: sbh·34 (Korthikanti et al. 2022 Table 2,
    // the 5as/h score term dropped) = 1024·1024·34 = 35,651,584 B; one micro-batch in flight,
    // four layers: 142,606,336 B; plus fp32 logits for the loss 4·s·V = 134,217,728 B.
    // Weights 2 B, gradients 2 B, Adam 12 B per parameter (Rajbhandari et al. SC20).
    const MemoryBreakdown m = evaluate(toy()).memory;
    CHECK(m.activationsBytes == Approx(276824064.0).epsilon(1e-9));
    CHECK(m.weightsBytes == Approx(2 * kStageParams).epsilon(1e-9));
    CHECK(m.gradsBytes == Approx(2 * kStageParams).epsilon(1e-9));
    CHECK(m.optimizerBytes == Approx(12 * kStageParams).epsilon(1e-9));
    // Unfused attention keeps the score matrices: sbh(34 + 5as/h) = 1024²·74 per layer.
    const MemoryBreakdown u = evaluate(toy({{"workload.attention", "unfused"}})).memory;
    CHECK(u.activationsBytes == Approx(4 * 77594624.0 + 134217728.0).epsilon(1e-9));
    // ZeRO-1 shards the optimizer over 8; ZeRO-2 the gradients too; ZeRO-3 the weights, plus
    // the gathered layer in use and the one prefetched (2 · 12,584,960 · 2 B).
    const MemoryBreakdown z3 = evaluate(toy({{"strategy.zero_stage", 3}})).memory;
    CHECK(z3.optimizerBytes == Approx(12 * kStageParams / 8).epsilon(1e-9));
    CHECK(z3.gradsBytes == Approx(2 * kStageParams / 8).epsilon(1e-9));
    CHECK(z3.weightsBytes == Approx(2 * kStageParams / 8 + 2 * 12584960.0 * 2).epsilon(1e-9));
    const MemoryBreakdown z1 = evaluate(toy({{"strategy.zero_stage", 1}})).memory;
    CHECK(z1.gradsBytes == Approx(2 * kStageParams).epsilon(1e-9));
}

TEST_CASE("Hand-derived: model FLOPs per step") {
    // Per token forward: layer GEMMs 2h(ad+2gd) + 2adh + 4hf = 25,165,824, attention 4·s·a·d =
    // 4,194,304, four layers 117,440,512, LM head 2hV = 67,108,864: 184,549,376. Training is
    // 3× forward over 16 · 1024 tokens: 9,070,970,929,152 FLOPs.
    CHECK(evaluate(toy()).modelFlopsPerStep == Approx(9070970929152.0).epsilon(1e-12));
}

TEST_CASE("Hand-derived: context parallelism all-gathers K and V beside attention") {
    // CP 2 (DP 4): each rank holds T = 1024/2 = 512 tokens; K and V of all ranks are gathered:
    // 2 · T · g·d · 2 B · cp = 2 · 512 · 1024 · 2 · 2 = 4,194,304 B, an all-gather over 2 ranks
    // on NVLink: (1/2) · 4,194,304 / 1e11 = 2.097152e-5 s per layer forward; the backward
    // reduce-scatters dK, dV the same. 16 / 4 = 4 micro-batches × 4 layers: 3.355443e-4 s each.
    const Result r = evaluate(toy({{"strategy.cp", 2}, {"strategy.dp", 4}}));
    CHECK(seconds(r, ParallelDim::CP, Collective::AllGather) == Approx(3.355443e-4).epsilon(1e-6));
    CHECK(seconds(r, ParallelDim::CP, Collective::ReduceScatter) ==
          Approx(3.355443e-4).epsilon(1e-6));
}

TEST_CASE("Hand-derived: ring attention merges its per-step partial results") {
    // CP 2: T = 512 local tokens; the diagonal step covers all of them, the other step (causal
    // load balancing) three quarters on average: 512 · 1.75 = 896 rows. Forward: each row's
    // q-width output (a·d = 1024) merged into an fp32 accumulator at 10 B per element
    // (Transformer Engine's out correction): 896 · 1024 · 10 = 9,175,040 B → 9.175040e-6 s at
    // 1 TB/s. Backward: dQ, dK and dV accumulated, 1024 + 2·1024 wide: 27,525,120 B →
    // 2.752512e-5 s. CP 1 has neither.
    EvaluateOptions tl;
    tl.timeline = true;
    const Result r = evaluate(toy({{"strategy.cp", 2}, {"strategy.dp", 4}}), tl);
    CHECK(opSeconds(r, "CP partial-output merge") == Approx(9.175040e-6).epsilon(1e-6));
    CHECK(opSeconds(r, "CP gradient accumulation") == Approx(2.752512e-5).epsilon(1e-6));
    // CP 4: T = 256 local tokens, the diagonal step and three others at three quarters each:
    // 256 · (1 + 3 · 0.75) = 832 rows, 832 · 1024 · 10 = 8,519,680 B → 8.51968e-6 s.
    const Result four = evaluate(toy({{"strategy.cp", 4}, {"strategy.dp", 2}}), tl);
    CHECK(opSeconds(four, "CP partial-output merge") == Approx(8.51968e-6).epsilon(1e-9));
    for (const auto& e : evaluate(toy(), tl).timeline)
        CHECK(e.label.find("CP ") == std::string::npos);
}

TEST_CASE("Hand-derived: unfused attention reads and writes the score matrix") {
    // Megatron's unfused kernel (Korthikanti et al. 2022 §4.1): QKᵀ and AV as GEMMs over the full
    // square, 2 · (2 · T · s · a·d) = 4.294967e9 FLOPs → 8.589935e-5 s, plus softmax/mask/dropout
    // at 11 B per score element, a·s² = 8,388,608 elements: 92,274,688 B → 9.227469e-5 s.
    EvaluateOptions withTimeline;
    withTimeline.timeline = true;
    const Result r = evaluate(toy({{"workload.attention", "unfused"}}), withTimeline);
    CHECK(opSeconds(r, "attention core") == Approx(8.589935e-5 + 9.227469e-5).epsilon(1e-6));
    // Backward: four GEMMs of the same shape (dS·K, dSᵀ·Q, Pᵀ·dO, dO·Vᵀ), twice the forward's
    // two, and the softmax/dropout backward reading and writing the score-shaped tensors twice
    // (22 B per element): exactly twice the forward, 3.563448e-4 s.
    CHECK(opSeconds(r, "attention core (bwd)") ==
          Approx(2.0 * (8.589935e-5 + 9.227469e-5)).epsilon(1e-6));
}

namespace {
Scenario toyServing(int tp) {
    return toy({{"strategy", {{"tp", tp}, {"pp", 1}, {"dp", 8 / tp}}},
                {"workload",
                 {{"kind", "inference"},
                  {"input_tokens", 1024},
                  {"output_tokens", 256},
                  {"batch", 8},
                  {"precision", "bf16"},
                  {"weight_precision", "bf16"},
                  {"kv_precision", "bf16"}}}});
}
} // namespace

TEST_CASE("Hand-derived: a decode step reads every weight and every cached K and V once") {
    // TP 1, batch 8: each GEMM moves W (K·N·2 B) plus its input and output rows (8·(K + N)·2 B),
    // memory-bound at 1 TB/s (its FLOPs take under a sixth of that). Per layer: QKV 6,356,992 +
    // output projection 2,129,920 + MLP up 8,470,528 + down 8,470,528 = 25,427,968 B; four layers
    // 101,711,872 B; the LM head 67,108,864 + 8·(1024 + 32768)·2 = 67,649,536 B. In all
    // 169,361,408 B → 1.693614e-4 s (Pope et al. 2022 §2: decode is weight-bandwidth-bound).
    const Result r = evaluate(toyServing(1));
    CHECK(r.inference.decodeWeightReadS == Approx(1.693614e-4).epsilon(1e-6));
    // KV cache: each sequence holds the prompt and on average (256 + 1)/2 generated tokens:
    // 1152.5 tokens · 2 (K, V) · g·d = 1024 · 2 B, for 8 sequences and 4 layers:
    // 151,060,480 B → 1.510605e-4 s.
    CHECK(r.inference.decodeKvReadS == Approx(1.510605e-4).epsilon(1e-6));
}

TEST_CASE("Hand-derived: decode all-reduces twice per layer, and TTFT waits half an iteration") {
    // TP 8: after attention and after the MLP each layer all-reduces 8 rows · h · 2 B = 16,384 B,
    // 2·(7/8)·16,384 / 1e11 = 2.8672e-7 s; 2 per layer × 4 layers = 2.29376e-6 s per step.
    const Result r = evaluate(toyServing(8));
    CHECK(r.inference.decodeCommS == Approx(2.29376e-6).epsilon(1e-6));
    // TTFT: the prompt's own prefill plus, on average, half a running iteration
    // (docs/guide/serving.md).
    const auto& in = r.inference;
    CHECK(in.ttftS == Approx(in.prefillComputeS + in.prefillCommS + in.prefillOverheadS +
                             in.tpotS / 2)
                          .epsilon(1e-9));
}

TEST_CASE("Hand-derived: an FSDP layer waits for its weights when the network is slow") {
    // ZeRO-3 over DP 16 = two nodes, network slowed to 1 GB/s. Each layer's bf16 weights
    // (12,584,960 · 2 = 25,169,920 B) are all-gathered by one ring over the 16 ranks (NCCL),
    // its channels on the node's eight rails, so the eight NICs carry it together:
    // (15/16)·S / (8 · 1 GB/s) = 2.949600e-3 s, at NCCL's Simple protocol (its base latency
    // 8.4 µs; the toy network's steps take no latency): 2.958000e-3 s, longer than the layer's
    // compute (~0.6 ms), so each forward layer lasts as long as its gather. Plus the embedding
    // (4.194304e-6 s) and the LM head (norm 4.194304e-6, GEMM 2·1024·32768·1024 / 5e13 =
    // 1.374390e-3, fp32 logits 201,326,592 B = 2.013266e-4): one micro-batch forward =
    // 4 · 2.958000e-3 + 1.584105e-3 = 1.341610e-2 s.
    const std::vector<std::pair<std::string, json>> slow = {{"gpus", 16},
                                                            {"strategy.dp", 16},
                                                            {"strategy.zero_stage", 3},
                                                            {"system.tiers.1.gbps", 1}};
    CHECK(evaluate(toy(slow)).forwardPerMicroBatchS == Approx(1.341610e-2).epsilon(1e-5));
    // Hierarchically gathered instead: (7/8)·S / 100 GB/s = 2.202368e-4 s inside the node and
    // (1/2)·(S/8) / 1 GB/s = 1.573120e-3 s across, pipelined in 4 MiB chunks: the slower stage
    // plus the faster one for one of S/4 MiB = 6.0009 chunks: 1.609820e-3 s a layer; the
    // forward 4 · 1.609820e-3 + 1.584105e-3 = 8.023386e-3 s.
    auto hier = slow;
    hier.push_back({"system.gather_algorithm", "hierarchical"});
    CHECK(evaluate(toy(hier)).forwardPerMicroBatchS == Approx(8.023386e-3).epsilon(1e-5));
    // Oversubscription 2:1 halves the network share: the cross-node stage doubles to
    // 3.146240e-3 s, a layer to 3.182940e-3 s, the forward to 1.431587e-2 s.
    hier.push_back({"system.tiers.1.oversubscription", 2});
    CHECK(evaluate(toy(hier)).forwardPerMicroBatchS == Approx(1.431587e-2).epsilon(1e-5));
}

TEST_CASE("Hand-derived: FP8 GEMMs reach the efficiency of equal ideal time and pay their casts") {
    // The toy GPU with an FP8 peak of 200 TFLOP/s and a GEMM curve 0.25 at 1e9 FLOPs rising
    // log-linearly to 0.75 at 1e11 (docs/developer/model.md §2). MLP up GEMM: 2·1024·4096·1024 = 8.589935e9
    // FLOPs. In bf16 its efficiency is 0.25 + 0.5·(log10 8.589935e9 − 9)/2 = 0.4834975, so
    // 8.589935e9 / (100e12 · 0.4834975) = 1.776625e-4 s.
    // In FP8 its ideal time equals that of a 16-bit GEMM of half the FLOPs (fixed costs take the
    // same time at any precision): efficiency 0.25 + 0.5·(log10 4.294967e9 − 9)/2 = 0.4082400,
    // 8.589935e9 / (200e12 · 0.4082400) = 1.052069e-4 s; plus the cast of its 1024·1024 bf16
    // input (read 2 B, write row-wise and transposed copies 1 + 1 B: 4 B with delayed scaling,
    // 6 B with current scaling's amax pass) at 1 TB/s: 4.194304e-6 s or 6.291456e-6 s.
    EvaluateOptions withTimeline;
    withTimeline.timeline = true;
    const json curve = json::array({json::array({1e9, 0.25}), json::array({1e11, 0.75})});
    const auto fp8 = [&](const char* precision, const char* scaling) {
        return evaluate(toy({{"system.gpu.peak_tflops.fp8", 200},
                             {"system.gpu.calibration.gemm_efficiency", curve},
                             {"workload.precision", precision},
                             {"workload.fp8_scaling", scaling}}),
                        withTimeline);
    };
    CHECK(opSeconds(fp8("bf16", "delayed"), "MLP up GEMM") == Approx(1.776625e-4).epsilon(1e-6));
    CHECK(opSeconds(fp8("fp8", "delayed"), "MLP up GEMM") ==
          Approx(1.052069e-4 + 4.194304e-6).epsilon(1e-6));
    CHECK(opSeconds(fp8("fp8", "current"), "MLP up GEMM") ==
          Approx(1.052069e-4 + 6.291456e-6).epsilon(1e-6));
    // Block scaling adds one E8M0 scale per 32 elements to each of the two copies: 4.0625 B.
    CHECK(opSeconds(fp8("fp8", "block"), "MLP up GEMM") ==
          Approx(1.052069e-4 + 4.259840e-6).epsilon(1e-6));
}

TEST_CASE("Hand-derived: all-gather across nodes is one flat ring, as NCCL runs it") {
    // 16 GPUs in 2 nodes of 8 (NVLink 100 GB/s, network 10 GB/s per GPU, no latency), one
    // all-gather of a 1.6 GB buffer. NCCL's ring over all 16 ranks, its channels on the node's
    // eight rails: of the 15/16·S a rank forwards, 1/8 crosses on its own NIC and 7/8 stays on
    // NVLink: 15/16 · 1.6e9 · max(7/8 / 1e11, 1/(8 · 1e10)) = 0.01875 s, at NCCL's Simple
    // protocol, whose base latency adds 8.4 µs (its steps' network latency is the toy's, 0).
    // The hierarchical alternative: 7/8 · 1.6e9 / 1e11 = 0.014 s on NVLink and
    // 1/2 · 0.2e9 / 1e10 = 0.01 s across, pipelined in 4 MiB chunks:
    // 0.014 + 0.01 / (1.6e9 / 4,194,304) = 0.0140262 s.
    Scenario s = toy({{"gpus", 16}, {"strategy.dp", 16}, {"workload.global_batch", 32}});
    const GroupLayout g = layoutGroup(s.system, 16, 1);
    CHECK(collectiveTime(s.system, g, Collective::AllGather, 1.6e9) ==
          Approx(0.01875 + 8.4e-6).epsilon(1e-9));
    CHECK(collectiveTime(s.system, g, Collective::ReduceScatter, 1.6e9) ==
          Approx(0.01875 + 8.4e-6).epsilon(1e-9));
    s.system.flatRingGathers = false;
    CHECK(collectiveTime(s.system, g, Collective::AllGather, 1.6e9) == Approx(0.0140262));
    // Inside one node the two are the same ring: 7/8 · 1.6e9 / 1e11.
    s.system.flatRingGathers = true;
    CHECK(collectiveTime(s.system, layoutGroup(s.system, 8, 1), Collective::AllGather, 1.6e9) ==
          Approx(0.014));
}

TEST_CASE("Hand-derived: FSDP prefetch depth and per-tensor collectives") {
    // The slow-network FSDP toy above: each forward layer lasts as long as its gather when the
    // next layer's weights are prefetched. Without prefetch the gather and the layer's compute
    // run one after the other, so the forward grows by exactly the four layers' compute, which
    // is the ZeRO-0 forward less the embedding and the head (1.584105e-3 s).
    const std::vector<std::pair<std::string, json>> slow = {{"gpus", 16},
                                                            {"strategy.dp", 16},
                                                            {"strategy.zero_stage", 3},
                                                            {"system.tiers.1.gbps", 1}};
    auto with = [&](std::vector<std::pair<std::string, json>> extra) {
        auto e = slow;
        e.insert(e.end(), extra.begin(), extra.end());
        return evaluate(toy(e)).forwardPerMicroBatchS;
    };
    const double layersCompute =
        evaluate(toy({{"gpus", 16}, {"strategy.dp", 16}})).forwardPerMicroBatchS - 1.584105e-3;
    CHECK(with({{"strategy.fsdp_prefetch", 0}}) - with({}) ==
          Approx(layersCompute).epsilon(1e-4));
    // Per weight tensor: the toy layer's 8 tensors (Q, K, V, output, two MLP matrices, two
    // norms) are 8 collectives of S/8 (S = 25,169,920 B), the same bytes, each a ring of 16
    // ranks over two nodes whose 15 steps pay the network's latency: with a 10 µs network,
    // NCCL's per step scaled by 10/6. Per byte a rank forwards, 1/(8 · 1 GB/s) = 1.25e-10 s.
    // S/8 at LL128: 14 µs + 15 · 8.5 · 10/6 µs + (15/16 · 3,146,240 B) · 1.25e-10 / 0.92 =
    // 6.272609e-4 s (Simple 7.271e-4, LL 8.69e-4); S at Simple: 8.4 µs + 15 · 14 · 10/6 µs +
    // 23,596,800 · 1.25e-10 = 3.308e-3 s. Four layers: 4 · (8 · 6.272609e-4 − 3.308e-3) =
    // 6.840348e-3 s more.
    CHECK(with({{"system.tiers.1.latency_us", 10}, {"strategy.fsdp_unit", "tensor"}}) -
              with({{"system.tiers.1.latency_us", 10}}) ==
          Approx(6.840348e-3).epsilon(1e-5));
    // A gated MLP has three matrices: 9 tensors of S'/9, S' = 16,779,264 · 2 = 33,558,528 B.
    // S'/9 at LL128: 14 + 212.5 µs + 3,495,680 · 1.25e-10 / 0.92 = 7.014565e-4 s; S' at Simple
    // 8.4 + 350 µs + 31,461,120 · 1.25e-10 = 4.29104e-3 s: 4 · (9 · 7.014565e-4 − 4.29104e-3) =
    // 8.088275e-3 s more.
    CHECK(with({{"system.tiers.1.latency_us", 10},
                {"strategy.fsdp_unit", "tensor"},
                {"model.gated_mlp", true}}) -
              with({{"system.tiers.1.latency_us", 10}, {"model.gated_mlp", true}}) ==
          Approx(8.088275e-3).epsilon(1e-5));
}

TEST_CASE("Hand-derived: ZeRO-3 as DeepSpeed ran it before v0.6 (fsdp_style deepspeed-legacy)") {
    // 16 GPUs of DP in two nodes, a 5 GB/s network per GPU: an all-gather or reduce-scatter of
    // S bytes is NCCL's flat ring, 15/16 · S · max(7/8 / 1e11, 1/(8 · 5e9)) = S · 2.34375e-11 s.
    // The toy layer's four weights (QKV 3·1024², output 1024², MLP up and down 4096·1024),
    // 25,165,824 B in 16 bits, gather in 5.89824e-4 s. Their mean, 3,145,728 elements, fills
    // DeepSpeed's 5e7-element prefetch bucket k = 15.89 times, so 1 − 1/k = 0.93708544 of each
    // gather runs after the module's host synchronise with the GPU idle: 5.527154e-4 s a layer,
    // 2.2108616e-3 s over the forward's four layers. Each collective also pays NCCL's Simple
    // base latency, 8.4 µs (the toy network's steps take none), of which the same share is
    // serial: 4 layers · 4 weights · 0.93708544 · 8.4e-6 = 1.2594428e-4 s more, 2.3368059e-3 s
    // in all. The rest (under 1.3e-5 s a weight) hides behind the previous module's GEMM. The
    // edges gather nothing (as in the overlapped style).
    using test::Edits;
    using test::toyError;
    const Edits net = {{"gpus", 16}, {"strategy.dp", 16}, {"system.tiers.1.gbps", 5}};
    auto run = [&](Edits extra) {
        Edits e = net;
        e.insert(e.end(), extra.begin(), extra.end());
        return evaluate(toy(e));
    };
    const Result zero0 = run({});
    const Result legacy =
        run({{"strategy.zero_stage", 3}, {"strategy.fsdp_style", "deepspeed-legacy"}});
    CHECK(legacy.forwardPerMicroBatchS - zero0.forwardPerMicroBatchS ==
          Approx(2.2108616e-3 + 1.2594428e-4).epsilon(1e-5));
    // Backward: the four weights again (its modules run in reverse), and each layer's
    // gradients, 12,584,960 in bf16, reduce-scattered in one bucket whose wait the next
    // module's synchronise makes exposed: 25,169,920 · 2.34375e-11 + 8.4e-6 = 5.9832e-4 s a
    // layer.
    CHECK(legacy.backwardPerMicroBatchS - zero0.backwardPerMicroBatchS ==
          Approx(4 * (5.527154e-4 + 5.8992e-4 + 8.4e-6) + 1.2594428e-4).epsilon(1e-5));
    // The overlapped coordinator hides the same gathers behind whole layers: never slower.
    const Result overlapped = run({{"strategy.zero_stage", 3}});
    CHECK(overlapped.stepTimeS < legacy.stepTimeS);
    // One host synchronise per gathered module and one after each serial share: with a host
    // that takes 20 µs an op, the GPU idles at least one op after each of the forward's.
    const Result hosted = run({{"strategy.zero_stage", 3},
                               {"strategy.fsdp_style", "deepspeed-legacy"},
                               {"system.gpu.calibration.host_op_us", 20}});
    CHECK(hosted.forwardPerMicroBatchS >= legacy.forwardPerMicroBatchS + 4 * 8 * 20e-6 * 0.99);
    // Under CUDA graphs the host issues nothing per kernel: no hook time, the same forward as a
    // free host.
    const Result graphed = run({{"strategy.zero_stage", 3},
                                {"strategy.fsdp_style", "deepspeed-legacy"},
                                {"strategy.cuda_graphs", true},
                                {"system.gpu.calibration.host_op_us", 20}});
    CHECK(graphed.forwardPerMicroBatchS == Approx(legacy.forwardPerMicroBatchS).epsilon(1e-12));
}

TEST_CASE("ZeRO-3's legacy style is refused where it does not apply, naming the field") {
    using test::toyError;
    CHECK_THAT(toyError({{"strategy.fsdp_style", "deepspeed-legacy"}}),
               Catch::Contains("strategy.fsdp_style") && Catch::Contains("zero_stage"));
    CHECK_THAT(toyError({{"strategy.fsdp_style", "deepspeed"}}),
               Catch::Contains("fsdp_style") && Catch::Contains("deepspeed-legacy"));
    CHECK_THAT(toyError({{"strategy.fsdp_style", 1}}), Catch::Contains("fsdp_style"));
}

TEST_CASE("Hand-derived: framework overheads per step and per micro-batch add as stated") {
    // The toy runs 2 micro-batches per step (16 sequences, DP 8, micro-batch 1): 5 ms per step
    // and 1 ms per micro-batch add 5 + 2·1 = 7 ms.
    const double base = evaluate(toy()).stepTimeS;
    const double with = evaluate(toy({{"workload.step_overhead_ms", 5},
                                      {"workload.micro_batch_overhead_ms", 1}}))
                            .stepTimeS;
    CHECK(with - base == Approx(7e-3).epsilon(1e-9));
}

TEST_CASE("Stated framework overheads are shown apart and every training step adds up") {
    // Result::overheadS is the stated time no op accounts for, and every training path's step is
    // compute + exposed communication + bubble + overhead: dense with a pipeline, MoE, ViT and
    // DLRM (whose step is one micro-batch), each with 5 ms a step and 1 ms a micro-batch stated.
    for (const std::string id : {"default", "gpt3-175b-1024-a100", "qwen3-235b-256-h100",
                                 "vit-22b-256-h100", "dlrm-dcnv2-64-h100"}) {
        CAPTURE(id);
        const Scenario bare = test::preset(id);
        const Scenario stated = test::preset(
            id, {"workload.step_overhead_ms=5", "workload.micro_batch_overhead_ms=1"});
        const Result b = evaluate(bare);
        EvaluateOptions withTimeline;
        withTimeline.timeline = true;
        const Result r = evaluate(stated, withTimeline);
        CHECK(b.overheadS == 0);
        CHECK(r.overheadS == Approx(5e-3 + 1e-3 * r.microBatches).epsilon(1e-12));
        CHECK(r.stepTimeS - b.stepTimeS == Approx(r.overheadS).epsilon(1e-9));
        CHECK(r.stepTimeS ==
              Approx(r.computeS + r.exposedCommS + r.bubbleS + r.overheadS).epsilon(1e-12));
        // The report and the JSON name it; without a statement the report says none is assumed.
        CHECK_THAT(formatReport(stated, r), Catch::Contains("framework overhead"));
        CHECK_THAT(formatReport(bare, b), Catch::Contains("none stated"));
        CHECK(toJson(r).at("overhead_s").get<double>() == Approx(r.overheadS));
        // The timeline shows it.
        if (id != "dlrm-dcnv2-64-h100")
            CHECK(test::opSeconds(r, "framework overhead (as stated)") == Approx(r.overheadS));
        else
            CHECK(test::opSeconds(r, "framework overhead") == Approx(6e-3));
    }
}

TEST_CASE("Hand-derived: serving's model FLOPs, a decode round and a prefill pass") {
    // Two FLOPs per active parameter per token (no attention term, as serving reports count).
    // Decode, TP 1 on 8 GPUs (8 replicas of batch 8), aggregated: each round keeps 8 tokens a
    // replica and computes its share of prompts, 1,024 / 256 = 4 prompt tokens per generated one:
    // 2 · P · 8 · 8 · 5 FLOPs a round, over TPOT × 8 GPUs, in TFLOP/s.
    const Scenario s = toyServing(1);
    const double P = s.model.activeParams();
    const Result r = evaluate(s);
    CHECK(r.modelFlopsPerStep == Approx(2.0 * P * 8 * 8 * 5));
    CHECK(r.modelTflopsPerGpu == Approx(2.0 * P * 8 * 8 * 5 / (r.inference.tpotS * 8) / 1e12));
    // A prefill pool's pass: the 8,192-token chunk on each of the 8 replicas.
    const Result p = evaluate(toy({{"strategy", {{"tp", 1}, {"pp", 1}, {"dp", 8}}},
                                   {"workload",
                                    {{"kind", "inference"},
                                     {"input_tokens", 1024},
                                     {"output_tokens", 256},
                                     {"precision", "bf16"},
                                     {"phase", "prefill"}}}}));
    CHECK(p.modelFlopsPerStep == Approx(2.0 * P * 8192 * 8));
    CHECK(p.modelTflopsPerGpu == Approx(2.0 * P * 8192 * 8 / (p.stepTimeS * 8) / 1e12));
}

TEST_CASE("Hand-derived: a grouped GEMM reads every expert's weights once, in 64-row tiles") {
    // Megatron-Core's grouped GEMM over 8 experts of K = 1,024 → N = 4,096 with 16 token rows in
    // all (2 per expert), bf16 on the toy GPU (docs/developer/model.md §2):
    //   memory  8 experts · 1,024·4,096 · 2 B (weights) + 16·1,024·2 B (rows in) + 16·4,096·2 B
    //           (rows out) = 67,108,864 + 32,768 + 131,072 = 67,272,704 B / 1 TB/s
    //           = 6.7272704e-5 s;
    //   compute each expert's 2 rows as one 64-row tile (op_cost.hpp kGemmRowTile, the M of a
    //           Hopper warpgroup MMA): 2·(8·64)·4,096·1,024 = 4,294,967,296 FLOPs
    //           / (100 TFLOP/s · 0.5) = 8.589934592e-5 s, the larger.
    const Scenario s = toy();
    const Gpu& gpu = s.system.gpu;
    const detail::OpCoster oc{gpu, gpu.peak(Precision::BF16), gpu.peak16(), 2.0, 1.0};
    CHECK(oc.groupedGemm(16, 4096, 1024, 8, true) == Approx(8.589934592e-5).epsilon(1e-9));
    // Not routed (a single expert's block is a dense MLP): the 16 real rows' 2.684e-6 s of math,
    // so the GEMM waits on HBM.
    CHECK(oc.groupedGemm(16, 4096, 1024, 8, false) == Approx(6.7272704e-5).epsilon(1e-9));
    // 8,192 rows, 1,024 an expert (whole tiles): 2·8,192·4,096·1,024 / 5e13 = 1.37438953472e-3 s.
    CHECK(oc.groupedGemm(8192, 4096, 1024, 8, true) == Approx(1.37438953472e-3).epsilon(1e-9));
    // 8,200 rows, 1,025 an expert, compute 1,088 (17 tiles): 2·8,704·4,096·1,024 / 5e13.
    CHECK(oc.groupedGemm(8200, 4096, 1024, 8, true) ==
          Approx(2.0 * 8704 * 4096 * 1024 / 5e13).epsilon(1e-9));
}

namespace {
/// The toy's layers as a ViT on 64 × 64 images of 16 × 16 patches (16 patches and a class
/// token, 17 tokens a micro-batch; 1,000 classes), evaluated with its timeline.
Result toyVitTimeline(int classes = 1000, int microBatch = 1, bool linearProbe = false) {
    nlohmann::json doc = test::toyScenario();
    if (linearProbe) doc["workload"]["frozen"] = {{"embedding", true}, {"layers", 4}};
    doc["model"].erase("vocab");
    doc["model"]["vit"] = {{"image_size", 64}, {"patch_size", 16}, {"channels", 3},
                           {"classes", classes}};
    doc["workload"].erase("seq_len");
    doc["strategy"]["micro_batch"] = microBatch;
    EvaluateOptions o;
    o.timeline = true;
    return evaluate(parseScenario(doc, "toy-vit"), o);
}
} // namespace

TEST_CASE("Hand-derived: a ViT's patch embedding, its GEMM and the position-embedding add") {
    // The toy's layers as a ViT on 64 × 64 images of 16 × 16 patches: 16 patches and a class
    // token, 17 tokens a micro-batch (Dosovitskiy et al. 2021). The patch projection is a GEMM
    // of the 16 patches' 3 · 16 · 16 = 768 pixels to h = 1,024, memory-bound on the toy GPU:
    // (768 · 1,024 + 16 · 768 + 16 · 1,024) · 2 B = 1,630,208 B → 1.630208e-6 s (its FLOPs need
    // 5.03e-7 s). The position embeddings are added to every token's row, the class token's
    // too: read both, write one, 3 · 17 · 1,024 · 2 B = 104,448 B → 1.04448e-7 s. In all
    // 1.734656e-6 s.
    const Result r = toyVitTimeline();
    CHECK(test::opSeconds(r, "embedding") == Approx(1.734656e-6).epsilon(1e-9));
}

TEST_CASE("Hand-derived: speculation finishes requests sooner, so each round admits more prompts") {
    // Continuous batching in steady state admits as many prompts a round as finish: batch ·
    // τ / output, where τ is the tokens a sequence gains per round. With 3 drafts accepted with
    // probability 0.5 each, τ = (1 − 0.5⁴) / (1 − 0.5) = 1.875 (Leviathan et al. 2023, eq. 1):
    // each round's prefill work is 1.875 × that of plain decoding at the same batch.
    auto prefillPerRound = [](int drafts) {
        Scenario s = toyServing(1);
        s.workload.inference.draftTokens = drafts;
        s.workload.inference.acceptanceRate = 0.5;
        return evaluate(s).inference;
    };
    const InferenceResult plain = prefillPerRound(0), spec = prefillPerRound(3);
    CHECK(spec.tokensPerStep == Approx(1.875));
    CHECK(spec.prefillPerIterationS / plain.prefillPerIterationS == Approx(1.875).epsilon(1e-9));
}

TEST_CASE("Hand-derived: a ViT's classifier head, forward") {
    // The toy ViT above, one image a micro-batch: the final norm on the class token reads and
    // writes h = 1,024 values (4,096 B); the classifier GEMM 1 × 1,000 × 1,024 reads its
    // weights, (1,024 · 1,000 + 1,024 + 1,000) · 2 B = 2,052,048 B; softmax and cross-entropy
    // read the 1,000 logits (2 B) and write fp32 probabilities (4 B), 6,000 B. At 1 TB/s:
    // 2.062144e-6 s.
    const Result r = toyVitTimeline();
    CHECK(test::opSeconds(r, "LM head + loss") == Approx(2.062144e-6).epsilon(1e-9));
}

TEST_CASE("Hand-derived: a ViT's patch embedding backward, its weight gradient and the add's") {
    // The toy ViT above: the patch projection's weight gradient is a GEMM of the 768 pixels by
    // h = 1,024 over the 16 patch rows, memory-bound: (16 · 1,024 + 768 · 16 + 768 · 1,024) ·
    // 2 B = 1,630,208 B → 1.630208e-6 s; the position-embedding add's backward reads the
    // gradient and writes the position embeddings', 2 · 17 · 1,024 · 2 B = 69,632 B →
    // 6.9632e-8 s. In all 1.69984e-6 s (the pixels take no gradient).
    const Result r = toyVitTimeline();
    CHECK(test::opSeconds(r, "embedding (bwd)") == Approx(1.69984e-6).epsilon(1e-9));
}

TEST_CASE("Hand-derived: a ViT keeps fp32 logits for one per image, not per token") {
    // The last stage keeps the micro-batch's fp32 logits for the loss: a classifier's are one
    // row per image. Two images a micro-batch, 1,000 more classes: 4 B · 2 · 1,000 = 8,000 B
    // more activations (a language model's would be per token).
    CHECK(toyVitTimeline(2000, 2).memory.activationsBytes -
              toyVitTimeline(1000, 2).memory.activationsBytes ==
          Approx(8000.0));
}

TEST_CASE("Hand-derived: a ViT's classifier head over two images, forward and backward") {
    // Two images a micro-batch: the norm on the two class tokens, 2 · 2 · 1,024 · 2 B =
    // 8,192 B; the classifier GEMM 2 × 1,000 × 1,024, (1,024 · 1,000 + 2 · 1,024 + 2 · 1,000)
    // · 2 B = 2,056,096 B; softmax and cross-entropy 2 · 1,000 · 6 B = 12,000 B. Forward
    // 2.076288e-6 s. Backward: the GEMM's weight and input gradients (the head trains and so
    // do the layers below), 2 · 2.056096e-6 s; the loss gradient 12,000 B; the norm's backward
    // reads the gradient and input and writes two, 4 · 2 · 1,024 · 2 B = 16,384 B: 4.140576e-6 s.
    const Result r = toyVitTimeline(1000, 2);
    CHECK(test::opSeconds(r, "LM head + loss") == Approx(2.076288e-6).epsilon(1e-9));
    CHECK(test::opSeconds(r, "LM head + loss (bwd)") == Approx(4.140576e-6).epsilon(1e-9));
    // A linear probe (patch embedding and every layer frozen): nothing below the head takes a
    // gradient, so only its weight gradient and the loss's, 2.056096e-6 + 1.2e-8 s.
    CHECK(test::opSeconds(toyVitTimeline(1000, 2, true), "LM head + loss (bwd)") ==
          Approx(2.068096e-6).epsilon(1e-9));
}

TEST_CASE("Hand-derived: FP8 training leaves the LM head in BF16, as Megatron-Core builds it") {
    // Megatron-Core's output layer is its own tensor_parallel.ColumnParallelLinear, not a
    // Transformer Engine layer (megatron/core/models/gpt/gpt_model.py; an MXFP8 head became an
    // opt-in in May 2026, Megatron-LM #4825), so under FP8 it runs at the BF16 rate. The toy's
    // head, forward: the final norm reads and writes T·h bf16, 2·1,048,576·2 B = 4.194304e-6 s;
    // the GEMM 2·T·V·h = 2·1024·32768·1024 = 6.871948e10 FLOPs at 100 TFLOP/s · 0.5 =
    // 1.374390e-3 s (compute-bound: its 136 MB take 1.4e-4 s); the fused cross-entropy reads
    // the bf16 logits and writes fp32, T·V·6 B = 2.013266e-4 s. Sum 1.579911e-3 s — in FP8 too,
    // where the same GPU with a 200 TFLOP/s FP8 peak runs the layers' GEMMs faster.
    EvaluateOptions withTimeline;
    withTimeline.timeline = true;
    const Result bf16 = evaluate(toy({{"system.gpu.peak_tflops.fp8", 200}}), withTimeline);
    const Result fp8 = evaluate(
        toy({{"system.gpu.peak_tflops.fp8", 200}, {"workload.precision", "fp8"}}), withTimeline);
    CHECK(opSeconds(bf16, "LM head + loss") == Approx(1.579911e-3).epsilon(1e-6));
    CHECK(opSeconds(fp8, "LM head + loss") == Approx(1.579911e-3).epsilon(1e-6));
    CHECK(opSeconds(fp8, "MLP up GEMM") < opSeconds(bf16, "MLP up GEMM"));
}
