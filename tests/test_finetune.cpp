// Fine-tuning with frozen components (workload.frozen): hand-derived values on the toy of
// test_hand_derived.cpp (100 TFLOP/s at efficiency 0.5, 1 TB/s HBM, no launch cost, 100 GB/s
// NVLink), invariants over the presets, the DLRM's frozen parts, bad inputs and the seed's
// finetune tasks. The physics (docs/developer/workloads.md, Fine-tuning): a frozen component computes no
// weight gradient, reduces none and keeps no optimizer state or gradient buffer; activation
// gradients still flow through a frozen layer when something below it trains.
#include "test_support.hpp"

#include "madmax/flops.hpp"
#include "madmax/pipeline.hpp"
#include "madmax/presets.hpp"
#include "madmax/seed.hpp"

#include <catch2/catch.hpp>

using namespace madmax;
using nlohmann::json;

namespace {

// Toy model: l = 4, h = 1024, a = g = 8 heads of d = 128, f = 4096 (plain GELU MLP), V = 32768;
// 8 GPUs of DP, micro-batch 1, 16 sequences of 1024: two micro-batches per step.
const json kToy = [] {
    json doc = test::toyScenario();
    doc["strategy"]["dp_overlap"] = false; // every gradient byte exposed: reduction times read
    return doc;
}();

Scenario toy(const json& frozen, const std::vector<std::pair<std::string, json>>& edits = {}) {
    json doc = kToy;
    if (!frozen.is_null()) doc["workload"]["frozen"] = frozen;
    for (const auto& [path, value] : edits)
        applyOverride(doc, path, value, "toy");
    return parseScenario(doc, "toy");
}

using test::opDurations;
using test::opSeconds;

// Parameters by hand (test_hand_derived.cpp): a layer 12,584,960; embedding = LM head = Vh =
// 33,554,432; final norm 1024; all 117,449,728.
constexpr double kLayer = 12584960.0, kEmbedding = 33554432.0, kAll = 117449728.0;

std::string errorOf(const json& frozen, const std::vector<std::pair<std::string, json>>& e = {}) {
    try {
        toy(frozen, e);
    } catch (const InputError& err) {
        return err.what();
    }
    return "(no error)";
}

} // namespace

TEST_CASE("Fine-tuning hand-derived: a frozen layer's backward computes input gradients only") {
    EvaluateOptions tl;
    tl.timeline = true;
    // The first two layers frozen, the embedding trains: gradients flow through the frozen
    // layers, so they run a backward of one GEMM pass. MLP down GEMM 2·T·h·f = 8.589935e9 FLOPs
    // at 50 TFLOP/s = 1.717987e-4 s: 3.435974e-4 s with its weight gradient, 1.717987e-4 s
    // without. The attention core's backward (no weights) is unchanged: 2.5× its forward's FLOPs
    // at 0.69 of its efficiency (FlashAttention-3), 1.073742e-4 / 0.69 = 1.556148e-4 s.
    const Result r = evaluate(toy({{"layers", 2}}), tl);
    const auto down = opDurations(r, "MLP down GEMM (bwd)");
    REQUIRE(down.size() == 4);
    CHECK(std::count_if(down.begin(), down.end(),
                        [](double d) { return d == Approx(3.435974e-4).epsilon(1e-6); }) == 2);
    CHECK(std::count_if(down.begin(), down.end(),
                        [](double d) { return d == Approx(1.717987e-4).epsilon(1e-6); }) == 2);
    for (double d : opDurations(r, "attention core (bwd)"))
        CHECK(d == Approx(1.556148e-4).epsilon(1e-6));
}

TEST_CASE("Fine-tuning hand-derived: only trained parameters are reduced and kept state for") {
    // Two frozen layers: 117,449,728 − 2·12,584,960 = 92,279,808 trained parameters. Ring
    // all-reduce of their bf16 gradients over 8 NVLink ranks: 1.75 · 184,559,616 B / 1e11 =
    // 3.229793e-3 s (pre-training: 4.110740e-3 s). Adam's step streams 28 B per trained
    // parameter: 92,279,808 · 28 / 1e12 = 2.583835e-3 s.
    const double trained = kAll - 2 * kLayer;
    const Result r = evaluate(toy({{"layers", 2}}));
    CHECK(r.comm[int(ParallelDim::DP)][int(Collective::AllReduce)].serializedS ==
          Approx(3.229793e-3).epsilon(1e-6));
    CHECK(r.compute.optimizerS == Approx(2.583835e-3).epsilon(1e-6));
    // Memory: every weight is held (2 B), gradients (2 B) and Adam state (12 B) only for what
    // trains. Activations are unchanged: the frozen layers' backward still needs them.
    const MemoryBreakdown m = r.memory;
    CHECK(m.weightsBytes == Approx(2 * kAll).epsilon(1e-9));
    CHECK(m.gradsBytes == Approx(2 * trained).epsilon(1e-9));
    CHECK(m.optimizerBytes == Approx(12 * trained).epsilon(1e-9));
    CHECK(m.activationsBytes == Approx(276824064.0).epsilon(1e-9)); // as pre-training
}

