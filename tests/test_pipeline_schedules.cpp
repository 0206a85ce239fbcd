// Pipeline schedules as objects (madmax/pipeline_schedule.hpp): each bubble and activation count
// by hand from its paper, and the engine, memory model and search reading them.
#include "test_support.hpp"

#include "madmax/flops.hpp"
#include "madmax/memory.hpp"
#include "madmax/pipeline_schedule.hpp"
#include "madmax/search.hpp"

#include <catch2/catch.hpp>

using namespace madmax;

namespace {
Strategy pipeline(int pp, int vp = 1) {
    Strategy st;
    st.pp = pp;
    st.vp = vp;
    return st;
}
} // namespace

TEST_CASE("Each schedule's bubble is its paper's formula, on a toy by hand") {
    // F = 1, B = 2, W = 1 (B holds W), p = 8.
    const ChunkTimes c{1.0, 2.0, 1.0};
    // 1F1B (Narayanan et al. SC21 §2.2): (p − 1)(F + B) = 7 · 3 = 21.
    CHECK(scheduleModel(PipelineSchedule::OneFOneB).bubbleS(pipeline(8), c, 8) == Approx(21.0));
    // Interleaved, v = 2: 21 / 2.
    CHECK(scheduleModel(PipelineSchedule::Interleaved).bubbleS(pipeline(8, 2), c, 8) ==
          Approx(10.5));
    // ZB-H1 (Qi et al. ICLR 2024; DeepSeek-V3 report Table 2): (p − 1)(F + B − 2W) = 7 · 1 = 7.
    CHECK(scheduleModel(PipelineSchedule::ZeroBubble).bubbleS(pipeline(8), c, 8) == Approx(7.0));
    // DualPipe (DeepSeek-V3 report Table 2): (p/2 − 1)(F&B + B − 3W), F&B = F + B:
    // 3 · (3 + 2 − 3) = 6.
    CHECK(scheduleModel(PipelineSchedule::DualPipe).bubbleS(pipeline(8), c, 8) == Approx(6.0));
    // No pipeline, no bubble, whatever the schedule.
    for (const ScheduleModel& m : scheduleModels()) CHECK(m.bubbleS(pipeline(1), c, 8) == 0.0);
}

namespace {
/// DeepSpeed's TrainSchedule replayed slot by slot (deepspeed/runtime/pipe/schedule.py, v0.5.4):
/// on slot k, stage s runs the forward of micro-batch (k − s)/2 when k − s is even and the
/// backward of micro-batch (k + s + 1)/2 − p when it is odd, each if that micro-batch exists;
/// every slot ends in blocking exchanges between neighbours, so it lasts its longest chunk.
double replayDeepSpeed(int p, int m, double F, double B) {
    double total = 0;
    for (int k = 0; k < 2 * (m + p - 1); ++k) {
        double slot = 0;
        for (int s = 0; s < p; ++s) {
            const bool forward = (k - s) % 2 == 0;
            const int mb = forward ? (k - s) / 2 : (k + s + 1) / 2 - p;
            if (mb >= 0 && mb < m) slot = std::max(slot, forward ? F : B);
        }
        total += slot;
    }
    return total;
}
} // namespace

TEST_CASE("DeepSpeed's lock-step schedule: 1F1B's bubble plus (m - 1) times |B - F|") {
    // The closed form against the slot-by-slot replay of DeepSpeed's table: the step is the
    // m micro-batches' work plus the bubble. F = 1, B = 3 (the backward with full
    // recomputation: its forward again and twice the forward's GEMMs), p = 4, m = 8:
    // 1F1B's 3 · 4 = 12 and 7 · 2 = 14 more, 26; the replay: p·F + (2m + p − 2)·B = 4 + 54 = 58
    // = 8 · 4 + 26.
    const ScheduleModel& ds = scheduleModel(PipelineSchedule::DeepSpeed);
    CHECK(ds.bubbleS(pipeline(4), ChunkTimes{1.0, 3.0, 0.0}, 8) == Approx(26.0));
    CHECK(replayDeepSpeed(4, 8, 1.0, 3.0) == Approx(58.0));
    for (int p : {2, 3, 4, 7, 35})
        for (int m : {1, 2, 5, 16, 240})
            for (auto [F, B] : {std::pair{1.0, 3.0}, {1.0, 2.0}, {2.0, 1.5}, {1.0, 1.0}}) {
                INFO("p " << p << " m " << m << " F " << F << " B " << B);
                CHECK(m * (F + B) + ds.bubbleS(pipeline(p), ChunkTimes{F, B, 0.0}, m) ==
                      Approx(replayDeepSpeed(p, m, F, B)));
            }
    // With equal chunks it is 1F1B; one micro-batch waits for nothing either.
    CHECK(ds.bubbleS(pipeline(8), ChunkTimes{2.0, 2.0, 0.0}, 64) ==
          scheduleModel(PipelineSchedule::OneFOneB).bubbleS(pipeline(8), ChunkTimes{2.0, 2.0, 0.0}, 64));
    // Stage i keeps min(p − i + 1, m) micro-batches' buffers (num_pipe_buffers).
    CHECK(ds.inFlight(pipeline(8), 64, 0) == 9);
    CHECK(ds.inFlight(pipeline(8), 64, 7) == 2);
    CHECK(ds.inFlight(pipeline(8), 3, 0) == 3);
    CHECK(ds.explainInvalid(pipeline(8, 2), 64));
}

