// Mixture of experts: numbers derived by hand on a toy MoE with round hardware numbers, the
// invariants a MoE model must keep, the published parameter counts of the presets, and the
// field-level errors of bad MoE input. Every expected value is worked out in its comment from
// the formula's source (docs/developer/workloads.md "Mixture of experts"), not from the code.
#include "test_support.hpp"

#include "madmax/codesign.hpp"
#include "madmax/collectives.hpp"
#include "madmax/flops.hpp"
#include "madmax/memory.hpp"
#include "madmax/pipeline.hpp"
#include "madmax/report.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace madmax;
using nlohmann::json;

namespace {

// Toy MoE: l = 4, h = 1024, 8 heads of 128 (MHA), 8 routed experts of f_e = 512 (plain GELU),
// top-2, no shared expert, V = 32768. Hardware: 100 TFLOP/s, 1 TB/s HBM at efficiency 1, no
// launch or link latency, all-to-all kernels without a fixed cost, NVLink 100 GB/s in domains
// of 8 GPUs, network 10 GB/s, every efficiency 1.
const json kToyMoe = [] {
    json doc = json::parse(R"({
  "schema": "madmax-scenario/1",
  "name": "toy-moe",
  "model": {"id": "toy-moe", "arch": "moe", "layers": 4, "hidden": 1024, "heads": 8,
            "kv_heads": 8, "head_dim": 128, "vocab": 32768, "gated_mlp": false,
            "moe": {"experts": 8, "top_k": 2, "expert_ffn_hidden": 512}},
  "gpus": 16,
  "strategy": {"tp": 1, "pp": 1, "dp": 16, "ep": 8, "micro_batch": 1, "zero_stage": 0},
  "workload": {"kind": "training", "global_batch": 16, "seq_len": 1024, "precision": "bf16",
               "attention": "flash"}
})");
    doc["system"] = test::toySystem(); // the shared toy hardware
    return doc;
}();

Scenario toyMoe(const std::vector<std::pair<std::string, json>>& edits = {}) {
    json doc = kToyMoe;
    for (const auto& [path, value] : edits)
        applyOverride(doc, path, value, "toy-moe");
    return parseScenario(doc, "toy-moe");
}

/// In the scenario's timeline, from the first op labelled `first` to the end of the host
/// stall that closes its layer (-1 when there is none): a host-bound layer's span.
double hostBoundSpan(const Scenario& s, const char* first) {
    EvaluateOptions o;
    o.timeline = true;
    const Result r = evaluate(s, o);
    double begin = -1;
    for (const auto& e : r.timeline) {
        if (begin < 0 && e.label == first) begin = e.startS;
        if (begin >= 0 && e.label == "host launch stalls") return e.endS - begin;
    }
    return -1.0;
}