TEST_CASE("Fine-tuning hand-derived: frozen bottom layers under a frozen embedding run no backward") {
    // Embedding and layers 0–1 frozen: nothing below layers 0–1 trains, so they run no backward
    // and keep no activations: two layers of 1024·1024·34 = 35,651,584 B plus the fp32 logits
    // 4·s·V = 134,217,728 B = 205,520,896 B. Trained: 92,279,808 − 33,554,432 = 58,725,376.
    EvaluateOptions tl;
    tl.timeline = true;
    const Result r = evaluate(toy({{"layers", 2}, {"embedding", true}}), tl);
    CHECK(opDurations(r, "MLP down GEMM (bwd)").size() == 2);
    CHECK(r.memory.activationsBytes == Approx(205520896.0).epsilon(1e-9));
    CHECK(r.memory.gradsBytes == Approx(2 * (kAll - 2 * kLayer - kEmbedding)).epsilon(1e-9));
}

TEST_CASE("Fine-tuning hand-derived: a linear probe trains the head alone") {
    // Embedding and all four layers frozen: the backward is the LM head's weight gradient only,
    // one GEMM 2·T·V·h = 6.871948e10 FLOPs at 50 TFLOP/s = 1.374390e-3 s, and the fused
    // cross-entropy's gradient over T·V elements (fp32 read + bf16 write, 6 B) = 201,326,592 B at
    // 1 TB/s = 2.013266e-4 s; no input gradient, so no final-norm backward. Two micro-batches:
    // 2 · 1.575716e-3 = 3.151432e-3 s. Trained: the head and the final norm, 33,555,456.
    const Result r = evaluate(toy({{"layers", 4}, {"embedding", true}}));
    CHECK(r.compute.backwardS == Approx(3.151432e-3).epsilon(1e-6));
    CHECK(r.compute.recomputeS == 0.0);
    CHECK(r.memory.gradsBytes == Approx(2 * 33555456.0).epsilon(1e-9));
    CHECK(r.memory.activationsBytes == Approx(134217728.0).epsilon(1e-9)); // the logits only
}

TEST_CASE("Fine-tuning hand-derived: a frozen head computes its input gradient only") {
    // The LM head frozen, everything else training: its backward drops the weight-gradient
    // GEMM, 2·T·V·h = 6.871948e10 FLOPs at 50 TFLOP/s = 1.374390e-3 s per micro-batch, two
    // micro-batches: 2.748779e-3 s less backward. Its 33,554,432 + 1,024 (final norm)
    // parameters have no gradients.
    const Result pre = evaluate(toy(json()));
    const Result r = evaluate(toy({{"head", true}}));
    CHECK(pre.compute.backwardS - r.compute.backwardS == Approx(2.748779e-3).epsilon(1e-6));
    CHECK(r.memory.gradsBytes == Approx(2 * (kAll - kEmbedding - 1024)).epsilon(1e-9));
}

TEST_CASE("Fine-tuning hand-derived: model FLOPs count the gradients that are computed") {
    // Per token: layer GEMMs G = 25,165,824, attention A = 4,194,304, LM head H = 67,108,864.
    // Forward 4G + 4A + H = 184,549,376. Backward with layers 0–1 frozen (embedding trains):
    // trained layers 2·(2G + 2A) = 117,440,512; frozen layers, input gradients only,
    // 2·(G + 2A) = 67,108,864; head 2H = 134,217,728. Sum 503,316,480 per token × 16,384 tokens
    // = 8,246,337,208,320 FLOPs (pre-training: 3 × forward = 9,070,970,929,152).
    CHECK(evaluate(toy({{"layers", 2}})).modelFlopsPerStep ==
          Approx(8246337208320.0).epsilon(1e-12));
    CHECK(evaluate(toy(json())).modelFlopsPerStep == Approx(9070970929152.0).epsilon(1e-12));
}

TEST_CASE("Fine-tuning hand-derived: hardware FLOPs add the recompute of the layers that run a "
          "backward") {
    // Layers 0-1 frozen, the embedding trained: every layer runs a backward (input gradients
    // at least), so all 4 recompute. Full recompute repeats each layer's forward GEMMs,
    // 4G = 100,663,296, and its attention, 4A = 16,777,216: 117,440,512 a token over the model
    // FLOPs' 503,316,480 (above), 620,756,992 × 16,384 tokens = 10,170,482,556,928. Selective
    // recompute repeats the attention only: 520,093,696 × 16,384 = 8,521,215,115,264.
    CHECK(evaluate(toy({{"layers", 2}}, {{"strategy.recompute", "full"}})).hardwareFlopsPerStep ==
          Approx(10170482556928.0).epsilon(1e-12));
    CHECK(evaluate(toy({{"layers", 2}}, {{"strategy.recompute", "selective"}}))
              .hardwareFlopsPerStep == Approx(8521215115264.0).epsilon(1e-12));
}

TEST_CASE("Fine-tuning hand-derived: the GEMM FLOPs of a step count the GEMMs that run") {
    // Layers 0-1 frozen, the embedding trained: forward 4G + H; backward 2 · 2G for the trained
    // layers, G each for the frozen ones' input gradients, 2H for the head: 10G + 3H =
    // 452,984,832 a token (the model FLOPs above less attention's 12A), × 16,384 tokens =
    // 7,421,703,487,488.
    const Scenario s = toy({{"layers", 2}});
    CHECK(trainingGemmFlopsPerStep(s.model, s.workload.frozen, 16.0, 1024.0) ==
          Approx(7421703487488.0).epsilon(1e-12));
}

