// Activation offloading (strategy.offload_layers, Megatron-Core cpu_offloading_num_layers with
// Transformer Engine's double-buffered handler): expected numbers by hand on the toy scenario
// (l = 4, h = 1024, s = 1024, b = 1, flash attention, TP 1, two micro-batches: test::toy),
// whose system gets a host link of its own here.
#include "test_support.hpp"

#include "madmax/error.hpp"
#include "madmax/memory.hpp"
#include "madmax/search.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace madmax;
using nlohmann::json;

namespace {

Scenario offloaded(int layers, double linkGbps, test::Edits more = {}) {
    more.push_back({"system.host_link_gbps", linkGbps});
    more.push_back({"strategy.offload_layers", layers});
    return test::toy(more);
}

// Korthikanti et al. 2022 Table 2, flash attention, TP 1: a layer keeps 34sbh =
// 1024·1024·34 = 35,651,584 B; the loss's fp32 logits 4sV = 134,217,728 B.
constexpr double kLayer = 35651584.0, kLogits = 134217728.0;

} // namespace

TEST_CASE("Offloading: the GPU keeps the other layers and one offloaded layer in flight") {
    // n = 2 of 4: layers 2 and 3 stay, plus the last one sent (layer 1) at the turn to backward.
    CHECK(evaluate(offloaded(2, 100)).memory.activationsBytes ==
          Approx(3 * kLayer + kLogits).epsilon(1e-12));
    // n = 3 (all but the last layer): "at most two activation groups" on the GPU.
    CHECK(evaluate(offloaded(3, 100)).memory.activationsBytes ==
          Approx(2 * kLayer + kLogits).epsilon(1e-12));
    CHECK(evaluate(test::toy()).memory.activationsBytes ==
          Approx(4 * kLayer + kLogits).epsilon(1e-12));
}

TEST_CASE("Offloading: a copy longer than its window of layers is waited for") {
    // n = 2 of 4 layers: Transformer Engine's windows close at layers (4/2)(i + 1) − 1 = 1 and 3,
    // so layer 0's copy overlaps layer 1's forward and layer 1's copy layers 2 and 3. At 1 GB/s a
    // copy takes 35.651584 ms, longer than any window here, so each wait is the copy less its
    // window: doubling the link saves 2 × 17.825792 ms of forward waits per micro-batch, and as
    // much in the backward (the same windows bring them back), over two micro-batches.
    const Result slow = evaluate(offloaded(2, 1)), fast = evaluate(offloaded(2, 2));
    REQUIRE(fast.compute.offloadWaitForwardS > 0);
    CHECK(slow.compute.offloadWaitForwardS - fast.compute.offloadWaitForwardS ==
          Approx(2 * 2 * 0.017825792).epsilon(1e-9));
    CHECK(slow.compute.offloadWaitS - fast.compute.offloadWaitS ==
          Approx(2 * 2 * 2 * 0.017825792).epsilon(1e-9));
    CHECK(slow.stepTimeS - fast.stepTimeS == Approx(2 * 2 * 2 * 0.017825792).epsilon(1e-6));
    // Absolute: layer 0's copy less one layer's forward, layer 1's less two: 2c − 3t per
    // micro-batch, t the toy's layer forward (its no-offload forward less the embedding and the
    // LM head, over its four layers).
    EvaluateOptions withTimeline;
    withTimeline.timeline = true;
    const Result plain = evaluate(test::toy(), withTimeline);
    const double layer = (plain.forwardPerMicroBatchS - test::opSeconds(plain, "embedding") -
                          test::opSeconds(plain, "LM head + loss")) /
                         4;
    CHECK(slow.compute.offloadWaitForwardS / 2 ==
          Approx(2 * 0.035651584 - 3 * layer).epsilon(1e-9));
    // n = 3 of 4: 4 mod 3 = 1 spreads one layer over the first window, which closes at layer
    // (4/3)(0 + 1) − 1 + 1 = 1; the others at 2 and 3. Each copy overlaps one layer: 3c − 3t.
    CHECK(evaluate(offloaded(3, 1)).compute.offloadWaitForwardS / 2 ==
          Approx(3 * 0.035651584 - 3 * layer).epsilon(1e-9));
    // The waits are forward and backward time: the step is the no-offload step plus them.
    const Result none = evaluate(test::toy());
    CHECK(slow.compute.forwardS - none.compute.forwardS ==
          Approx(slow.compute.offloadWaitForwardS).epsilon(1e-12));
    // A link fast enough hides every copy behind its window: the step is the step without.
    const Result hidden = evaluate(offloaded(2, 1e6));
    CHECK(hidden.compute.offloadWaitS == 0.0);
    CHECK(hidden.stepTimeS == Approx(none.stepTimeS).epsilon(1e-15));
    // A faster link is never slower; more layers offloaded never hold more memory.
    double last = 1e300;
    for (double gbps : {1.0, 4.0, 16.0, 64.0, 1e6}) {
        const double t = evaluate(offloaded(3, gbps)).stepTimeS;
        CHECK(t <= last);
        last = t;
    }
    CHECK(evaluate(offloaded(3, 1)).memory.totalBytes() <
          evaluate(offloaded(1, 1)).memory.totalBytes());
}