/// The error parsing the toy with these edits gives ("" when it parses).
std::string errorOf(const std::vector<std::pair<std::string, json>>& edits) {
    try {
        toyMoe(edits);
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

} // namespace

TEST_CASE("Hand-derived MoE: parameters and FLOPs per token of the toy") {
    const Model m = toyMoe().model;
    // Routed experts per layer: E · 2·h·f_e = 8 · 2 · 1024 · 512 = 8,388,608.
    CHECK(m.moeRoutedParamsPerLayer() == 8388608.0);
    // The rest of the MoE block: router h·E = 8,192 + pre-MLP norm 1,024 = 9,216.
    CHECK(m.moeSharedParamsPerLayer() == 9216.0);
    // Forward FLOPs per token of a MoE layer's GEMMs: attention projections
    // 2·(h·(a·d + 2g·d) + a·d·h) = 2·(1024·3072 + 1024·1024) = 8,388,608; k experts
    // 2 · 2·(2·h·f_e) = 4,194,304; router 2·h·E = 16,384. Total 12,599,296.
    CHECK(moeLayerGemmFlopsPerToken(m) == 12599296.0);
    // Total: 4 layers × (attention 4,195,328 + MoE block 8,397,824) = 50,372,608, + embedding
    // and LM head 2 · 32,768 · 1,024 = 67,108,864, + final norm 1,024: 117,482,496.
    CHECK(m.totalParams() == 117482496.0);
    // Active (what a token's forward pass multiplies; the embedding is a lookup): the k = 2
    // experts instead of 8: 4 × (4,195,328 + 9,216 + 2,097,152) = 25,206,784, + LM head
    // 33,554,432 + final norm 1,024: 58,762,240.
    CHECK(m.activeParams() == 58762240.0);
}

TEST_CASE("Hand-derived MoE: dispatch all-to-all bytes and time, flat and per-node") {
    // EP 8 at stride 1 sits in one 8-GPU NVLink domain: each GPU sends T·k copies of h·2 B,
    // T = 1024, k = 2: 4,194,304 B, of which 7/8 leave the GPU: 3,670,016 B at 100 GB/s =
    // 3.670016e-5 s.
    const Result in = evaluate(toyMoe());
    CHECK(in.moe.dispatchScaleUpBytes == Approx(3670016.0));
    CHECK(in.moe.dispatchScaleOutBytes == 0.0);
    CHECK(in.moe.dispatchS == Approx(3.670016e-5).epsilon(1e-9));

    // EP 16 spans two domains of 8: 7/16 of the copies stay in the domain (1,835,008 B), 8/16
    // cross the network (2,097,152 B at 10 GB/s = 2.097152e-4 s, the bottleneck).
    const Result flat = evaluate(toyMoe({{"strategy.ep", 16}, {"model.moe.experts", 16}}));
    CHECK(flat.moe.dispatchScaleUpBytes == Approx(1835008.0));
    CHECK(flat.moe.dispatchScaleOutBytes == Approx(2097152.0));
    CHECK(flat.moe.dispatchS == Approx(2.097152e-4).epsilon(1e-9));
    // Forward dispatch + combine and their backward mirrors: 4 calls per layer, 4 layers,
    // 1 micro-batch (16 sequences over DP 16): 16 × 2.097152e-4 = 3.3554432e-3 s, all exposed.
    const CommTime& a2a = flat.commTime(ParallelDim::EP, Collective::AllToAll);
    CHECK(a2a.serializedS == Approx(3.3554432e-3).epsilon(1e-9));
    CHECK(a2a.exposedS == Approx(3.3554432e-3).epsilon(1e-9));

    // Per-node dedup (DeepEP): a token reaches N(1 − (1 − 1/N)^k) = 2(1 − 1/4) = 1.5 domains,
    // 0.75 of them remote: 1024 · 2048 · 0.75 = 1,572,864 B over the network = 1.572864e-4 s.
    const Result dedup = evaluate(toyMoe({{"strategy.ep", 16},
                                          {"model.moe.experts", 16},
                                          {"strategy.moe_dispatcher", "deepep"}}));
    CHECK(dedup.moe.dispatchScaleOutBytes == Approx(1572864.0));
    CHECK(dedup.moe.dispatchS == Approx(1.572864e-4).epsilon(1e-9));
    // With one expert a GPU the fan-out inside each domain is every copy's: the 7/16 of the
    // copies that stay home plus the 7/8 of the 8/16 that arrive from the other domain and go
    // on to another GPU, 1,835,008 + 1,835,008 B.
    CHECK(dedup.moe.dispatchScaleUpBytes == Approx(3670016.0));
    // Inside a domain DeepEP sends a token to a GPU once, however many of its k experts that GPU
    // holds (its is_token_in_rank), and the copies are made on arrival. 32 experts on EP 8 (4 a
    // GPU), top-2: a given GPU holds one of a token's two with probability 1 − (28/32)(27/31) =
    // 236/992, so the 7 other GPUs receive 1024 · 2048 · 7 · 236/992 = 3,492,434.58 B, which
    // DeepEP's kernels stream at 0.736 of the 100 GB/s line rate (the calibration's
    // deepep_nvlink_efficiency): 4.7452e-5 s; the flat dispatcher (NCCL's all-to-all, at the
    // tier's own efficiency, 1 here) sends each copy, 3,670,016 B. DeepEP's own bandwidth
    // figure counts what every GPU, this one included, receives: 1024 · 2048 · 8 · 236/992.
    const auto wide = [](const char* dispatcher) {
        return evaluate(toyMoe({{"model.moe.experts", 32}, {"strategy.moe_dispatcher", dispatcher}}));
    };
    const Result perGpu = wide("deepep"), perCopy = wide("all_to_all");
    CHECK(perGpu.moe.dispatchScaleUpBytes == Approx(3492434.580645).epsilon(1e-9));
    CHECK(perGpu.moe.dispatchS == Approx(3.492434580645e-5 / 0.736).epsilon(1e-9));
    CHECK(perCopy.moe.dispatchScaleUpBytes == Approx(3670016.0));
    MoeA2aRequest req;
    req.tokens = 1024;
    req.topK = 2;
    req.bytesPerToken = 2048;
    req.dedupPerNode = true;
    req.experts = 32;
    const Scenario toy32 = toyMoe();
    const MoeA2aTraffic t = moeAllToAll(toy32.system, layoutGroup(toy32.system, 8, 1), req);
    CHECK(t.logicalBytes == Approx(1024.0 * 2048 * 8 * 236 / 992).epsilon(1e-12));
    // Node-limited routing to 1 of 2 domains halves the network share: 1,048,576 B.
    const Result limited = evaluate(toyMoe({{"strategy.ep", 16},
                                            {"model.moe.experts", 16},
                                            {"strategy.moe_node_limit", 1}}));
    CHECK(limited.moe.dispatchScaleOutBytes == Approx(1048576.0));
    // FP8 dispatch: h·(1 + 4/128) = 1056 B per copy: 1024·2·1056·8/16 = 1,081,344 B; the
    // combine stays 16-bit.
    const Result fp8 = evaluate(toyMoe({{"strategy.ep", 16},
                                        {"model.moe.experts", 16},
                                        {"strategy.moe_fp8_dispatch", true}}));
    CHECK(fp8.moe.dispatchScaleOutBytes == Approx(1081344.0));
    CHECK(fp8.moe.combineScaleOutBytes == Approx(2097152.0));
}

TEST_CASE("Hand-derived MoE: the all-to-all model against DeepEP's published kernels") {
    // moeAllToAll alone on the DeepEP H800 setting (hidden 7168, top-8, FP8 dispatch at
    // 7168·(1 + 4/128) = 7392 B per copy). Low-latency EP256 (128 tokens, 32 nodes): the
    // network carries 128·8·7392·248/256 = 7,332,864 B at 50 GB/s × 0.92 (the RDMA tier's
    // large-message efficiency) = 159.4 µs, plus α 6 µs + 2 µs and the 25 µs kernel cost:
    // 192.4 µs. DeepEP measured 194 µs (deepep-v1-lowlat-ep256-dispatch).
    System sys = test::systemPreset("hgx-h800");
    MoeA2aRequest r;
    r.tokens = 128;
    r.topK = 8;
    r.bytesPerToken = 7392;
    r.overheadS = 25e-6;
    const MoeA2aTraffic t = moeAllToAll(sys, layoutGroup(sys, 256, 1), r);
    CHECK(t.scaleOutBytes == Approx(7332864.0));
    CHECK(t.timeS == Approx(7332864.0 / (50e9 * 0.92) + 8e-6 + 25e-6).epsilon(1e-9));
    CHECK(t.timeS == Approx(194e-6).epsilon(0.05));
    // The fixed part: α 6 µs + 2 µs and the kernel's 25 µs; the rest scales with the bytes
    // per token, so the 16-bit combine (14,336 B a copy) is the latency plus 14336/7392 of it.
    CHECK(t.latencyS == Approx(33e-6).epsilon(1e-12));
    r.bytesPerToken = 14336;
    const MoeA2aTraffic combine = moeAllToAll(sys, layoutGroup(sys, 256, 1), r);
    CHECK(combine.timeS ==
          Approx(t.latencyS + (t.timeS - t.latencyS) * 14336.0 / 7392.0).epsilon(1e-12));

    // Normal kernels inside one node (EP8, 4,096 tokens): 4096·8·7392 = 242,221,056 B of copies,
    // 7/8 of them to the 7 peers, 211,943,424 B. DeepEP's kernels stream NVLink at 0.736 of
    // the H800's 200 GB/s per direction (fitted on DeepEP V2's B200 EP8 dispatch, 726 GB/s
    // logical with 64 SMs; README at dd758ca): 1.43984e-3 s, plus the 25 µs call and NVLink's α.
    // DeepEP counts the copies a GPU receives, its own included, so its figure is 8/7 of the
    // stream: 242,221,056 B / 1.4717e-3 s ≈ 165 GB/s. Measured: 153 GB/s (DeepEP V1, H800;
    // deepep-v1-normal-ep8-dispatch), out of sample for the fit.
    MoeA2aRequest n;
    n.tokens = 4096;
    n.topK = 8;
    n.bytesPerToken = 7392;
    n.overheadS = 25e-6;
    n.scaleUpEfficiency = 0.736;
    const MoeA2aTraffic ep8 = moeAllToAll(sys, layoutGroup(sys, 8, 1), n);
    CHECK(ep8.scaleUpBytes == Approx(211943424.0));
    CHECK(ep8.scaleOutBytes == 0.0);
    CHECK(ep8.logicalBytes == Approx(242221056.0));
    const double alpha = sys.tiers[0].latencyS;
    CHECK(ep8.timeS == Approx(211943424.0 / (200e9 * 0.736) + 25e-6 + alpha).epsilon(1e-9));
    CHECK(ep8.logicalBytes / ep8.timeS / 1e9 == Approx(153.0).epsilon(0.10));
    // NCCL's all-to-all (no kernel efficiency of its own) streams at the tier's large-message
    // efficiency instead: the same bytes, faster.
    n.scaleUpEfficiency = 0;
    const MoeA2aTraffic nccl = moeAllToAll(sys, layoutGroup(sys, 8, 1), n);
    CHECK(nccl.timeS == Approx(211943424.0 / (200e9 * sys.tiers[0].efficiency(1e300)) + 25e-6 +
                               alpha)
                            .epsilon(1e-9));
    CHECK(nccl.timeS < ep8.timeS);
    // On a link that reaches less than that (here 0.5 of its rate), DeepEP's kernels cannot beat
    // it: both stream at the link's own efficiency.
    System slow = sys;
    slow.tiers[0].efficiency = LogCurve::constant(0.5);
    n.scaleUpEfficiency = 0.736;
    const MoeA2aTraffic capped = moeAllToAll(slow, layoutGroup(slow, 8, 1), n);
    CHECK(capped.timeS == Approx(211943424.0 / (200e9 * 0.5) + 25e-6 + alpha).epsilon(1e-9));
}

TEST_CASE("MoE invariants: imbalance, EP and expert memory, a one-expert MoE is its dense model") {
    const Result balanced = evaluate(toyMoe({{"strategy.ep", 16}, {"model.moe.experts", 16}}));
    // The critical rank carries the imbalance: its all-to-all bytes (bandwidth-bound here) and
    // expert GEMMs scale by it; imbalance 1.0 is force-balanced.
    const Result skewed = evaluate(toyMoe({{"strategy.ep", 16},
                                           {"model.moe.experts", 16},
                                           {"model.moe.load_imbalance", 1.3}}));
    CHECK(skewed.moe.dispatchS == Approx(1.3 * balanced.moe.dispatchS).epsilon(1e-12));
    CHECK(skewed.stepTimeS > balanced.stepTimeS);
    CHECK(skewed.moe.routedCopiesPerGpu == Approx(1.3 * balanced.moe.routedCopiesPerGpu));
    // A capacity factor caps the critical rank's load and drops tokens: loads spread over
    // [2 − I, I] = [0.6, 1.4], C = 1.2 drops (1.4 − 1.2)² / (4 · 0.4) = 0.025 of the copies.
    const Result capped = evaluate(toyMoe({{"strategy.ep", 16},
                                           {"model.moe.experts", 16},
                                           {"model.moe.load_imbalance", 1.4},
                                           {"model.moe.capacity_factor", 1.2}}));
    CHECK(capped.moe.tokenDropRate == Approx(0.025));
    CHECK(capped.moe.routedCopiesPerGpu == Approx(1.2 * balanced.moe.routedCopiesPerGpu));
    CHECK(balanced.moe.tokenDropRate == 0.0);

    // Without EP every GPU holds every expert: an imbalance moves copies between its experts,
    // not between GPUs, so the GPU carries the mean (training and serving alike); a capacity
    // factor still drops its 2.5% (the spread above): 0.975 of the mean.
    {
        const auto ep1 = [](double imbalance, double capacity) {
            return toyMoe({{"strategy.ep", 1},
                           {"model.moe.experts", 16},
                           {"model.moe.load_imbalance", imbalance},
                           {"model.moe.capacity_factor", capacity}});
        };
        const Result even = evaluate(ep1(1.0, 0.0));
        CHECK(evaluate(ep1(1.3, 0.0)).stepTimeS == Approx(even.stepTimeS).epsilon(1e-12));
        CHECK(evaluate(ep1(1.3, 0.0)).moe.routedCopiesPerGpu ==
              Approx(even.moe.routedCopiesPerGpu).epsilon(1e-12));
        CHECK(evaluate(ep1(1.4, 1.2)).moe.routedCopiesPerGpu ==
              Approx(0.975 * even.moe.routedCopiesPerGpu));
        json serve = kToyMoe;
        serve["workload"] = {{"kind", "inference"}, {"input_tokens", 1000},
                             {"output_tokens", 100}, {"batch", 8}, {"precision", "bf16"}};
        serve["gpus"] = 8;
        serve["strategy"] = {{"tp", 1}, {"pp", 1}, {"dp", 8}, {"ep", 1}};
        const Result evenServe = evaluate(parseScenario(serve, "serve"));
        serve["model"]["moe"]["load_imbalance"] = 1.3;
        const Result skewedServe = evaluate(parseScenario(serve, "serve"));
        CHECK(skewedServe.inference.tpotS == Approx(evenServe.inference.tpotS).epsilon(1e-12));
        CHECK(skewedServe.inference.ttftS == Approx(evenServe.inference.ttftS).epsilon(1e-12));
        // Over an EP group the critical GPU carries it: serving slows.
        serve["gpus"] = 8;
        serve["strategy"]["ep"] = 8;
        const Result epEven = [&] {
            json e = serve;
            e["model"]["moe"]["load_imbalance"] = 1.0;
            return evaluate(parseScenario(e, "serve"));
        }();
        CHECK(evaluate(parseScenario(serve, "serve")).inference.tpotS > epEven.inference.tpotS);
    }

    // More EP never increases a GPU's expert memory (experts split E / EP ways).
    double previous = 1e300;
    for (int ep : {1, 2, 4, 8, 16}) {
        const Scenario s = toyMoe({{"strategy.ep", ep}, {"model.moe.experts", 16}});
        const double expertBytes = evaluate(s).moe.expertWeightsBytes;
        INFO("ep " << ep);
        CHECK(expertBytes <= previous);
        // 4 layers × 16 experts × 2·1024·512 params × 2 B / EP.
        CHECK(expertBytes == Approx(4.0 * 16 * 2 * 1024 * 512 * 2 / ep));
        previous = expertBytes;
    }

    // ETP splits each expert's width too: EP 8 × ETP 2 holds 1/16 of the routed experts,
    // 4 × 16 × 2·1024·512 × 2 B / 16 = 8,388,608 B.
    CHECK(evaluate(toyMoe({{"strategy.ep", 8}, {"strategy.etp", 2}, {"model.moe.experts", 16}}))
              .moe.expertWeightsBytes == Approx(8388608.0));

    // One expert, top-1, of the dense FFN width: no router, no routing, no all-to-all — the
    // same step as the dense model (DP reduction unbucketed so bucket counts cannot differ).
    // Inside one node exactly; across two nodes the expert gradients' own all-reduce pays its
    // own pipeline fill between the NVLink and network stages (a few µs here), so within 1%.
    // The pair (one-expert MoE, its dense model) on `gpus` GPUs.
    auto pair = [](int gpus) {
        const Scenario one = toyMoe({{"model.moe.experts", 1},
                                     {"model.moe.top_k", 1},
                                     {"strategy.ep", 1},
                                     {"strategy.dp_overlap", false},
                                     {"gpus", gpus},
                                     {"strategy.dp", gpus}});
        json dense = kToyMoe;
        dense["model"].erase("moe");
        dense["model"]["arch"] = "dense";
        dense["model"]["ffn_hidden"] = 512;
        dense["strategy"]["ep"] = 1;
        dense["strategy"]["dp_overlap"] = false;
        dense["gpus"] = gpus;
        dense["strategy"]["dp"] = gpus;
        return std::pair{one, parseScenario(dense, "dense")};
    };
    for (int gpus : {8, 16}) {
        const auto [one, d] = pair(gpus);
        CHECK(evaluate(one).stepTimeS ==
              Approx(evaluate(d).stepTimeS).epsilon(gpus == 8 ? 1e-12 : 1e-2));
    }
    // Under ZeRO-3 as well: the one-expert MoE layer gathers its dense part and its expert
    // (bf16, 2 B a parameter) and reduce-scatters their gradients, as the dense layer does its
    // whole (inside one node, where the two collectives add to the one).
    {
        auto [oneZ, dZ] = pair(8);
        oneZ.strategy.zeroStage = 3;
        dZ.strategy.zeroStage = 3;
        const Result a = evaluate(oneZ), b = evaluate(dZ);
        for (Collective c : {Collective::AllGather, Collective::ReduceScatter}) {
            CHECK(a.commTime(ParallelDim::DP, c).serializedS > 0);
            CHECK(a.commTime(ParallelDim::DP, c).serializedS ==
                  Approx(b.commTime(ParallelDim::DP, c).serializedS).epsilon(1e-12));
        }
        CHECK(a.stepTimeS == Approx(b.stepTimeS).epsilon(1e-12));
    }
    const auto [one, d] = pair(16);
    CHECK(one.model.totalParams() == d.model.totalParams());
    CHECK(evaluate(one).modelFlopsPerStep == Approx(evaluate(d).modelFlopsPerStep));
}

TEST_CASE("MoE all-to-all overlap hides the all-to-all behind compute, at an SM cost") {
    const Result exposed = evaluate(toyMoe({{"strategy.ep", 16}, {"model.moe.experts", 16}}));
    const Result overlapped = evaluate(toyMoe(
        {{"strategy.ep", 16}, {"model.moe.experts", 16}, {"strategy.moe_a2a_overlap", true}}));
    const CommTime& e = exposed.commTime(ParallelDim::EP, Collective::AllToAll);
    const CommTime& o = overlapped.commTime(ParallelDim::EP, Collective::AllToAll);
    CHECK(o.serializedS == Approx(e.serializedS));
    CHECK(o.exposedS < e.exposedS);
    CHECK(overlapped.stepTimeS < exposed.stepTimeS);
    // The compute stream pays 0.15 (default SM share) of the overlapped all-to-all time.
    CHECK(overlapped.computeS == Approx(exposed.computeS + 0.15 * e.serializedS).epsilon(1e-9));
}

TEST_CASE("Hand-derived MoE: a clamped, biased expert's unfused passes (GPT-OSS on "
          "Megatron-Core)") {
    // The toy, gated, with GPT-OSS's expert biases and activation clamp. Each GPU holds 2,048
    // routed copies (1,024 tokens × top-2); f_e = 512, h = 1024, 16-bit, 1 TB/s, no launch cost.
    //   clamp, forward: both halves clamped into new tensors (read + write 512 each), then
    //     concatenated (read + write 1,024): 8·f_e·copies·2 B = 16,777,216 B → 16.78 µs;
    //   clamp, backward: each half's gradient through its mask (read gradient and input, write
    //     one): 6·f_e·copies·2 B = 12,582,912 B → 12.58 µs;
    //   output bias b·p added per expert and concatenated (TEGroupedMLP._apply_bias): the
    //     product written, the sum read twice and written, the concatenation read and written:
    //     6·h·copies·2 B = 25,165,824 B → 25.17 µs; its backward (bias and weight gradients: a
    //     product and a reduction each) the same.
    EvaluateOptions o;
    o.timeline = true;
    const Scenario plain = toyMoe({{"model.gated_mlp", true}});
    const Scenario oss = toyMoe(
        {{"model.gated_mlp", true}, {"model.moe.glu_clamp", 7.0}, {"model.moe.expert_bias", true}});
    const Result r = evaluate(oss, o), base = evaluate(plain, o);
    CHECK(test::opSeconds(r, "expert activation clamp") == Approx(16.777216e-6));
    CHECK(test::opSeconds(r, "expert activation clamp (bwd)") == Approx(12.582912e-6));
    CHECK(test::opSeconds(r, "expert output bias") == Approx(25.165824e-6));
    CHECK(test::opSeconds(r, "expert output bias (bwd)") == Approx(25.165824e-6));
    // Without them the layer has none of these ops, and the rest is unchanged.
    CHECK(test::opDurations(base, "expert activation clamp").empty());
    CHECK(test::opDurations(base, "expert output bias").empty());
    CHECK(test::opSeconds(r, "expert activation") == test::opSeconds(base, "expert activation"));
    // The clamp and its concatenation keep a second copy of the up-projection output (4 f_e B a
    // copy, 4 MiB a layer here) unless the activation is recomputed.
    const double copy = 4.0 * 512 * 2048;
    CHECK(layerActivationBytes(oss.model, oss.strategy, oss.workload, true) -
              layerActivationBytes(plain.model, plain.strategy, plain.workload, true) ==
          Approx(copy));
    Scenario ossSel = oss, plainSel = plain;
    ossSel.strategy.recompute = plainSel.strategy.recompute = Recompute::Selective;
    CHECK(layerActivationBytes(ossSel.model, ossSel.strategy, ossSel.workload, true) ==
          layerActivationBytes(plainSel.model, plainSel.strategy, plainSel.workload, true));
    // A step pays them on every MoE layer of every micro-batch: 4 layers × 1 micro-batch × the
    // four ops' 79.69 µs at least (the clamp's host wait costs nothing here: no launch cost).
    CHECK(r.stepTimeS - base.stepTimeS >= 4 * 79.691776e-6 * 0.999);
}

TEST_CASE("Hand-derived MoE: the flat dispatcher regroups tokens by local expert") {
    // Megatron-Core's MoEAlltoAllTokenDispatcher receives the dispatched tokens grouped by
    // source rank; with more than one local expert, sort_chunks_by_idxs regroups them by
    // expert, and the combine's input goes back the same way. On the toy at EP 2 (4 local
    // experts), 2,048 routed copies of h = 1024 per GPU, each read and written once:
    // 2·2048·1024·2 B = 8,388,608 B → 8.39 µs at 1 TB/s, both ways, forward and backward.
    EvaluateOptions o;
    o.timeline = true;
    const Result flat = evaluate(toyMoe({{"strategy.ep", 2}}), o);
    for (const char* op : {"sort by local expert", "unsort by local expert",
                           "sort by local expert (bwd)", "unsort by local expert (bwd)"}) {
        INFO(op);
        CHECK(test::opSeconds(flat, op) == Approx(8.388608e-6));
    }
    // The per-node (DeepEP) dispatcher permutes once, after its dispatch; one local expert
    // (EP 8) needs no regrouping either.
    const Result deepep =
        evaluate(toyMoe({{"strategy.ep", 2}, {"strategy.moe_dispatcher", "deepep"}}), o);
    const Result one = evaluate(toyMoe(), o);
    CHECK(test::opDurations(deepep, "sort by local expert").empty());
    CHECK(test::opDurations(one, "sort by local expert").empty());
}

TEST_CASE("MoE fused grouped-MLP kernels: no activation pass, no host sync, never slower") {
    // Transformer Engine's CuTe DSL grouped MLP (strategy.moe_fused_mlp) folds the activation,
    // its clamp, bias and routing weight into the GEMM epilogues and keeps the token counts on
    // the GPU. On the toy, with GPT-OSS's extras and a 5 µs host cost per launch:
    const std::vector<std::pair<std::string, json>> oss = {
        {"model.gated_mlp", true},
        {"model.moe.glu_clamp", 7.0},
        {"model.moe.expert_bias", true},
        {"system.gpu.calibration.host_op_us", 5.0}};
    auto with = [&](bool fused) {
        auto edits = oss;
        edits.push_back({"strategy.moe_fused_mlp", fused});
        EvaluateOptions o;
        o.timeline = true;
        return evaluate(toyMoe(edits), o);
    };
    const Result unfused = with(false), fused = with(true);
    for (const char* op : {"expert activation", "expert activation clamp", "expert output bias",
                           "expert activation (bwd)", "expert activation clamp (bwd)",
                           "expert output bias (bwd)"}) {
        INFO(op);
        CHECK(!test::opDurations(unfused, op).empty());
        CHECK(test::opDurations(fused, op).empty());
    }
    CHECK(fused.stepTimeS < unfused.stepTimeS);
    CHECK(fused.compute.hostStallS <= unfused.compute.hostStallS);
    // The GEMMs themselves are the same.
    CHECK(test::opSeconds(fused, "expert up GEMMs") == test::opSeconds(unfused, "expert up GEMMs"));
}

TEST_CASE("Host launches: a GEMM below 16 bits quantises its input, three kernels under current "
          "scaling") {
    // Transformer Engine quantises a GEMM's input before the forward GEMM and, in the backward,
    // the output gradient once for both the data- and the weight-gradient GEMM
    // (_GroupedLinear.backward; Linear likewise). One quantisation is one cast kernel, or under
    // current scaling three: the amax, the scale from it, the cast
    // (Float8CurrentScalingQuantizer::quantize_impl). So a GEMM launches 1 + q kernels forward
    // and q + 2 backward, q = 0 (16-bit), 1 (delayed or block scaling) or 3 (current scaling);
    // a grouped GEMM that per local expert.
    // The toy with 32 experts (4 local at EP 8) and a 10 ms host cost per launch: the MoE
    // layer's backward has no host sync, so it is host-bound and lasts exactly its launches ×
    // 10 ms. Its GEMMs: QKV, the output projection and 4 + 4 expert GEMMs, 10 in all, so each
    // launch of q adds 10 backward launches: block scaling +100 ms over bf16, current +300 ms.
    // (Counting each backward GEMM's quantisation twice, as before, gave +160 and +320 ms.)
    auto backwardLayer = [](const char* precision, const char* scaling, int shared = 0) {
        // One MoE layer's backward: from its first op to the host stall that closes it.
        return hostBoundSpan(toyMoe({{"model.moe.experts", 32},
                                     {"model.moe.shared_experts", shared},
                                     {"system.gpu.peak_tflops.fp8", 200},
                                     {"workload.precision", precision},
                                     {"workload.fp8_scaling", scaling},
                                     {"system.gpu.calibration.host_op_us", 10000.0}}),
                             "residual (bwd)");
    };
    const double bf16 = backwardLayer("bf16", "delayed");
    const double block = backwardLayer("fp8", "block");
    const double current = backwardLayer("fp8", "current");
    REQUIRE(bf16 > 0);
    CHECK(block - bf16 == Approx(0.100).epsilon(1e-6));
    CHECK(current - bf16 == Approx(0.300).epsilon(1e-6));
    // And bf16 itself: residual, unpermute, combine all-to-all, unsort (4), 4 × 2 down-GEMM
    // gradients (12), activation, 4 × 2 up-GEMM gradients (21), sort, dispatch all-to-all,
    // permute, router (25); residual + norm, 2 output-projection gradients, attention, 2 QKV
    // gradients, norm (32): 32 launches, 320 ms.
    CHECK(bf16 == Approx(0.320).epsilon(1e-6));
    // A shared expert adds its up and down GEMMs' data and weight gradients and its
    // activation's backward beside the dispatch: 4 + 1 = 5 launches, 370 ms.
    CHECK(backwardLayer("bf16", "delayed", 1) == Approx(0.370).epsilon(1e-6));
}

TEST_CASE("Host launches: an overlapped MoE layer's shared expert launches its GEMMs and "
          "activation") {
    // With the all-to-alls overlapped (strategy moe_a2a_overlap), the shared expert runs in
    // line after the dispatch: its up and down GEMMs and its activation, 2 + 1 = 3 launches.
    // At 10 ms a launch the layer's forward is host-bound after the router's sync, so the
    // shared expert adds 3 × 10 ms = 30 ms to it (its GPU time is microseconds).
    // Without the overlap the shared expert runs beside the dispatch: the same launches.
    auto forwardLayer = [](int shared, bool overlap = true) {
        return hostBoundSpan(toyMoe({{"model.moe.shared_experts", shared},
                                     {"strategy.moe_a2a_overlap", overlap},
                                     {"system.gpu.calibration.host_op_us", 10000.0}}),
                             "residual + norm (MoE)");
    };
    const double without = forwardLayer(0);
    REQUIRE(without > 0);
    CHECK(forwardLayer(1) - without == Approx(0.030).epsilon(1e-6));
    CHECK(forwardLayer(1, false) - forwardLayer(0, false) == Approx(0.030).epsilon(1e-6));
}

TEST_CASE("Hand-derived MoE: DeepSeek-V3's total parameters, tensor by tensor") {
    // 61 layers of MLA attention, 187,114,496 each (above): 11,413,984,256. The first 3 layers'
    // dense SwiGLU MLPs of 18,432 with their norm, 3 · (3 · 7168 · 18432 + 7168) =
    // 1,189,106,688. The other 58 MoE layers: 256 routed + 1 shared experts of 2,048,
    // 257 · 3 · 7168 · 2048 = 11,318,329,344, the router 7168 · 256 = 1,835,008 and the norm
    // 7,168: 58 · 11,320,171,520 = 656,569,948,160. Embedding and LM head 129,280 · 7,168 =
    // 926,679,040 each, the final norm 7,168. In all 671,026,404,352 (the report's 671B, its
    // MTP module apart).
    const Model m = test::modelPreset("deepseek-v3");
    CHECK(m.totalParams() == 671026404352.0);
    // Active: the attention and the 3 dense MLPs as above; each MoE layer's shared expert,
    // router and norm with 8 routed experts, 58 · (44,040,192 + 1,835,008 + 7,168 + 8 ·
    // 44,040,192) = 23,095,826,432; the LM head and the final norm (the embedding is a
    // lookup): 36,625,603,584, the report's 37B activated.
    CHECK(m.activeParams() == 36625603584.0);
}

TEST_CASE("MoE hand-derived: a grouped GEMM pays one launch cost, as one kernel") {
    // Transformer Engine's grouped GEMM for the local experts is one launch on the GPU side
    // (its per-expert kernels are counted for the host, not timed one by one): 5 µs of launch
    // cost adds exactly 5 µs to the expert up GEMMs' op (16-bit: no cast kernels).
    auto expertUp = [](double launchUs) {
        EvaluateOptions o;
        o.timeline = true;
        return test::opSeconds(
            evaluate(toyMoe({{"system.gpu.calibration.kernel_launch_us", launchUs}}), o),
            "expert up GEMMs");
    };
    CHECK(expertUp(5) - expertUp(0) == Approx(5e-6).epsilon(1e-9));
}

TEST_CASE("MoE presets: parameter counts as published") {
    // DeepSeek-V3 report: 671B total, 37B activated; Qwen3 report Table 1: 30.5B / 3.3B and
    // 235B / 22B; GPT-OSS model card: 116.8B / 5.1B (5.13B incl. embedding); Mixtral paper:
    // 46.7B / 12.9B; the MAD-Max seed: GPT-4 1.8T has 1,815.5B.
    struct Row {
        const char* id;
        double total, active, tol;
    };
    for (const Row& r : {Row{"deepseek-v3", 671e9, 37e9, 0.02},
                         Row{"qwen3-30b-a3b", 30.5e9, 3.3e9, 0.03},
                         Row{"qwen3-235b-a22b", 235e9, 22e9, 0.03},
                         Row{"gpt-oss-120b", 116.8e9, 5.13e9, 0.03},
                         Row{"mixtral-8x7b", 46.7e9, 12.9e9, 0.02},
                         Row{"gpt4-1.8t", 1815.5e9, 0, 0.01}}) {
        INFO(r.id);
        const Model m = test::modelPreset(r.id);
        CHECK(m.totalParams() == Approx(r.total).epsilon(r.tol));
        if (r.active > 0) CHECK(m.activeParams() == Approx(r.active).epsilon(r.tol * 3));
    }
}

TEST_CASE("MoE: bad input names the field and the fix") {
    CHECK_THAT(errorOf({{"model.moe.top_k", 9}}), Catch::Contains("top_k") &&
                                                      Catch::Contains("cannot exceed experts"));
    CHECK_THAT(errorOf({{"strategy.ep", 3}, {"strategy.dp", 16}}),
               Catch::Contains("EP=3") && Catch::Contains("experts"));
    CHECK_THAT(errorOf({{"strategy.ep", 8}, {"strategy.etp", 4}}),
               Catch::Contains("EP × ETP") && Catch::Contains("divide"));
    CHECK_THAT(errorOf({{"strategy.etp", 3}}), Catch::Contains("ETP=3"));
    CHECK_THAT(errorOf({{"model.moe.capacity_factor", 0.5}}),
               Catch::Contains("capacity_factor") && Catch::Contains("dropless"));
    CHECK_THAT(errorOf({{"model.moe.load_imbalance", 0.5}}), Catch::Contains("load_imbalance"));
    CHECK_THAT(errorOf({{"model.moe.experts", -4}}), Catch::Contains("model.moe.experts"));
    CHECK_THAT(errorOf({{"model.moe.dense_layers", 4}}), Catch::Contains("dense_layers"));
    CHECK_THAT(errorOf({{"model.moe.expert_ffn", 4}}), Catch::Contains("expert_ffn_hidden"));
    CHECK_THAT(errorOf({{"model.arch", "dense"}}), Catch::Contains("needs arch \"moe\""));
    CHECK_THAT(errorOf({{"model.moe.glu_clamp", -7}}), Catch::Contains("model.moe.glu_clamp"));
    // The toy is ungated: a clamp there would be ignored, so it is refused, with the fix.
    CHECK_THAT(errorOf({{"model.moe.glu_clamp", 7.0}}),
               Catch::Contains("glu_clamp") && Catch::Contains("gated_mlp"));
    CHECK_THAT(errorOf({{"model.moe.expert_bias", "yes"}}),
               Catch::Contains("model.moe.expert_bias"));
    CHECK_THAT(errorOf({{"strategy.moe_fused_mlp", 1}}), Catch::Contains("moe_fused_mlp"));
    // A dense model with EP: refused, with the fix.
    std::string msg;
    try {
        test::preset("default", {"strategy.ep=2"});
    } catch (const InputError& e) {
        msg = e.what();
    }
    CHECK_THAT(msg, Catch::Contains("apply to mixture-of-experts models only"));
    // MLA: kv_heads and head_dim belong to the latent shape, not beside it.
    CHECK_THAT(errorOf({{"model.mla", json{{"kv_lora_rank", 64},
                                           {"qk_nope_head_dim", 64},
                                           {"qk_rope_head_dim", 32},
                                           {"v_head_dim", 64}}}}),
               Catch::Contains("kv_heads"));
}

TEST_CASE("MoE scenario presets evaluate, fit, and round-trip through JSON") {
    for (const char* id : {"deepseek-v3-256-gb200", "qwen3-235b-256-h100"}) {
        INFO(id);
        const Scenario s = test::preset(id);
        REQUIRE(s.model.isMoe());
        const Result r = evaluate(s);
        CHECK(r.memory.fits());
        CHECK(r.moe.active);
        CHECK(r.commTime(ParallelDim::EP, Collective::AllToAll).serializedS > 0);
        CHECK(r.mfu > 0.05);
        CHECK(r.mfu < 0.8);
        const Scenario back = parseScenario(toJson(s), "roundtrip");
        CHECK(evaluate(back).stepTimeS == r.stepTimeS);
    }
}

TEST_CASE("MoE serving: expert weights split over EP, decode reads only the experts touched") {
    auto serving = [](int ep, int batch) {
        json doc = kToyMoe;
        doc["gpus"] = 2;
        doc["strategy"] = {{"tp", 1}, {"pp", 1}, {"dp", 2}, {"ep", ep}};
        doc["workload"] = {{"kind", "inference"}, {"input_tokens", 128},
                           {"output_tokens", 128}, {"batch", batch}};
        return evaluate(parseScenario(doc, "toy-moe-serving"));
    };
    // Weights per GPU, 16-bit: 4 layers × (attention 4,194,304 + router 8,192 + routed experts
    // 8,388,608 / EP) + embedding and LM head 2 · 33,554,432, all × 2 B. EP 1: 4 × 12,591,104 +
    // 67,108,864 = 117,473,280 params = 234,946,560 B; EP 2: 4 × 8,396,800 + 67,108,864 =
    // 100,696,064 params = 201,392,128 B.
    CHECK(serving(1, 1).memory.weightsBytes == Approx(234946560.0));
    CHECK(serving(2, 1).memory.weightsBytes == Approx(201392128.0));
    // At batch 1 a token touches k = 2 of 8 experts (8·(1 − (7/8)²) = 1.875 expected); at batch
    // 16 (32 copies) nearly all 8 (7.86): the decode step reads more expert weights as the
    // batch grows (every GEMM still memory-bound at 16 rows on this 100 TFLOP/s, 1 TB/s GPU).
    const Result one = serving(1, 1), many = serving(1, 16);
    CHECK(one.inference.decodeWeightReadS < many.inference.decodeWeightReadS);
    // EP 2 spreads the experts over both replicas: an all-to-all per MoE layer per step.
    CHECK(serving(2, 8).commTime(ParallelDim::EP, Collective::AllToAll).serializedS > 0);
    CHECK(serving(1, 8).commTime(ParallelDim::EP, Collective::AllToAll).serializedS == 0);
}

TEST_CASE("MoE serving preset fits and the serving search enumerates EP") {
    const Scenario s = test::preset("serve-deepseek-v3-16xh200");
    const Result r = evaluate(s);
    CHECK(r.memory.fits());
    CHECK(r.inference.outputTokensPerSPerGpu > 0);
    // MLA: 61 layers × (512 + 64) latent elements × 1 B (FP8 cache) = 35,136 B per token.
    CHECK(r.inference.kvBytesPerToken == Approx(35136.0));
    std::string out;
    REQUIRE(test::runCli("search serve-deepseek-v3-16xh200 --json", &out) == 0);
    const auto j = json::parse(out);
    bool wideEp = false;
    for (const auto& c : j["top"])
        wideEp = wideEp || c["strategy"]["ep"].get<int>() > 1;
    CHECK(wideEp);
}

TEST_CASE("Co-design knob sfu_exp: the exponential units' rate speeds attention, by its share") {
    using test::preset;
    // Llama 3 70B on H100 (head dim 128): 2·(128 + 128) = 512 tensor FLOPs per score at 989
    // TFLOP/s take 5.1769e-13 s, one exponential at 3.865·10¹²/s (H100 preset) 2.5873e-13 s,
    // and the two add. Twice the rate leaves (5.1769 + 1.2937) / (5.1769 + 2.5873) = 0.8334 of
    // the forward kernel (less its launch) and (12.942 + 1.2937) / (12.942 + 2.5873) = 0.9167 of
    // the backward (2.5× the FLOPs); the step is faster, and half the rate makes it slower.
    const Scenario base = preset("default");
    EvaluateOptions o;
    o.timeline = true;
    const Result r = evaluate(base, o);
    const double t = r.stepTimeS;
    const Scenario twice = scaleKnob(base, "sfu_exp", 2.0);
    CHECK(twice.system.gpu.expPerS == Approx(2.0 * base.system.gpu.expPerS));
    const Result r2 = evaluate(twice, o);
    const double launch = base.system.gpu.calibration.kernelLaunchS;
    CHECK((test::opSeconds(r2, "attention core") - launch) /
              (test::opSeconds(r, "attention core") - launch) ==
          Approx(0.8334).epsilon(1e-3));
    CHECK((test::opSeconds(r2, "attention core (bwd)") - launch) /
              (test::opSeconds(r, "attention core (bwd)") - launch) ==
          Approx(0.9167).epsilon(1e-3));
    CHECK(r2.stepTimeS < t);
    CHECK(evaluate(scaleKnob(base, "sfu_exp", 0.5)).stepTimeS > t * 1.001);
    // A GPU without the rate has no such units to scale: the knob says so, and the default
    // sensitivity run leaves it out.
    const Scenario none = preset("default", {"system.gpu.peak_exp_tera_per_s=null"});
    CHECK(none.system.gpu.expPerS == 0);
    CHECK_THROWS_WITH(scaleKnob(none, "sfu_exp", 2.0),
                      Catch::Contains("gpu.peak_exp_tera_per_s"));
    const auto knobs = sensitivityKnobs(none.system);
    CHECK(std::find(knobs.begin(), knobs.end(), "sfu_exp") == knobs.end());
    const auto all = sensitivityKnobs(base.system);
    CHECK(std::find(all.begin(), all.end(), "sfu_exp") != all.end());
}

TEST_CASE("GPT-OSS's head dim 64 on Blackwell: softmax exponentials take two thirds of the "
          "attention forward") {
    using test::preset;
    // 2·(64 + 64) = 256 tensor FLOPs per score at 2,500 TFLOP/s take 1.024e-13 s; one
    // exponential at 4.883·10¹²/s (GB200 preset: 16 against 8,192 FLOPs a clock per SM)
    // 2.048e-13 s, twice as long, and the tensor cores wait for it: the forward takes
    // (1.024 + 2.048) / 1.024 = 3.0× its tensor-core time, the backward (2.5 × 1.024 + 2.048) /
    // (2.5 × 1.024) = 1.8×.
    const Scenario s = preset("deepseek-v3-256-gb200",
                              {"model=gpt-oss-120b", "strategy.pp=1", "strategy.vp=1",
                               "strategy.ep=64", "strategy.dp=256", "strategy.tp=1",
                               "strategy.first_stage_layers=0", "strategy.last_stage_layers=0",
                               "workload.global_batch=256", "workload.seq_len=8192"});
    EvaluateOptions o;
    o.timeline = true;
    const Scenario tensorOnly = [&] {
        Scenario t = s;
        t.system.gpu.expPerS = 0;
        return t;
    }();
    const Result withSfu = evaluate(s, o), without = evaluate(tensorOnly, o);
    const double launch = s.system.gpu.calibration.kernelLaunchS;
    CHECK(test::opSeconds(withSfu, "attention core") - launch ==
          Approx(3.0 * (test::opSeconds(without, "attention core") - launch)).epsilon(1e-3));
    CHECK(test::opSeconds(withSfu, "attention core (bwd)") - launch ==
          Approx(1.8 * (test::opSeconds(without, "attention core (bwd)") - launch))
              .epsilon(1e-3));
    // The report says why, with the ratio: 2.048e-13 / 1.024e-13 = 2.00 forward, 2 / 3 = 67%
    // of the kernel; the backward's exponentials (0.8x its tensor time) are not named. Head
    // dim 128 on H100 (0.5x) says nothing.
    const std::string report = formatReport(s, withSfu);
    CHECK_THAT(report, Catch::Contains("attention waits mostly on its softmax: the exponentials "
                                       "take 2.00x the tensor cores' time forward, 67% of the "
                                       "kernel (head dims 64/64"));
    CHECK_THAT(report, !Catch::Contains("backward (head"));
    CHECK_THAT(formatReport(test::preset("default"), evaluate(test::preset("default"))),
               !Catch::Contains("waits mostly on its softmax"));
}

TEST_CASE("MoE serving: a one-expert, top-1 MoE serves as its dense model does") {
    // One expert of the dense FFN width, top-1, EP 1: every token reaches the same expert, no
    // all-to-all, the expert's weights are the dense MLP's. Aggregated and disaggregated decode,
    // with and without speculation, data parallel and across TP 8 (ETP 8): TTFT, TPOT,
    // throughput, weight and total memory equal.
    const json serving = {{"kind", "inference"}, {"input_tokens", 1000}, {"output_tokens", 100},
                          {"batch", 8},          {"precision", "bf16"}};
    for (const auto& extra : std::vector<std::vector<std::pair<std::string, json>>>{
             {}, {{"workload.phase", "decode"}}, {{"workload.draft_tokens", 2}},
             {{"strategy.tp", 8}, {"strategy.dp", 1}}}) {
        json moe = kToyMoe, dense = kToyMoe;
        moe["model"]["moe"] = {{"experts", 1}, {"top_k", 1}, {"expert_ffn_hidden", 512}};
        dense["model"].erase("moe");
        dense["model"]["arch"] = "dense";
        dense["model"]["ffn_hidden"] = 512;
        for (json* d : {&moe, &dense}) {
            (*d)["workload"] = serving;
            (*d)["gpus"] = 8;
            (*d)["strategy"] = {{"tp", 1}, {"pp", 1}, {"dp", 8}, {"ep", 1}};
            for (const auto& [path, value] : extra) applyOverride(*d, path, value, "pair");
        }
        // Under TP the expert splits as the dense MLP does only with ETP = TP (ETP 1 keeps each
        // expert whole on every TP rank, as Megatron's expert_tensor_parallel_size 1 does).
        moe["strategy"]["etp"] = moe["strategy"]["tp"];
        const Result a = evaluate(parseScenario(moe, "moe")), b = evaluate(parseScenario(dense, "dense"));
        INFO(moe["strategy"].dump() << " " << moe["workload"].dump());
        CHECK(a.inference.ttftS == Approx(b.inference.ttftS).epsilon(1e-9));
        CHECK(a.inference.tpotS == Approx(b.inference.tpotS).epsilon(1e-9));
        CHECK(a.tokensPerS == Approx(b.tokensPerS).epsilon(1e-9));
        CHECK(a.memory.weightsBytes == Approx(b.memory.weightsBytes).epsilon(1e-9));
        CHECK(a.memory.totalBytes() == Approx(b.memory.totalBytes()).epsilon(1e-9));
    }
}

TEST_CASE("MoE fine-tuning: freezing the embedding leaves the experts' gradients") {
    // The toy MoE with only its token embedding frozen: the gradient buffers lose exactly the
    // embedding's 32,768 × 1,024 parameters (the first stage holds it; no TP) and keep every
    // expert's (8 experts of 2 × 1,024 × 512 over EP 8, 4 layers: 4,194,304 a GPU).
    const MemoryBreakdown all = evaluate(toyMoe()).memory;
    const MemoryBreakdown frozen =
        evaluate(toyMoe({{"workload.frozen", json{{"embedding", true}}}})).memory;
    // bf16 gradients, 2 B a parameter: 67,108,864 B fewer (dropping the experts' too would
    // make it 75,497,472).
    INFO("grads " << all.gradsBytes << " -> " << frozen.gradsBytes);
    CHECK(all.gradsBytes - frozen.gradsBytes == Approx(2.0 * 32768 * 1024));
}

TEST_CASE("MoE serving: a decode pool's activations hold the routed and shared experts' width") {
    // The toy MoE (h = 1024, 8 heads of 128, 8 KV heads, vocab 32,768, no dense layers), 8
    // experts top-2 of width 512 with one shared expert, TP 1, decode at batch 8: per row the
    // hidden state twice, Q, K and V (2,048 + 1,024 + 2,048) and the MLP's two ungated
    // matrices over (2 + 1) × 512 = 1,536, 3,072: 8,192 elements of 2 B, 131,072 B for 8 rows;
    // and the logits, 8 × 32,768 × 4 B = 1,048,576 B. In all 1,179,648 B.
    json doc = kToyMoe;
    doc["model"]["moe"]["shared_experts"] = 1;
    doc["workload"] = {{"kind", "inference"}, {"input_tokens", 1000}, {"output_tokens", 100},
                       {"batch", 8}, {"precision", "bf16"}, {"phase", "decode"}};
    doc["gpus"] = 8;
    doc["strategy"] = {{"tp", 1}, {"pp", 1}, {"dp", 8}, {"ep", 8}};
    CHECK(evaluate(parseScenario(doc, "toy-moe")).memory.activationsBytes == Approx(1179648.0));
}

TEST_CASE("MoE serving, two-batch overlap: each layer runs as two micro-batches") {
    // DeepSeek's inference system and SGLang's TBO split the batch in two and run every layer
    // once per half (LMSYS, 2025-05-05, "Two-batch Overlap"): a memory-bound decode GEMM reads
    // its weights twice. The toy's one-expert, top-1 MoE at EP 1 (no all-to-all to hide) and
    // batch 8: each layer's GEMM weights are QKV 1024 × 3072, output 1024 × 1024 and the
    // expert's up and down 1024 × 512 each, 5,242,880 parameters; 4 layers in bf16 are
    // 41,943,040 B, read once more per decode round at 1 TB/s: 4.194304e-5 s more on the weight
    // side. The LM head is outside the layers and read once either way.
    auto round = [](bool tbo) {
        json doc = kToyMoe;
        doc["model"]["moe"] = {{"experts", 1}, {"top_k", 1}, {"expert_ffn_hidden", 512}};
        doc["workload"] = {{"kind", "inference"}, {"input_tokens", 1000}, {"output_tokens", 100},
                           {"batch", 8}, {"precision", "bf16"}, {"phase", "decode"}};
        doc["gpus"] = 8;
        doc["strategy"] = {{"tp", 1}, {"pp", 1}, {"dp", 8}, {"ep", 1}, {"moe_a2a_overlap", tbo}};
        return evaluate(parseScenario(doc, "toy-moe")).inference;
    };
    const InferenceResult one = round(false), two = round(true);
    CHECK(two.decodeWeightSideS - one.decodeWeightSideS == Approx(4.194304e-5).epsilon(1e-9));
    // The attention core's KV reads are the sequences', split between the halves: unchanged.
    CHECK(two.decodeKvSideS == Approx(one.decodeKvSideS).epsilon(1e-12));
    CHECK(two.tpotS > one.tpotS); // nothing to hide, so the split only costs
}

TEST_CASE("MoE serving, two-batch overlap: hidden all-to-alls hold SMs in prefill, not in decode") {
    // DeepEP's normal kernels (prefill) run on SMs while they overlap the other micro-batch's
    // compute, slowing it by the share they hold (strategy moe_comm_sm_fraction); its
    // low-latency kernels (decode) issue RDMA and free every SM while in flight (DeepEP README;
    // LMSYS 2025-05-05: decode communication has no resource contention with computation).
    // Other dispatchers hold SMs in both phases.
    auto run = [](const char* phase, const char* dispatcher, double sms) {
        return evaluate(toyMoe({{"workload", {{"kind", "inference"}, {"input_tokens", 2048},
                                              {"output_tokens", 100}, {"batch", 64},
                                              {"precision", "bf16"}, {"phase", phase}}},
                                {"strategy.moe_a2a_overlap", true},
                                {"strategy.moe_dispatcher", dispatcher},
                                {"strategy.moe_comm_sm_fraction", sms}}));
    };
    // The prefill pool's pass is bound by sending its KV caches over the toy's 10 GB/s scale-out
    // network; a prompt's own prefill (TTFT's service part) shows the compute.
    // The slowdown is the held share of the hidden time: the all-to-all run without overlap
    // (the toy's links have no latency, so its halves add up to the whole) less what stays
    // exposed with it, times 0.3.
    const Result prefill0 = run("prefill", "deepep", 0), prefill3 = run("prefill", "deepep", 0.3);
    Scenario blocking = toyMoe({{"workload", {{"kind", "inference"}, {"input_tokens", 2048},
                                              {"output_tokens", 100}, {"batch", 64},
                                              {"precision", "bf16"}, {"phase", "prefill"}}},
                                {"strategy.moe_dispatcher", "deepep"}});
    const double whole = evaluate(blocking).inference.prefillAllToAllS;
    const double hidden = whole - prefill0.inference.prefillAllToAllS;
    REQUIRE(hidden > 0);
    CHECK(prefill3.inference.prefillComputeS - prefill0.inference.prefillComputeS ==
          Approx(0.3 * hidden).epsilon(1e-9));
    CHECK(run("decode", "deepep", 0.3).inference.tpotS ==
          Approx(run("decode", "deepep", 0).inference.tpotS).epsilon(1e-12));
    CHECK(run("decode", "all_to_all", 0.3).inference.tpotS >
          run("decode", "all_to_all", 0).inference.tpotS);
}

TEST_CASE("Hand-derived MLA: DeepSeek-V3's attention parameters per layer, tensor by tensor") {
    // The released config's tensors (hidden 7168, 128 heads, q_lora_rank 1536, kv_lora_rank
    // 512, qk_nope 128, qk_rope 64, v_head 128): q_a_proj 7168·1536 = 11,010,048,
    // q_a_layernorm 1,536, q_b_proj 1536·128·192 = 37,748,736, kv_a_proj_with_mqa
    // 7168·(512 + 64) = 4,128,768, kv_a_layernorm 512, kv_b_proj 512·128·(128 + 128) =
    // 16,777,216, o_proj 128·128·7168 = 117,440,512, input_layernorm 7,168: 187,114,496.
    const Scenario s = test::preset("deepseek-v3-256-gb200");
    CHECK(s.model.attentionParamsPerLayer() == 187114496.0);
}

TEST_CASE("MoE serving: a speculative decode round holds every verified row's activations") {
    // The decode pool above with 3 draft tokens (MTP): each sequence verifies 1 + 3 = 4 rows a
    // round (Leviathan et al. 2023), so 32 rows of 8,192 elements of 2 B, 524,288 B, and fp32
    // logits at every verified row, 32 × 32,768 × 4 B = 4,194,304 B, against which each draft
    // position is accepted or rejected. In all 4,718,592 B (4 × the 1,179,648 B without).
    json doc = kToyMoe;
    doc["model"]["moe"]["shared_experts"] = 1;
    doc["workload"] = {{"kind", "inference"}, {"input_tokens", 1000}, {"output_tokens", 100},
                       {"batch", 8}, {"precision", "bf16"}, {"phase", "decode"},
                       {"draft_tokens", 3}};
    doc["gpus"] = 8;
    doc["strategy"] = {{"tp", 1}, {"pp", 1}, {"dp", 8}, {"ep", 8}};
    CHECK(evaluate(parseScenario(doc, "toy-moe")).memory.activationsBytes == Approx(4718592.0));
}

TEST_CASE("MoE hand-derived: the router's GEMM and its softmax / top-k pass") {
    // 1,024 tokens a micro-batch on a GPU (TP 1), h = 1,024, 8 experts: the router GEMM
    // 1,024 × 8 × 1,024 is memory-bound on the toy GPU, its input, weights and logits
    // (1,048,576 + 8,192 + 8,192) · 2 B = 2,129,920 B → 2.12992e-6 s (its FLOPs need only
    // 3.36e-7 s); the softmax and top-k read the fp32 logits and write the fp32 probabilities,
    // 1,024 · 8 · (4 + 4) B = 65,536 B → 6.5536e-8 s. In all 2.195456e-6 s.
    EvaluateOptions o;
    o.timeline = true;
    CHECK(test::opSeconds(evaluate(toyMoe(), o), "router") == Approx(2.195456e-6).epsilon(1e-9));
}