TEST_CASE("Fine-tuning: freezing nothing is pre-training, freezing more is never slower or larger") {
    struct Case {
        const char* preset;
        std::vector<json> steps; // each freezes more than the one before
    };
    const std::vector<Case> cases = {
        {"default",
         {json::object(),
          {{"embedding", true}},
          {{"embedding", true}, {"layers", 20}},
          {{"embedding", true}, {"layers", 60}},
          {{"embedding", true}, {"layers", 80}}}},
        {"deepseek-v3-256-gb200",
         {json::object(), {{"layers", 16}}, {{"layers", 32}, {"head", true}}}},
        {"vit-22b-256-h100", {json::object(), {{"embedding", true}}, {{"embedding", true}, {"layers", 24}}}},
        {"llama3-8b-fsdp-64-h100", {json::object(), {{"layers", 8}}, {{"layers", 8}, {"embedding", true}}}},
        {"dlrm-dcnv2-64-h100",
         {json::object(),
          {{"bottom_mlp", true}},
          {{"bottom_mlp", true}, {"embedding", true}},
          {{"top_mlp", true}, {"embedding", true}}}},
    };
    for (const Case& c : cases) {
        const Scenario base = test::preset(c.preset);
        const Result pre = evaluate(base);
        double lastStep = pre.stepTimeS, lastMem = pre.memory.totalBytes();
        for (const json& f : c.steps) {
            INFO(c.preset << " frozen " << f.dump());
            Scenario s = test::preset(c.preset, {"workload.frozen=" + f.dump()});
            const Result r = evaluate(s);
            if (f.empty()) {
                CHECK(r.stepTimeS == pre.stepTimeS);
                CHECK(r.memory.totalBytes() == pre.memory.totalBytes());
                CHECK(r.modelFlopsPerStep == pre.modelFlopsPerStep);
            }
            CHECK(r.stepTimeS <= lastStep * (1 + 1e-12));
            CHECK(r.memory.totalBytes() <= lastMem * (1 + 1e-12));
            CHECK(r.modelFlopsPerStep <= pre.modelFlopsPerStep);
            lastStep = r.stepTimeS;
            lastMem = r.memory.totalBytes();
        }
    }
}

TEST_CASE("Fine-tuning: a pipeline is paced by its slowest stage, frozen or not") {
    // Llama 3 70B, PP 4 with the 1F1B schedule (20 consecutive layers a stage): freezing the
    // first 20 layers, or even 60 with the embedding, leaves the last stage's work as it was,
    // and it paces the pipeline: the step does not speed up (the planner's cue to rebalance
    // the stages). Only when every stage sheds work does it: a linear probe (embedding and all
    // 80 layers frozen) is forward-only.
    const std::vector<std::string> oneF1B = {"strategy.vp=1", "strategy.schedule=\"1f1b\""};
    auto with = [&](std::vector<std::string> sets, const std::string& frozen) {
        if (!frozen.empty()) sets.push_back("workload.frozen=" + frozen);
        return evaluate(test::preset("default", sets));
    };
    const Result pre = with(oneF1B, "");
    for (const char* f : {R"({"layers":20})", R"({"layers":60,"embedding":true})"}) {
        INFO(f);
        CHECK(with(oneF1B, f).stepTimeS == Approx(pre.stepTimeS).epsilon(1e-9));
    }
    CHECK(with(oneF1B, R"({"layers":80,"embedding":true})").stepTimeS < 0.6 * pre.stepTimeS);
    // Frozen from the top (the seed's min_frozen_layer): the first stage trains and paces.
    CHECK(with(oneF1B, R"({"layers":{"first":20,"count":60}})").criticalStage == 0);
    // Interleaved (the preset's v = 5, chunks of 4 layers): stage p holds chunks p, p + 4, …,
    // so the first 20 layers spread over every stage (8 on stage 0, 4 on each other): every
    // stage sheds work and the step is shorter.
    const Result inter = evaluate(test::preset("default"));
    const Result interFrozen =
        evaluate(test::preset("default", {R"(workload.frozen={"layers":20})"}));
    CHECK(interFrozen.stepTimeS < inter.stepTimeS);
    const Scenario s = test::preset("default", {R"(workload.frozen={"layers":20})"});
    for (const PipelineStage& st : distinctStages(s)) {
        INFO("stage " << st.index << (st.first ? " (first)" : st.last ? " (last)" : ""));
        CHECK(st.frozenLayers == (st.first ? 8 : 4));
    }
}

