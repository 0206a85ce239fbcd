// Whole-step behaviour of the engine: the schedule's identities and the effect of each knob.
#include "test_support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

using namespace madmax;

TEST_CASE("Step time is compute + exposed communication + bubble") {
    for (const char* id :
         {"default", "gpt3-175b-1024-a100", "llama31-405b-16384-h100", "llama3-8b-fsdp-64-h100",
          "llama2-7b-8-a100-40gb", "llama3-70b-gb200-nvl72"}) {
        INFO(id);
        const Result r = evaluate(test::preset(id));
        CHECK(r.stepTimeS == Approx(r.computeS + r.exposedCommS + r.bubbleS).epsilon(1e-12));
        CHECK(r.computeS == Approx(r.compute.totalS()));
        CHECK(r.exposedCommS <= r.serializedCommS() + 1e-12);
    }
}

TEST_CASE(
    "1F1B bubble is (p-1) micro-batch passes - interleaving divides it by v (Narayanan et al. "
    "SC21 §2.2)") {
    const Scenario base = test::preset("default", {"strategy.vp=1", "strategy.schedule=1f1b"});
    const Result r1 = evaluate(base);
    const double mb1 = r1.forwardPerMicroBatchS + r1.backwardPerMicroBatchS;
    CHECK(r1.bubbleS == Approx(3 * mb1).epsilon(1e-12));

    const Scenario inter = test::preset("default"); // pp = 4, vp = 5
    const Result r5 = evaluate(inter);
    const double mb5 = r5.forwardPerMicroBatchS + r5.backwardPerMicroBatchS;
    CHECK(r5.bubbleS == Approx(3.0 / 5.0 * mb5).epsilon(1e-12));
    CHECK(r5.bubbleS < r1.bubbleS);
    // ... at v times the point-to-point traffic.
    CHECK(r5.commTime(ParallelDim::PP, Collective::P2P).serializedS ==
          Approx(5 * r1.commTime(ParallelDim::PP, Collective::P2P).serializedS).epsilon(1e-9));
}

TEST_CASE("Without overlap the data-parallel reduction is fully exposed") {
    const Result on = evaluate(test::preset("llama2-7b-8-a100-40gb", {"strategy.zero_stage=0"}));
    const Result off = evaluate(test::preset(
        "llama2-7b-8-a100-40gb", {"strategy.zero_stage=0", "strategy.dp_overlap=false"}));
    const CommTime dpOff = off.dimTotal(ParallelDim::DP);
    CHECK(dpOff.exposedS == Approx(dpOff.serializedS));
    CHECK(on.dimTotal(ParallelDim::DP).exposedS < dpOff.exposedS);
    CHECK(on.stepTimeS < off.stepTimeS);
}

TEST_CASE("TP communication overlap hides TP collectives and is never slower") {
    const Result plain = evaluate(test::preset("default"));
    const Result overlap = evaluate(test::preset("default", {"strategy.tp_comm_overlap=true"}));
    CHECK(overlap.dimTotal(ParallelDim::TP).exposedS < plain.dimTotal(ParallelDim::TP).exposedS);
    CHECK(overlap.dimTotal(ParallelDim::TP).serializedS ==
          Approx(plain.dimTotal(ParallelDim::TP).serializedS));
    CHECK(overlap.stepTimeS < plain.stepTimeS);
}

TEST_CASE("FSDP gathers weights every micro-batch and hides most of it behind compute") {
    const Result r = evaluate(test::preset("llama3-8b-fsdp-64-h100"));
    const CommTime ag = r.commTime(ParallelDim::DP, Collective::AllGather);
    CHECK(ag.serializedS > 0);
    CHECK(ag.exposedS < 0.5 * ag.serializedS);
}

TEST_CASE("Full recompute costs one extra forward - selective only the attention core") {
    const Result none = evaluate(test::preset("default", {"strategy.recompute=none"}));
    const Result sel = evaluate(test::preset("default", {"strategy.recompute=selective"}));
    const Result full = evaluate(test::preset("default", {"strategy.recompute=full"}));
    CHECK(none.compute.recomputeS == 0);
    CHECK(sel.compute.recomputeS > 0);
    CHECK(full.compute.recomputeS > sel.compute.recomputeS);
    // Full recompute re-runs every layer's forward: the forward compute less the LM head that the
    // critical (last) stage also runs (2hV vs 20 layers of Llama 3 70B: about 5%).
    CHECK(full.compute.recomputeS < full.compute.forwardS);
    CHECK(full.compute.recomputeS > 0.85 * full.compute.forwardS);
    CHECK(none.memory.activationsBytes >= sel.memory.activationsBytes);
    CHECK(sel.memory.activationsBytes > full.memory.activationsBytes);
}