TEST_CASE("Each schedule's activations and parameter copies (DeepSeek-V3 report Table 2)") {
    // 1F1B and ZB-H1: stage i holds min(p − i, m); DualPipe: p + 1 on every GPU, 2× parameters.
    CHECK(scheduleModel(PipelineSchedule::OneFOneB).inFlight(pipeline(8), 64, 0) == 8);
    CHECK(scheduleModel(PipelineSchedule::ZeroBubble).inFlight(pipeline(8), 64, 3) == 5);
    CHECK(scheduleModel(PipelineSchedule::DualPipe).inFlight(pipeline(8), 64, 0) == 9);
    CHECK(scheduleModel(PipelineSchedule::DualPipe).inFlight(pipeline(8), 64, 7) == 9);
    CHECK(scheduleModel(PipelineSchedule::DualPipe).paramCopies == 2);
    CHECK(scheduleModel(PipelineSchedule::OneFOneB).paramCopies == 1);
    // Every schedule parses back from its own name.
    for (const ScheduleModel& m : scheduleModels()) CHECK(parsePipelineSchedule(m.name) == m.kind);
}

TEST_CASE("The engine costs each schedule's bubble and memory from its model") {
    // Llama 3 70B on 256 H100 with pp = 4, one chunk, 64 micro-batches per replica.
    auto with = [](const std::string& schedule) {
        return test::preset("default", {"strategy.vp=1", "strategy.schedule=" + schedule});
    };
    const Scenario s1 = with("1f1b"), zb = with("zero_bubble"), dp = with("dualpipe");
    REQUIRE_FALSE(explainInvalid(s1));
    REQUIRE_FALSE(explainInvalid(zb));
    REQUIRE_FALSE(explainInvalid(dp));
    const Result r1 = evaluate(s1), rz = evaluate(zb), rd = evaluate(dp);
    const int p = s1.strategy.pp;
    const double F = r1.forwardPerMicroBatchS, B = r1.backwardPerMicroBatchS;
    CHECK(r1.bubbleS == Approx((p - 1) * (F + B)));
    // W from ZB-H1's bubble, then DualPipe's bubble from the same F, B and W.
    const double W = ((p - 1) * (F + B) - rz.bubbleS) / (2.0 * (p - 1));
    CHECK(W > 0);
    CHECK(W < B / 2); // the weight gradient is one of the backward's two GEMM passes, less attention
    CHECK(rd.bubbleS == Approx((p / 2 - 1) * (F + B + B - 3 * W)));
    // Compute is the schedule's to place, not to change.
    CHECK(rz.computeS == Approx(r1.computeS));
    // DualPipe holds two stages' parameters: weights double on every stage.
    CHECK(rd.memory.weightsBytes == Approx(2 * r1.memory.weightsBytes));
    CHECK(rd.memory.optimizerBytes == Approx(2 * r1.memory.optimizerBytes));
    CHECK(rz.stepTimeS < r1.stepTimeS);
    // DualPipe overlaps forward and backward chunks of two micro-batches in its steady state:
    // of m = 512 / (8 · 1) = 64 micro-batches the fill and drain's p = 4 run unpaired, the
    // other 60 hide their point-to-point behind the paired chunk's compute (far more than
    // enough compute here): 60/64 of the exposed point-to-point is hidden, 4/64 stays.
    const CommTime p2p1 = r1.commTime(ParallelDim::PP, Collective::P2P);
    const CommTime p2pd = rd.commTime(ParallelDim::PP, Collective::P2P);
    REQUIRE(p2p1.exposedS > 0);
    CHECK(p2pd.serializedS == Approx(p2p1.serializedS));
    CHECK(p2pd.exposedS == Approx(4.0 / 64.0 * p2p1.exposedS).epsilon(1e-9));
}