TEST_CASE("Fine-tuning a DLRM: frozen tables send no gradients back and keep no state") {
    const Scenario base = test::preset("dlrm-dcnv2-64-h100");
    const Result pre = evaluate(base);
    const Result r = evaluate(test::preset("dlrm-dcnv2-64-h100", {R"(workload.frozen={"embedding":true})"}));
    const DlrmResult& x = r.dlrmResult;
    CHECK(x.embBackwardS == 0.0);
    CHECK(x.a2aBwdS == 0.0);
    CHECK(x.a2aFwdS == pre.dlrmResult.a2aFwdS);
    CHECK(x.replicaSyncS == 0.0);
    // The rowwise-Adagrad state (one fp32 per row) goes with the tables' gradients.
    CHECK(r.memory.optimizerBytes < pre.memory.optimizerBytes);
    CHECK(r.memory.weightsBytes == pre.memory.weightsBytes);
    // Frozen MLPs: no dense gradients to all-reduce or state.
    const Result mlps = evaluate(test::preset(
        "dlrm-dcnv2-64-h100", {R"(workload.frozen={"bottom_mlp":true,"top_mlp":true})"}));
    CHECK(mlps.memory.gradsBytes == 0.0);
    CHECK(mlps.dlrmResult.denseAllReduceS == 0.0);
    CHECK(mlps.dlrmResult.denseBackwardS < pre.dlrmResult.denseBackwardS);
}

TEST_CASE("Fine-tuning: bad frozen settings name the field and the fix") {
    CHECK_THAT(errorOf({{"layers", 5}}),
               Catch::Contains("workload.frozen.layers") && Catch::Contains("0 to 3"));
    CHECK_THAT(errorOf({{"layers", {{"first", 3}, {"count", 2}}}}),
               Catch::Contains("layers 3 to 4 are frozen"));
    CHECK_THAT(errorOf({{"layers", -1}}), Catch::Contains("workload.frozen.layers"));
    CHECK_THAT(errorOf({{"layers", 4}, {"embedding", true}, {"head", true}}),
               Catch::Contains("nothing is left to train"));
    CHECK_THAT(errorOf({{"bottom_mlp", true}}), Catch::Contains("DLRM models only"));
    CHECK_THAT(errorOf({{"embeding", true}}),
               Catch::Contains("workload.frozen.embeding") && Catch::Contains("embedding"));
    CHECK_THAT(errorOf({{"head", "yes"}}),
               Catch::Contains("workload.frozen.head") && Catch::Contains("true or false"));
    CHECK_THAT(errorOf(json::array()), Catch::Contains("workload.frozen"));
    CHECK_THAT(errorOf({{"layers", {{"first", 1}}}}), Catch::Contains("workload.frozen.layers.count"));
    // Serving computes no gradients.
    std::string serving;
    try {
        test::preset("serve-llama2-70b-8xh100-offline", {R"(workload.frozen={"layers":2})"});
    } catch (const InputError& e) {
        serving = e.what();
    }
    CHECK_THAT(serving, Catch::Contains("workload.frozen") && Catch::Contains("training"));
    // A DLRM has no layers or head; freezing everything leaves nothing.
    std::string dlrm, all;
    try {
        test::preset("dlrm-dcnv2-64-h100", {R"(workload.frozen={"layers":2})"});
    } catch (const InputError& e) {
        dlrm = e.what();
    }
    CHECK_THAT(dlrm, Catch::Contains("workload.frozen.layers") && Catch::Contains("bottom_mlp"));
    try {
        test::preset("dlrm-dcnv2-64-h100",
                     {R"(workload.frozen={"embedding":true,"bottom_mlp":true,"top_mlp":true})"});
    } catch (const InputError& e) {
        all = e.what();
    }
    CHECK_THAT(all, Catch::Contains("nothing is left to train"));
}

TEST_CASE("Fine-tuning: a frozen range round-trips through the scenario JSON") {
    const Scenario s = toy({{"layers", {{"first", 1}, {"count", 2}}}, {"head", true}});
    const json out = toJson(s);
    CHECK(out["workload"]["frozen"] ==
          json({{"layers", {{"first", 1}, {"count", 2}}}, {"head", true}}));
    const Scenario back = parseScenario(out, "round trip");
    CHECK(back.workload.frozen.firstLayer == 1);
    CHECK(back.workload.frozen.layers == 2);
    CHECK(back.workload.frozen.head);
    CHECK(evaluate(back).stepTimeS == evaluate(s).stepTimeS);
    CHECK_FALSE(toJson(toy(json()))["workload"].contains("frozen"));
}

TEST_CASE("The seed's LLM finetune task converts to frozen components") {
    // llama2_70b with a finetune task derived from llm_train: the embedding frozen and
    // min_frozen_layer 40 (gradients reduced only below layer 40: layers 40–79 frozen).
    json task = seed::loadFile("tasks", "llm_train");
    task["type"] = "finetune";
    task["freeze_emb"] = true;
    task["min_frozen_layer"] = 40;
    std::vector<std::string> assumed;
    const json doc = seed::toScenarioJson(
        seed::parseModel(seed::loadFile("models", "llama2_70b"), "m.json"),
        seed::parseSystem(seed::loadFile("systems", "dc_A_2048"), "s.json"),
        seed::parseTask(task, "t.json"), PresetLibrary::builtin(), assumed, "m.json");
    const Scenario s = parseScenario(doc, "converted");
    CHECK(s.workload.frozen.embedding);
    CHECK(s.workload.frozen.firstLayer == 40);
    CHECK(s.workload.frozen.layers == 40);
    bool said = false;
    for (const auto& a : assumed)
        said = said || a.find("finetune") != std::string::npos;
    CHECK(said);
    task["type"] = "pretrain";
    const Scenario pre = parseScenario(
        seed::toScenarioJson(seed::parseModel(seed::loadFile("models", "llama2_70b"), "m.json"),
                             seed::parseSystem(seed::loadFile("systems", "dc_A_2048"), "s.json"),
                             seed::parseTask(task, "t.json"), PresetLibrary::builtin(), assumed,
                             "m.json"),
        "converted");
    CHECK(evaluate(s).stepTimeS < evaluate(pre).stepTimeS);
}