TEST_CASE("Offloading: the timeline shows the waits") {
    EvaluateOptions o;
    o.timeline = true;
    const Result r = evaluate(offloaded(2, 1), o);
    CHECK(test::opSeconds(r, "activation offload wait") ==
          Approx(r.compute.offloadWaitForwardS / 2).epsilon(1e-12));
    CHECK(test::opSeconds(r, "activation reload wait") ==
          Approx((r.compute.offloadWaitS - r.compute.offloadWaitForwardS) / 2).epsilon(1e-12));
}

TEST_CASE("Offloading: Megatron-Core's rules and a missing host link name the field") {
    auto err = [](int layers, test::Edits more) {
        more.push_back({"strategy.offload_layers", layers});
        return test::toyError(more);
    };
    CHECK_THAT(err(2, {}), Catch::Contains("needs system.host_link_gbps"));
    const test::Edits link{{"system.host_link_gbps", 64}};
    auto with = [&](test::Edits e) {
        e.insert(e.end(), link.begin(), link.end());
        return e;
    };
    CHECK_THAT(err(4, link), Catch::Contains("must be below the model's 4 layers") &&
                                 Catch::Contains("at most 3"));
    CHECK_THAT(err(2, with({{"gpus", 16}, {"strategy.pp", 2}, {"strategy.dp", 8}})),
               Catch::Contains("without pipeline parallelism only"));
    CHECK_THAT(err(2, with({{"strategy.recompute", "selective"}})),
               Catch::Contains("does not offload with activation recompute"));
    CHECK_THAT(err(2, with({{"strategy.cuda_graphs", true}})), Catch::Contains("CUDA graphs"));
    CHECK_THAT(err(2, with({{"workload.frozen", json{{"layers", 1}}}})),
               Catch::Contains("frozen layers") && Catch::Contains("not modelled"));
    CHECK_THAT(err(-1, link), Catch::Contains("offload_layers") && Catch::Contains("out of range"));
    CHECK_THAT(err(1, {{"system.host_link_gbps", -5}}),
               Catch::Contains("host_link_gbps") && Catch::Contains("out of range"));
    CHECK(err(0, {}) == "(no error)");
}

TEST_CASE("Offloading survives save and load, and the search tries it where it is allowed") {
    const Scenario s = offloaded(2, 64);
    const Scenario back = parseScenario(toJson(s), "saved.json");
    CHECK(back.strategy.offloadLayers == 2);
    CHECK(back.system.hostLinkBytesPerS == 64e9);
    CHECK(strategySpec(back.strategy).find("offload_layers=2") != std::string::npos);
    // The search: offload 2 on PP 1 without recompute, none elsewhere.
    SearchSpace space;
    parseRestriction("offload_layers=0,2", space);
    SearchOptions o;
    o.topN = 1000;
    o.threads = 1;
    o.prune = false;
    bool offload = false, none = false;
    for (const Candidate& c : search(s, space, o).top) {
        const Strategy& st = c.strategy;
        if (st.offloadLayers > 0) {
            offload = true;
            CHECK(st.offloadLayers == 2);
            CHECK(st.pp == 1);
            CHECK(st.recompute == Recompute::None);
        } else {
            none = true;
        }
    }
    CHECK(offload);
    CHECK(none);
    // A baseline with a pipeline drops the scenario's offload (Megatron-Core has none there).
    CHECK(parseStrategySpec("pp=2", s).offloadLayers == 0);
}