TEST_CASE("A schedule's rules are said, naming the field") {
    using Catch::Matchers::Contains;
    CHECK_THROWS_WITH(test::preset("default", {"gpus=320", "strategy.vp=1", "strategy.pp=5",
                                               "strategy.schedule=dualpipe"}),
                      Contains("even pp"));
    CHECK_THROWS_WITH(test::preset("default", {"strategy.schedule=dualpipe"}), Contains("strategy.vp"));
    CHECK(test::toyError({{"strategy.schedule", "zb"}}).find("strategy.schedule") !=
          std::string::npos);
}

TEST_CASE("The search tries the one-chunk schedules asked for") {
    const Scenario s = test::preset("default");
    SearchSpace space;
    space.tp = {8};
    space.pp = {4};
    space.vp = {1};
    space.cp = {1};
    space.schedules = {PipelineSchedule::OneFOneB, PipelineSchedule::ZeroBubble,
                       PipelineSchedule::DualPipe};
    SearchOptions opt;
    opt.topN = 50;
    opt.prune = false;
    const SearchResult r = search(s, space, opt);
    bool seen[4] = {};
    for (const Candidate& c : r.top) seen[int(c.strategy.schedule)] = true;
    CHECK(seen[int(PipelineSchedule::ZeroBubble)]);
    CHECK(seen[int(PipelineSchedule::DualPipe)]);
    CHECK_FALSE(seen[int(PipelineSchedule::Interleaved)]);
}

TEST_CASE("DualPipe hides no more than the paired chunks' compute") {
    // The hiding budget is (m − p)/m of the stage's forward and backward compute (DeepSeek-V3
    // report §3.2.1: a chunk pair overlaps one chunk's communication with the other's
    // computation). With a 0.1 GB/s network the point-to-point far exceeds the compute, so the
    // budget binds: exactly 60/64 × (forward + backward) of it is hidden.
    auto with = [](const std::string& schedule) {
        return test::preset("default", {"strategy.vp=1", "strategy.schedule=" + schedule,
                                        "system.tiers.1.gbps=0.1"});
    };
    const Result r1 = evaluate(with("1f1b")), rd = evaluate(with("dualpipe"));
    const CommTime p2p1 = r1.commTime(ParallelDim::PP, Collective::P2P);
    const CommTime p2pd = rd.commTime(ParallelDim::PP, Collective::P2P);
    const double compute = rd.compute.forwardS + rd.compute.backwardS;
    REQUIRE(60.0 / 64.0 * p2p1.exposedS > 60.0 / 64.0 * compute); // the budget binds
    CHECK(p2pd.exposedS == Approx(p2p1.exposedS - 60.0 / 64.0 * compute).epsilon(1e-9));
}

TEST_CASE("Zero-bubble defers the weight gradient's share of the backward, by FLOPs") {
    // The toy's layer (test_hand_derived.cpp): GEMMs G = 25,165,824 FLOPs a token, the flash
    // attention core A = 4,194,304. A layer's backward is the input- and weight-gradient GEMM
    // passes (G each) and the attention core's backward (2A): the weight gradient's share is
    // G / (2G + 2A) = 3/7 of the stage's backward compute, which is the reported backward less
    // its point-to-point (1024 · 1024 · 2 B over 100 GB/s NVLink: 2.097152e-5 s). ZB-H1's bubble
    // is (p − 1)(F + B − 2W).
    const Scenario s = test::toy({{"strategy.pp", 2},
                                  {"strategy.dp", 4},
                                  {"strategy.schedule", "zero_bubble"}});
    REQUIRE_FALSE(explainInvalid(s));
    const Result r = evaluate(s);
    CHECK(layerGemmFlopsPerToken(s.model) == 25165824.0);
    CHECK(attentionFlopsPerToken(s.model, 1024) == 4194304.0);
    const double F = r.forwardPerMicroBatchS, B = r.backwardPerMicroBatchS;
    const double W = 3.0 / 7.0 * (B - 2.097152e-5);
    CHECK(r.bubbleS == Approx(F + B - 2.0 * W).epsilon(1e-9));
}

TEST_CASE("One GPU's timeline has no data-parallel sync and ends at the step") {
    // The toy on one GPU: nothing to reduce across replicas, so no exposed sync box, and the
    // timeline's last op ends where the step does.
    EvaluateOptions o;
    o.timeline = true;
    const Result r = evaluate(test::toy({{"gpus", 1}, {"strategy.dp", 1}}), o);
    double end = 0;
    for (const auto& e : r.timeline) {
        CHECK(e.label != "DP gradient sync (exposed)");
        end = std::max(end, e.endS);
    }
    CHECK(end == Approx(r.stepTimeS).epsilon(1e-9));
}