TEST_CASE("The seed's ViT files convert to a native ViT, with what was assumed") {
    // vit_l: 24 layers, hidden 1024, 16 heads, fc 4096, image 224, patch 16: natively
    // (224/16)² + 1 = 197 tokens with the class token, 3 channels, a 1000-class head (said).
    std::vector<std::string> assumed;
    const json doc = seed::toScenarioJson(
        seed::parseModel(seed::loadFile("models", "vit_l"), "m.json"),
        seed::parseSystem(seed::loadFile("systems", "dc_A_128"), "s.json"),
        seed::parseTask(seed::loadFile("tasks", "vit_train"), "t.json"), PresetLibrary::builtin(),
        assumed, "m.json");
    const Scenario s = parseScenario(doc, "converted");
    CHECK(s.model.vit);
    CHECK(s.model.layers == 24);
    CHECK(s.workload.seqLen == 197);
    CHECK(s.workload.globalBatch == 2048); // local batch 16 × fsdp 128
    CHECK(s.strategy.zeroStage == 3);
    bool said = false;
    for (const auto& a : assumed)
        said = said || a.find("1000-class") != std::string::npos;
    CHECK(said);
    // ViT-L/16 has 304 M parameters (Dosovitskiy et al. 2021, Table 1: 307 M with its head).
    CHECK(s.model.totalParams() == Approx(304e6).epsilon(0.02));
    CHECK(evaluate(s).stepTimeS > 0);
    // A patch that does not divide the image is refused (the seed would round the count up).
    json bad = seed::loadFile("models", "vit_l");
    bad["patch_dim"] = 15;
    std::string msg;
    try {
        seed::toScenarioJson(seed::parseModel(bad, "m.json"),
                             seed::parseSystem(seed::loadFile("systems", "dc_A_128"), "s.json"),
                             seed::parseTask(seed::loadFile("tasks", "vit_train"), "t.json"),
                             PresetLibrary::builtin(), assumed, "m.json");
    } catch (const InputError& e) {
        msg = e.what();
    }
    CHECK_THAT(msg, Catch::Contains("patch_dim"));
}

TEST_CASE("LoRA hand-derived: adapters' parameters, traffic, memory, op time and FLOPs") {
    // Rank 8 on every linear layer of the toy: attention Q, K, V, O each 8·(1024 + 1024) =
    // 16,384; MLP up and down each 8·(1024 + 4096) = 40,960: 147,456 per layer, 589,824 in all.
    const Scenario s = [] {
        json doc = kToy;
        doc["workload"]["lora"] = {{"rank", 8}};
        return parseScenario(doc, "toy");
    }();
    CHECK(loraParams(s.model, s.workload.frozen) == 589824.0);
    CHECK(s.workload.frozen.layers == 4); // the whole base is frozen
    EvaluateOptions tl;
    tl.timeline = true;
    const Result r = evaluate(s, tl);
    // Only the adapters' bf16 gradients are all-reduced: 1.75 · 589,824 · 2 B / 1e11.
    CHECK(r.comm[int(ParallelDim::DP)][int(Collective::AllReduce)].serializedS ==
          Approx(2.064384e-5).epsilon(1e-6));
    // Memory: base and adapter weights held, gradients and Adam state for the adapters only;
    // activations as for pre-training (every frozen layer passes gradients to the adapters
    // below it).
    CHECK(r.memory.weightsBytes == Approx(2 * (kAll + 589824.0)).epsilon(1e-9));
    CHECK(r.memory.gradsBytes == Approx(2 * 589824.0).epsilon(1e-9));
    CHECK(r.memory.optimizerBytes == Approx(12 * 589824.0).epsilon(1e-9));
    CHECK(r.memory.activationsBytes == Approx(276824064.0).epsilon(1e-9));
    // Op time: each adapter is two skinny GEMMs, memory-bound at rank 8. Q: x·A reads x
    // (1024·1024) and A (1024·8), writes 1024·8, bf16: 2,129,920 B; ·B the same: 4.25984e-6 s
    // per projection at 1 TB/s, four projections 1.703936e-5 s. MLP up: 2,129,920 B and
    // (1024·8 + 8·4096 + 1024·4096)·2 = 8,470,528 B; down the mirror: 2.1200896e-5 s.
    // Backward: input and weight gradients, twice the forward.
    auto op = [&](const std::string& label) { return opSeconds(r, label); };
    CHECK(op("LoRA adapters (attention)") == Approx(1.703936e-5).epsilon(1e-6));
    CHECK(op("LoRA adapters (MLP)") == Approx(2.1200896e-5).epsilon(1e-6));
    CHECK(op("LoRA adapters (attention, bwd)") == Approx(3.407872e-5).epsilon(1e-6));
    CHECK(op("LoRA adapters (MLP, bwd)") == Approx(4.2401792e-5).epsilon(1e-6));
    // The base's backward computes input gradients only: one GEMM pass.
    CHECK(op("MLP down GEMM (bwd)") == Approx(1.717987e-4).epsilon(1e-6));
    // FLOPs per token: forward 184,549,376 + adapters 2·589,824 = 185,729,024; backward: base
    // input gradients 4·(G + 2A) = 134,217,728, the head's input gradient H = 67,108,864,
    // adapters 2·1,179,648 = 2,359,296: 389,414,912 per token × 16,384 tokens.
    CHECK(r.modelFlopsPerStep == Approx(6380173918208.0).epsilon(1e-12));
    // Targets: attention only halves nothing of the base, but drops the MLP adapters.
    json doc = kToy;
    doc["workload"]["lora"] = {{"rank", 8}, {"targets", "attention"}};
    CHECK(loraParams(parseScenario(doc, "toy").model, parseScenario(doc, "toy").workload.frozen) ==
          4 * 65536.0);
}