TEST_CASE("MFU and HFU follow their definitions") {
    const Scenario s = test::preset("default");
    const Result r = evaluate(s);
    const double peak = s.system.gpu.peak(s.workload.precision);
    CHECK(r.mfu == Approx(r.modelFlopsPerStep / (r.stepTimeS * s.gpus * peak)));
    CHECK(r.hfu == Approx(r.hardwareFlopsPerStep / (r.stepTimeS * s.gpus * peak)));
    CHECK(r.hfu >= r.mfu);
    CHECK(r.tokensPerS == Approx(512.0 * 8192 / r.stepTimeS));
}

TEST_CASE("The timeline lays each lane's ops end to end without overlap") {
    EvaluateOptions opt;
    opt.timeline = true;
    const Result r = evaluate(test::preset("default"), opt);
    REQUIRE(r.timeline.size() > 20);
    for (Lane lane : {Lane::Compute, Lane::Comm}) {
        double last = 0;
        for (const auto& e : r.timeline) {
            if (e.lane != lane) continue;
            CHECK(e.startS >= last - 1e-12);
            CHECK(e.endS >= e.startS);
            last = e.endS;
        }
    }
    CHECK(r.timeline.back().endS == Approx(r.stepTimeS).epsilon(1e-9));
    CHECK(evaluate(test::preset("default")).timeline.empty());
}

TEST_CASE("The timeline's first micro-batch is drawn without a hole: edges and p2p included") {
    // Every second of a micro-batch's wall time on the critical stage is an op on the chart:
    // the layers, the embedding (first stage), the LM head and its loss (last stage), their TP
    // collectives and the pipeline's sends. Before, the edges and the sends were charged to the
    // step but not drawn: GPT-OSS-120B on 64 GB200 showed an idle 24 ms at the end of each
    // micro-batch, the default scenario its last stage's head and p2p as blank.
    struct Case {
        const char* name;
        std::vector<std::string> sets;
        bool first, last, p2p;
    };
    const std::vector<Case> cases = {
        {"one stage (PP 1): embedding and head", {"strategy.pp=1", "strategy.vp=1",
                                                  "strategy.schedule=1f1b",
                                                  "strategy.dp=64", "strategy.tp=4"},
         true, true, false},
        {"the default: PP 4, the last stage critical", {}, false, true, true},
    };
    for (const Case& c : cases) {
        INFO(c.name);
        EvaluateOptions opt;
        opt.timeline = true;
        const Result r = evaluate(test::preset("default", c.sets), opt);
        double steady = -1;
        for (const auto& e : r.timeline)
            if (e.kind == TimelineKind::Steady) steady = e.startS;
        REQUIRE(steady > 0);
        CHECK(steady == Approx(r.forwardPerMicroBatchS + r.backwardPerMicroBatchS).epsilon(1e-9));
        // The union of the events before the steady span covers [0, steady].
        std::vector<std::pair<double, double>> spans;
        for (const auto& e : r.timeline)
            if (e.endS <= steady + 1e-12) spans.emplace_back(e.startS, e.endS);
        std::sort(spans.begin(), spans.end());
        double covered = 0;
        for (const auto& [a, b] : spans) {
            CHECK(a <= covered + 1e-9); // no hole before this op
            covered = std::max(covered, b);
        }
        CHECK(covered == Approx(steady).epsilon(1e-9));
        auto has = [&](const char* label) {
            return std::any_of(r.timeline.begin(), r.timeline.end(),
                               [&](const TimelineEvent& e) { return e.label == label; });
        };
        CHECK(has("embedding") == c.first);
        CHECK(has("embedding (bwd)") == c.first);
        CHECK(has("LM head + loss") == c.last);
        CHECK(has("LM head + loss (bwd)") == c.last);
        CHECK(has("pipeline p2p (activations)") == c.p2p);
        CHECK(has("pipeline p2p (gradients)") == c.p2p);
    }
}

TEST_CASE("The slowest pipeline stage sets the pace: a heavier last stage becomes critical") {
    const Result even =
        evaluate(test::preset("gpt3-175b-1024-a100", {"strategy.vp=1", "strategy.schedule=1f1b"}));
    const Result uneven = evaluate(test::preset(
        "gpt3-175b-1024-a100", {"strategy.vp=1", "strategy.schedule=1f1b",
                                "strategy.first_stage_layers=6", "strategy.last_stage_layers=18"}));
    CHECK(uneven.criticalStage == 7);
    CHECK(uneven.stepTimeS > even.stepTimeS);
}