TEST_CASE("LoRA hand-derived: the frozen head still passes gradients to the adapters") {
    // Against every layer frozen with the embedding and head training (same frozen-layer
    // backward): LoRA's head drops its weight gradient, one GEMM 2·T·V·h at 50 TFLOP/s =
    // 1.374390e-3 s, but keeps its input gradient (the adapters below need it); the embedding's
    // backward (3·T·h·2 B = 6.291456e-6 s) goes; the adapters' backward comes, 4 layers ×
    // (3.407872e-5 + 4.2401792e-5) = 3.05922048e-4 s. Per micro-batch −1.074759408e-3 s, two
    // micro-batches: −2.149518816e-3 s.
    json lora = kToy;
    lora["workload"]["lora"] = {{"rank", 8}};
    const Result l = evaluate(parseScenario(lora, "toy"));
    const Result f = evaluate(toy({{"layers", 4}}));
    CHECK(l.compute.backwardS - f.compute.backwardS == Approx(-2.149518816e-3).epsilon(1e-6));
}

TEST_CASE("LoRA: round trip, invariants and bad inputs") {
    const Scenario s = test::preset("default", {R"(workload.lora={"rank":16,"targets":"mlp"})"});
    const json out = toJson(s);
    CHECK(out["workload"]["lora"] == json({{"rank", 16}, {"targets", "mlp"}}));
    CHECK_FALSE(out["workload"].contains("frozen"));
    const Scenario back = parseScenario(out, "round trip");
    CHECK(back.workload.frozen.loraRank == 16);
    CHECK(back.workload.frozen.loraTargets == LoraTargets::Mlp);
    CHECK(evaluate(back).stepTimeS == evaluate(s).stepTimeS);
    // Against full fine-tuning: far less gradient and optimizer memory, and a larger rank
    // never costs less time or memory.
    const Result full = evaluate(test::preset("default"));
    double last = 0, lastMem = 0;
    for (int rank : {4, 16, 64, 256}) {
        INFO("rank " << rank);
        const Result r = evaluate(test::preset(
            "default", {"workload.lora={\"rank\":" + std::to_string(rank) + "}"}));
        CHECK(r.memory.gradsBytes + r.memory.optimizerBytes <
              0.05 * (full.memory.gradsBytes + full.memory.optimizerBytes));
        CHECK(r.stepTimeS >= last);
        CHECK(r.memory.totalBytes() >= lastMem);
        last = r.stepTimeS;
        lastMem = r.memory.totalBytes();
    }
    auto err = [](const std::string& set, const char* preset = "default") {
        try {
            test::preset(preset, {set});
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string("(no error)");
    };
    CHECK_THAT(err(R"(workload.lora={"rank":0})"), Catch::Contains("workload.lora.rank"));
    CHECK_THAT(err(R"(workload.lora={"rank":8,"targets":"experts"})"),
               Catch::Contains("workload.lora.targets") && Catch::Contains("attention"));
    CHECK_THAT(err(R"(workload.lora={"rank":8,"alpha":16})"), Catch::Contains("workload.lora.alpha"));
    CHECK_THAT(err(R"(workload.lora={"rank":8})", "dlrm-dcnv2-64-h100"), Catch::Contains("DLRM"));
    {
        json doc = kToy;
        doc["workload"]["lora"] = {{"rank", 8}};
        doc["workload"]["frozen"] = {{"layers", 2}};
        std::string both;
        try {
            parseScenario(doc, "toy");
        } catch (const InputError& e) {
            both = e.what();
        }
        CHECK_THAT(both, Catch::Contains("remove workload.frozen"));
    }
    CHECK_THAT(err(R"(workload.lora={"rank":8})", "serve-llama2-70b-8xh100-offline"),
               Catch::Contains("workload.lora") && Catch::Contains("training"));
}

TEST_CASE("QLoRA hand-derived: an NF4 base holds its layers at 4.127 bits and dequantizes each "
          "use") {
    // NF4 with double quantization: 4.127 bits = 0.515875 B per weight (Dettmers et al. 2023,
    // §3). The toy's four layers (50,339,840 weights) at that width, the embedding and head
    // (67,109,888) at 2 B, the rank-8 adapters (589,824) at 2 B: 161,368,488.96 B.
    json doc = kToy;
    doc["workload"]["lora"] = {{"rank", 8}, {"base_precision", "nf4"}};
    const Scenario s = parseScenario(doc, "toy");
    EvaluateOptions tl;
    tl.timeline = true;
    const Result r = evaluate(s, tl);
    CHECK(r.memory.weightsBytes == Approx(161368488.96).epsilon(1e-9));
    // Each use dequantizes: read 0.515875 B, write 2 B per weight. Attention's 4,195,328
    // weights: 1.0554921e-5 s at 1 TB/s; the MLP's 8,389,632: 2.1107265e-5 s; again in the
    // backward (the input gradient needs the weights).
    auto op = [&](const std::string& label) { return opSeconds(r, label); };
    CHECK(op("dequantize base weights (attention)") == Approx(1.0554921e-5).epsilon(1e-6));
    CHECK(op("dequantize base weights (MLP)") == Approx(2.1107265e-5).epsilon(1e-6));
    CHECK(op("dequantize base weights (MLP, bwd)") == Approx(2.1107265e-5).epsilon(1e-6));
    // The same run with a bf16 base: more memory, no dequantization, a shorter step.
    json bf = kToy;
    bf["workload"]["lora"] = {{"rank", 8}};
    const Result plain = evaluate(parseScenario(bf, "toy"));
    CHECK(plain.memory.weightsBytes > r.memory.weightsBytes);
    CHECK(plain.stepTimeS < r.stepTimeS);
    // Round trip keeps the base width.
    CHECK(toJson(s)["workload"]["lora"]["base_precision"] == "nf4");
    CHECK(parseScenario(toJson(s), "again").workload.frozen.loraBaseBytes == Approx(0.515875));
}

namespace {
/// Qwen3-30B-A3B cut to 8 layers, the first 4 dense (moe.dense_layers), its first `frozen`
/// layers frozen, with `more` overrides (the pipeline layout).
PipelineStages eightLayerStages(int frozen, std::vector<std::string> more) {
    std::vector<std::string> sets = {"model.layers=8", "model.moe.dense_layers=4",
                                     "model.ffn_hidden=6144",
                                     "workload.frozen={\"layers\":" + std::to_string(frozen) + "}"};
    sets.insert(sets.end(), more.begin(), more.end());
    return distinctStages(test::preset("qwen3-30b-a3b-8-b200-eager", sets));
}
/// A stage's frozen layers and, of them, MoE layers.
std::pair<int, int> frozenOf(const PipelineStage& s) { return {s.frozenLayers, s.frozenMoeLayers}; }
} // namespace

TEST_CASE("Interleaved stages count the MoE layers of their own chunks, frozen layers or not") {
    // pp 2 × vp 2: chunks of 8 / 4 = 2 layers. Stage 0 holds chunks 0 and 2 (layers 0–1, 4–5):
    // 2 MoE layers; stage 1 holds chunks 1 and 3 (layers 2–3, 6–7): 2 MoE layers. Split
    // contiguously it would be 0 and 4. With frozen layers, the chunk walk of pipeline.cpp is the
    // one taken.
    auto stages = [](int frozen) {
        return eightLayerStages(frozen, {"strategy.pp=2", "strategy.vp=2",
                                         R"(strategy.schedule="interleaved")", "strategy.ep=4"});
    };
    // The first 2 frozen: dense, on stage 0.
    const PipelineStages st = stages(2);
    REQUIRE(st.count == 2);
    CHECK(st.stage[0].moeLayers == 2);
    CHECK(st.stage[1].moeLayers == 2);
    CHECK(frozenOf(st.stage[0]) == std::pair{2, 0});
    CHECK(frozenOf(st.stage[1]) == std::pair{0, 0});
    // The first 6 frozen: stage 0's layers 0–1 and 4–5, two of them MoE; stage 1's 2–3 (dense);
    // 6–7 train.
    const PipelineStages six = stages(6);
    REQUIRE(six.count == 2);
    CHECK(frozenOf(six.stage[0]) == std::pair{4, 2});
    CHECK(frozenOf(six.stage[1]) == std::pair{2, 0});
}

TEST_CASE("Contiguous stages count the frozen MoE layers of their own range") {
    // The same 8 layers on pp 2 without interleaving: stage 0 holds layers 0–3 (dense), stage 1
    // layers 4–7 (MoE). The first 6 frozen: stage 0's four (none MoE), stage 1's 4–5 (both
    // MoE). On one stage, all 6 frozen of which 2 are MoE.
    const PipelineStages two = eightLayerStages(6, {"strategy.pp=2", "strategy.ep=4"});
    REQUIRE(two.count == 2);
    CHECK(frozenOf(two.stage[0]) == std::pair{4, 0});
    CHECK(frozenOf(two.stage[1]) == std::pair{2, 2});
    const PipelineStages one = eightLayerStages(6, {"strategy.pp=1", "strategy.ep=8"});
    REQUIRE(one.count == 1);
    CHECK(frozenOf(one.stage[0]) == std::pair{6, 2});
}

TEST_CASE("Fine-tuning hand-derived: the LM head's backward when the layers below train") {
    // Pre-training toy, one micro-batch of T = 1,024 tokens: the head's two GEMMs (input and
    // weight gradients), 2 · 2·T·V·h / 50 TFLOP/s = 2 · 1.374390e-3 s; the fused cross-entropy's
    // gradient, T·V · 6 B = 201,326,592 B at 1 TB/s = 2.013266e-4 s; the final norm's backward,
    // four passes over T·h bf16 elements = 8,388,608 B = 8.388608e-6 s. Sum 2.958494e-3 s.
    EvaluateOptions tl;
    tl.timeline = true;
    const Result r = evaluate(toy(json()), tl);
    CHECK(opSeconds(r, "LM head + loss (bwd)") == Approx(2.958494e-3).epsilon(1e-6));
    // The head frozen: its weight-gradient GEMM goes, the norm's backward stays.
    const Result frozen = evaluate(toy({{"head", true}}), tl);
    CHECK(opSeconds(frozen, "LM head + loss (bwd)") == Approx(1.584104e-3).epsilon(1e-6));
}

TEST_CASE("Interleaved with an uneven split: the middle stage with fewest frozen layers stands "
          "for the middle ones") {
    // 12 layers, pp 4 × vp 2 with 2 layers on each end stage: the middle stages hold layers
    // 2–5 and 6–9, four each (the uneven split's rest, (12 − 2 − 2) / 2). The first 4 layers
    // are frozen: stage 1 holds two of them (2 and 3), stage 2 none, so stage 2 does the most
    // work and is the middle stage distinctStages reports (first, last, then the middle one).
    const Scenario s = test::toy({{"model.layers", 12},
                                  {"strategy.pp", 4},
                                  {"strategy.dp", 2},
                                  {"strategy.vp", 2},
                                  {"strategy.schedule", "interleaved"},
                                  {"strategy.first_stage_layers", 2},
                                  {"strategy.last_stage_layers", 2},
                                  {"workload.frozen", json{{"layers", 4}}}});
    const PipelineStages st = distinctStages(s);
    REQUIRE(st.count == 3);
    CHECK(st.stage[0].layers == 2);
    CHECK(st.stage[0].frozenLayers == 2);
    CHECK(st.stage[1].layers == 2);
    CHECK(st.stage[1].frozenLayers == 0);
    CHECK(st.stage[2].layers == 4);
    CHECK(st.stage[2].frozenLayers == 0);
}


TEST_CASE("Tied embeddings on one stage: the embedding is the LM head, held once") {
    // The toy with tied embeddings at pp = 1: 4 layers of 12,584,960, the embedding 33,554,432
    // (which is also the head) and the final norm 1,024: 83,895,296 parameters on the stage,
    // the untied count less the head (117,449,728 − 33,554,432).
    const Scenario s = test::toy({{"model.tied_embeddings", true}});
    const PipelineStages stages = distinctStages(s);
    REQUIRE(stages.count == 1);
    const StageParams p = stageParamSplit(s.model, s.strategy, stages.stage[0]);
    CHECK(p.dense == 83895296.0);
    CHECK(p.expert == 0.0);
}

TEST_CASE("Pipeline stages hold their own edges: the embedding on the first, the head on the last") {
    // The toy at pp = 2: stage 0 holds layers 0-1 and the embedding, 2 · 12,584,960 +
    // 33,554,432 = 58,724,352; stage 1 layers 2-3, the LM head and the final norm, 58,725,376.
    const Scenario s = test::toy({{"strategy.pp", 2}, {"strategy.dp", 4}});
    const PipelineStages stages = distinctStages(s);
    REQUIRE(stages.count == 2);
    CHECK(stageParamSplit(s.model, s.strategy, stages.stage[0]).dense == 58724352.0);
    CHECK(stageParamSplit(s.model, s.strategy, stages.stage[1]).dense == 58725376.0);
}

TEST_CASE("Host launch stalls: the forward's grow with the micro-batches") {
    // At 10 ms a launch every micro-batch's forward waits on the host alike: four micro-batches
    // (a global batch of 32 over DP 8) wait twice as long as two.
    auto stall = [](int batch) {
        return evaluate(test::toy({{"workload.global_batch", batch},
                                   {"system.gpu.calibration.host_op_us", 10000.0}}))
            .compute.hostStallForwardS;
    };
    REQUIRE(stall(16) > 0);
    CHECK(stall(32) == Approx(2 * stall(16)).epsilon(1e-12));
    // The stall is forward time: the forward with the host's launches less the forward with
    // none (CUDA graphs).
    const Result host = evaluate(test::toy({{"system.gpu.calibration.host_op_us", 10000.0}}));
    const Result graphs = evaluate(test::toy({{"system.gpu.calibration.host_op_us", 10000.0},
                                              {"strategy.cuda_graphs", true}}));
    CHECK(host.compute.forwardS - graphs.compute.forwardS ==
          Approx(host.compute.hostStallForwardS).epsilon(1e-9));
}
