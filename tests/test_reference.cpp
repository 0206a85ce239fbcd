// The reference-compatible engine against the seed reference code's own outputs
// (tests/data/seed_reference.json, a copy of tests/data/seed_reference.json: 32 combinations of
// its model, system and task files, run unmodified). Every printed output within 1%.
#include "madmax/error.hpp"
#include "madmax/file_io.hpp"
#include "madmax/seed.hpp"
#include "test_support.hpp"

#include <catch2/catch.hpp>

#include <cstdio>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <unistd.h>

using namespace madmax;
using nlohmann::json;

namespace {
const json& cases() {
    static const json doc = readJsonFile(MADMAX_TEST_DATA "/seed_reference.json");
    return doc.at("cases");
}
seed::ReferenceResult run(const json& c) {
    return seed::runReference(seed::parseModel(c.at("model"), "model.json"),
                              seed::parseSystem(c.at("system"), "system.json"),
                              seed::parseTask(c.at("task"), "task.json"), "task.json");
}
} // namespace

TEST_CASE("Reference mode reproduces every output of the seed's reference code within 1%") {
    REQUIRE(cases().size() == 32);
    int checked = 0;
    for (const json& c : cases()) {
        INFO(c.at("id").get<std::string>());
        const seed::ReferenceResult r = run(c);
        const json& e = c.at("expected");
        auto near = [&](const char* key, double got) {
            if (!e.contains(key)) return;
            const double want = e.at(key).get<double>();
            INFO(key << ": expected " << want << ", got " << got);
            CHECK(got == Approx(want).epsilon(0.01).margin(1e-6));
            ++checked;
        };
        near("iteration_time_ms", r.iterationS * 1e3);
        near("throughput_qps", r.throughputQps);
        near("global_batch", r.globalBatch);
        near("gemm_ms", r.gemmS * 1e3);
        near("emb_ms", r.embS * 1e3);
        near("all2all_ms", r.allToAllS * 1e3);
        near("allreduce_ms", r.allReduceS * 1e3);
        near("allgather_ms", r.allGatherS * 1e3);
        near("reducescatter_ms", r.reduceScatterS * 1e3);
        near("exposed_comm_ms", r.exposedCommS * 1e3);
        near("overlapped_comm_ms", r.overlappedCommS * 1e3);
        near("mlp_weights_gb_per_device", r.mlpWeightsBytesPerDevice / 1e9);
        near("emb_weights_gb_per_device", r.embWeightsBytesPerDevice / 1e9);
        near("model_total_params_b", r.totalParams / 1e9);
    }
    CHECK(checked > 32 * 10);
}

TEST_CASE("Bad seed files get an error naming the file and the field") {
    const json& c = cases()[1]; // DLRM_A on ZionEX-128, valid
    struct Bad {
        const char* which; // model / system / task
        const char* field;
        json value;        // null: remove the field
        const char* expect;
    };
    const std::vector<Bad> bad = {
        {"model", "type", "GPT", "type"},
        {"model", "bytes_per_nonemb_param", 3, "bytes_per_nonemb_param"},
        {"model", "bytes_per_emb_param", 0, "bytes_per_emb_param"},
        {"model", "num_bot_mlp_layers", 0, "num_bot_mlp_layers"},
        {"model", "mlp_dim", -5, "mlp_dim"},
        {"model", "num_tables", "many", "num_tables"},
        {"model", "pooling_size", 0, "pooling_size"},
        {"model", "emb_dimension", 94, "emb_dimension"},
        {"model", "emb_dim", nullptr, "emb_dim"},
        {"system", "num_nodes", 3, "num_nodes"},
        {"system", "flops_util", 1.5, "flops_util"},
        {"system", "mem_bw", -1, "mem_bw"},
        {"system", "num_devices", 0, "num_devices"},
        {"system", "ibroce_bw", 0, "system.json: ibroce_bw: is 0"},
        {"system", "ibroce_util", 0, "system.json: ibroce_util: is 0"},
        {"system", "num_ibroce_ports", 0, "system.json: num_ibroce_ports: is 0"},
        {"system", "type", "TPU", "type"},
        {"task", "type", "train", "type"},
        {"task", "mlp_parallel", json::array({"ddp", "zero"}), "mlp_parallel"},
        {"task", "mlp_parallel_degree", json::array({128, 2}), "mlp_parallel_degree"},
        {"task", "mlp_parallel_degree", json::array({64}), "mlp_parallel_degree"},
        {"task", "emb_parallel_degree", json::array({1}), "emb_parallel_degree"},
        {"task", "local_mlp_bs", 256, "local_mlp_bs"},
        {"task", "local_emb_bs", 0, "local_emb_bs"},
        {"task", "emb_parallel", nullptr, "emb_parallel"},
        {"task", "mlp_paralel", json::array({"ddp"}), "mlp_paralel"},
    };
    for (const Bad& b : bad) {
        json m = c.at("model"), s = c.at("system"), t = c.at("task");
        json& doc = std::string(b.which) == "model" ? m : std::string(b.which) == "system" ? s : t;
        if (b.value.is_null())
            doc.erase(b.field);
        else
            doc[b.field] = b.value;
        const std::string file = std::string(b.which) + ".json";
        INFO(file << " " << b.field << " = " << b.value.dump());
        std::string msg;
        try {
            seed::runReference(seed::parseModel(m, "model.json"), seed::parseSystem(s, "system.json"),
                               seed::parseTask(t, "task.json"), "task.json");
        } catch (const InputError& e) {
            msg = e.what();
        }
        CHECK_THAT(msg, Catch::Contains(file) && Catch::Contains(b.expect));
    }
}

TEST_CASE("madmax evaluate reads the seed's three files with the reference engine") {
    namespace fs = std::filesystem;
    const fs::path dir =
        std::filesystem::temp_directory_path() / ("madmax-seed-cli-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const json& c = cases()[1];
    for (const char* k : {"model", "system", "task"})
        std::ofstream(dir / (std::string(k) + ".json")) << c.at(k).dump();
    const std::string args = "evaluate --model-cfg " + (dir / "model.json").string() +
                             " --system-cfg " + (dir / "system.json").string() +
                             " --task-cfg " + (dir / "task.json").string();
    std::string out, err;
    REQUIRE(test::runCli(args + " --json", &out, &err) == 0);
    const json j = json::parse(out);
    // DLRM_A on ZionEX-128 (docs/reference/seed-format.md §1.1 worked check): 54.00 ms, 1.214 M samples/s.
    CHECK(j.at("iteration_time_ms").get<double>() == Approx(54.002422).epsilon(1e-6));
    CHECK(test::runCli(args + " --engine native", &out, &err) == 2);
    CHECK_THAT(err, Catch::Contains("--engine reference"));
    CHECK(test::runCli("evaluate --model-cfg " + (dir / "model.json").string(), &out, &err) == 2);
    CHECK_THAT(err, Catch::Contains("--system-cfg"));
    fs::remove_all(dir);
}

TEST_CASE("The seed's LLM files convert to a native scenario, with every assumption said") {
    const json& llama = cases()[15]; // LLaMA2_70B on DC_A-2048, llm_train (fsdp 2048)
    REQUIRE(llama.at("id") == "llama2_70b__dc_A_2048__llm_train");
    std::vector<std::string> assumed;
    const json doc = seed::toScenarioJson(seed::parseModel(llama.at("model"), "m.json"),
                                          seed::parseSystem(llama.at("system"), "s.json"),
                                          seed::parseTask(llama.at("task"), "t.json"),
                                          PresetLibrary::builtin(), assumed, "m.json");
    const Scenario s = parseScenario(doc, "converted");
    CHECK(s.gpus == 2048);
    CHECK(s.strategy.zeroStage == 3);
    CHECK(s.strategy.dp == 2048);
    CHECK(s.workload.globalBatch == 2048);
    CHECK(s.model.vocab == 50304); // 50,257 padded to a multiple of 128
    // DC_A: 12 NVLinks of 50 GB/s bidirectional = 300 GB/s per direction; 8 × 25 GB/s ports per
    // 8-GPU node, bidirectional = 12.5 GB/s per GPU per direction.
    CHECK(s.system.tiers.at(0).bytesPerS == Approx(300e9));
    CHECK(s.system.tiers.at(1).bytesPerS == Approx(12.5e9));
    CHECK(assumed.size() >= 3);
    CHECK(evaluate(s).stepTimeS > 0);
    // Side by side, with what differs and why, in numbers. DC_A's reference bandwidths
    // (docs/reference/seed-format.md §1.2): intra = 12 × 50/2 GB/s × 0.6667 = 200.0 GB/s, inter = 8 ports ×
    // 25/2 GB/s × 0.56 / 8 GPUs = 7.0 GB/s, across nodes 0.2746·200.0 + 0.7254·7.0 = 60.0 GB/s.
    {
        const seed::Model m = seed::parseModel(llama.at("model"), "m.json");
        const seed::System sys = seed::parseSystem(llama.at("system"), "s.json");
        const seed::Task t = seed::parseTask(llama.at("task"), "t.json");
        seed::ReferenceResult ref = seed::runReference(m, sys, t);
        std::string text = seed::formatComparison(m, sys, t, ref, evaluate(s));
        // A part the reference puts at zero is stated, not left as an empty ratio. The native
        // engine exposes 1.792 s of FSDP's gathers here: each is a ring of 2,048 ranks over 256
        // nodes whose 2,047 steps each pay the network's latency (collectives.cpp,
        // spanningRingTime).
        ref.exposedCommS = 0;
        CHECK_THAT(seed::formatComparison(m, sys, t, ref, evaluate(s)),
                   Catch::Contains("exposed: reference 0.0 us, native 1.792 s."));
        for (auto at = text.find("\n    "); at != std::string::npos; at = text.find("\n    "))
            text.replace(at, 5, " "); // unwrap the bullets
        CHECK_THAT(text, Catch::Contains("Side by side") &&
                             Catch::Contains("= 60 GB/s per GPU, where the network alone gives "
                                             "7 GB/s") &&
                             Catch::Contains("flops_util (71%)") &&
                             Catch::Contains("it does not fit"));
    }
    // MoE: the seed's tp means expert parallelism.
    const json& gpt4 = cases()[19];
    assumed.clear();
    const Scenario moe = parseScenario(
        seed::toScenarioJson(seed::parseModel(gpt4.at("model"), "m.json"),
                             seed::parseSystem(gpt4.at("system"), "s.json"),
                             seed::parseTask(gpt4.at("task"), "t.json"), PresetLibrary::builtin(),
                             assumed, "m.json"),
        "converted");
    CHECK(moe.model.isMoe());
    CHECK(moe.strategy.ep == 8);
    CHECK(moe.strategy.tp == 1);
    {
        // The all-to-all line: the reference's b·s·h·bytes/E against k routed copies.
        const seed::Model gm = seed::parseModel(gpt4.at("model"), "m.json");
        const seed::System gs = seed::parseSystem(gpt4.at("system"), "s.json");
        const seed::Task gt = seed::parseTask(gpt4.at("task"), "t.json");
        const seed::ReferenceResult gr = seed::runReference(gm, gs, gt);
        REQUIRE(gr.allToAllS > 0);
        const Result nr = evaluate(moe);
        std::string text = seed::formatComparison(gm, gs, gt, gr, nr);
        for (auto at = text.find("\n    "); at != std::string::npos; at = text.find("\n    "))
            text.replace(at, 5, " ");
        char ratio[64];
        std::snprintf(ratio, sizeof ratio, "all-to-all: native %.2fx the reference",
                      nr.collectiveTotal(Collective::AllToAll).serializedS / gr.allToAllS);
        CHECK_THAT(text, Catch::Contains(ratio) && Catch::Contains("1/16 of one copy") &&
                             Catch::Contains("each token's 2 routed copies"));
    }
    // DLRM and finetune tasks are refused with the reason, not approximated.
    std::string msg;
    try {
        seed::toScenarioJson(seed::parseModel(cases()[1].at("model"), "m.json"),
                             seed::parseSystem(cases()[1].at("system"), "s.json"),
                             seed::parseTask(cases()[1].at("task"), "t.json"),
                             PresetLibrary::builtin(), assumed, "m.json");
    } catch (const InputError& e) {
        msg = e.what();
    }
    CHECK_THAT(msg, Catch::Contains("--engine reference") && Catch::Contains("no interaction"));
}

TEST_CASE("The seed's shipped files are built in and reproduce the reference outputs by id") {
    // presets/seed holds the shipped model, system and task files of the reference cases that
    // use them (from_shipped_configs); loading them by id must give the same outputs.
    auto idOf = [](const char* kind, const std::string& name) -> std::string {
        for (const auto& id : seed::builtinIds(kind))
            if (seed::loadFile(kind, id).value("name", "") == name) return id;
        return "";
    };
    // The whole model_cfgs/ zoo of docs/reference/seed-format.md §1.8 (33 files); every system file of §1.8
    // (ZionEX 3, DC-A 2, and the artifact repository's 61 cloud files: 21 + 21 + 19); every
    // shipped task file (12).
    CHECK(seed::builtinIds("models").size() == 33);
    CHECK(seed::builtinIds("systems").size() == 66);
    CHECK(seed::builtinIds("tasks").size() == 12);
    int shipped = 0;
    for (const json& c : cases()) {
        if (!c.value("from_shipped_configs", false)) continue;
        const std::string m = idOf("models", c["model"]["name"]),
                          s = idOf("systems", c["system"]["name"]),
                          t = idOf("tasks", c["task"]["name"]);
        INFO(c["id"].get<std::string>() << ": " << m << " / " << s << " / " << t);
        REQUIRE_FALSE(m.empty());
        REQUIRE_FALSE(s.empty());
        REQUIRE_FALSE(t.empty());
        const auto r = seed::runReference(seed::parseModel(seed::loadFile("models", m), m),
                                          seed::parseSystem(seed::loadFile("systems", s), s),
                                          seed::parseTask(seed::loadFile("tasks", t), t), t);
        CHECK(r.iterationS * 1e3 ==
              Approx(c["expected"]["iteration_time_ms"].get<double>()).epsilon(1e-6));
        ++shipped;
    }
    CHECK(shipped >= 15);
}

TEST_CASE("The seed's whole model zoo is built in: DLRM F and I, their MoE and Transformer kin, "
          "LLaMA, ViT and DINOv2") {
    // Every model file docs/reference/seed-format.md §1.8 lists (facebookresearch/ScaleExplorer @ 7aebab8,
    // madmax/model_cfgs/), by id.
    for (const char* id :
         {"dlrm_a", "dlrm_a_small", "dlrm_f", "dlrm_i", "dlrm_i_small", "dlrm_a_moe",
          "dlrm_a_small_moe", "dlrm_i_moe", "dlrm_i_small_moe", "dlrm_a_transformer",
          "dlrm_a_small_transformer", "dlrm_i_transformer", "dlrm_i_small_transformer", "gpt3_175b",
          "llama2_70b", "llama2_70b_8kctx", "llama2_70b_16kctx", "llama2_70b_32kctx", "llama_7b",
          "llama_13b", "llama_30b", "llama_65b", "gpt4_1.8t", "vit_l", "vit_h", "vit_10b",
          "vit_25b", "vit_60b", "vit_120b", "dinov2_s", "dinov2_b", "dinov2_l", "dinov2_g"}) {
        INFO(id);
        CHECK_NOTHROW(seed::parseModel(seed::loadFile("models", id), id));
    }
    auto ref = [](const char* m, const char* s, const char* t) {
        return seed::runReference(seed::parseModel(seed::loadFile("models", m), m),
                                  seed::parseSystem(seed::loadFile("systems", s), s),
                                  seed::parseTask(seed::loadFile("tasks", t), t), t);
    };
    // DLRM-F (4+4 MLP layers of 560, 64 tables x 732M rows x 256, pooling 20, fp16 embeddings)
    // on ZionEX-128 (A100: TF32 156 TFLOP/s x 0.705, HBM 1555 GB/s x 0.836) with dlrm_train
    // (mp128 embeddings over the global batch 65,536; fsdp128 MLPs at 512 per GPU), by
    // docs/reference/seed-format.md's facts 2 and 3:
    const auto f = ref("dlrm_f", "zionex_128", "dlrm_train");
    // lookups: 64·20·256·2 B x 65,536 / 128 / (1555e9·0.836), forward and backward = 0.5163 ms;
    CHECK(f.embS * 1e3 == Approx(2.0 * 64 * 20 * 256 * 2 * 65536.0 / 128 / (1555e9 * 0.836) * 1e3)
                              .epsilon(1e-9));
    CHECK(f.embS * 1e3 == Approx(0.5163).epsilon(1e-3));
    // GEMMs: 8 layers x 2·560² FLOPs x 512 samples / (156e12·0.705), backward twice = 0.0701 ms.
    CHECK(f.gemmS * 1e3 == Approx(3.0 * 8 * 2 * 560.0 * 560 * 512 / (156e12 * 0.705) * 1e3)
                               .epsilon(1e-9));
    // 64 tables x 732M rows x 256 x 2 B over 128 GPUs: 187.39 GB of embeddings per device
    // (the reference checks no capacity).
    CHECK(f.embWeightsBytesPerDevice == Approx(64 * 732e6 * 256 * 2 / 128).epsilon(1e-9));
    // Rows affect memory only (docs/reference/seed-format.md §1.2): DLRM-I-Small times exactly as DLRM-I.
    const auto i = ref("dlrm_i", "dc_A_128", "dlrm_train");
    const auto is = ref("dlrm_i_small", "dc_A_128", "dlrm_train");
    CHECK(is.iterationS == i.iterationS);
    CHECK(is.embWeightsBytesPerDevice == Approx(i.embWeightsBytesPerDevice * 440000 / 7050000.0));
    // Its MoE kin expert-izes only the top MLP (fact 5: FLOPs x k): more GEMM time, never less.
    const auto im = ref("dlrm_i_moe", "zionex_128", "dlrm_moe_train");
    const auto idm = ref("dlrm_i", "zionex_128", "dlrm_moe_train");
    CHECK(im.gemmS > idm.gemmS);
    CHECK(im.gemmS < 2.0 * idm.gemmS + 1e-12);
    // The two shipped task files the guide says fail do fail, naming the field.
    auto failsOn = [&](const char* m, const char* s, const char* t, const char* field) {
        try {
            (void)ref(m, s, t);
            FAIL(t << " ran");
        } catch (const InputError& e) {
            CHECK_THAT(std::string(e.what()), Catch::Contains(field));
        }
    };
    failsOn("llama2_70b", "zionex_2048", "llm_inference", "transformer_parallel_degree");
    failsOn("gpt4_1.8t", "zionex_2048", "llm_moe_train", "local_transformer_bs");
}

TEST_CASE("Every cloud system file of the artifact repository is built in, each size of an "
          "instance type the same per GPU") {
    // samhsia/MADMAX-AE @ 7508eef, system_cfgs/cloud_{A,B,C}/: an instance type's sizes differ
    // only in their device and node counts (and a single node's ar_perc_intra of 1).
    std::map<std::string, std::vector<seed::System>> byType;
    for (const std::string& id : seed::builtinIds("systems")) {
        if (id.rfind("cloud_", 0) != 0) continue;
        const auto cut = id.rfind('_');
        const seed::System sys = seed::parseSystem(seed::loadFile("systems", id), id);
        INFO(id);
        CHECK(sys.devices == std::stoi(id.substr(cut + 1)));
        byType[id.substr(0, cut)].push_back(sys);
    }
    CHECK(byType.size() == 12); // p4d, p4de, p5, p3, p3dn; ND96asr, NC96ds, NC24rs, ND40rs; a2 x2, n1
    std::size_t files = 0;
    for (const auto& [type, sizes] : byType) {
        INFO(type);
        files += sizes.size();
        const seed::System& a = sizes.front();
        for (const seed::System& b : sizes) {
            CHECK(b.devices / b.nodes == a.devices / a.nodes); // GPUs per node
            CHECK(b.f16 == a.f16);
            CHECK(b.memCap == a.memCap);
            CHECK(b.nvlinks * b.bwPerNvlink * b.nvlinkUtil == a.nvlinks * a.bwPerNvlink * a.nvlinkUtil);
            CHECK(b.ibPorts * b.ibBw * b.ibUtil == a.ibPorts * a.ibBw * a.ibUtil);
            CHECK(b.arPercIntra == (b.nodes == 1 ? 1.0 : 0.1465));
        }
    }
    CHECK(files == 61);
    // Azure's NC96ds_A100_v4 has 4 GPUs a node (2048 on 512 nodes), GCP's a2-megagpu 16.
    const auto nc = seed::parseSystem(seed::loadFile("systems", "cloud_B_a100.80_2048"), "nc");
    CHECK(nc.devices / nc.nodes == 4);
    const auto mega = seed::parseSystem(seed::loadFile("systems", "cloud_C_a100.40m_2048"), "a2");
    CHECK(mega.devices / mega.nodes == 16);
}

TEST_CASE("Reference mode matches every task file of the reference code on 473 combinations "
          "reference.json does not hold") {
    // tests/data/seed_crosscheck.json (its "about" says how it was made): each of the
    // reference code's six task files ported line for line, checked against reference.json's
    // cases of its family, then run on shipped (and small synthetic) models and shipped
    // systems with tasks that walk every branch of it. Each output to 1e-6; a task the
    // reference code refuses is refused. Before the fixes this file guards, ~74,000 of the
    // first ~133,000 such runs had differed (TP dependencies in the transformer backward, the
    // ViT file's gathers, the MoE files' all-to-all order, the DLRM_Transformer file's own
    // ordering); all ~142,000 runs of the final grids match.
    const json doc = readJsonFile(MADMAX_TEST_DATA "/seed_crosscheck.json");
    std::map<std::string, int> matched;
    int refused = 0;
    for (const json& c : doc.at("cases")) {
        const std::string s = c.at("system");
        const std::string fam = c.at("family");
        INFO(fam << " " << c.value("model", "(inline)") << " / " << s << " / " << c.at("task").dump());
        auto go = [&] {
            const seed::Model model =
                c.contains("model_cfg")
                    ? seed::parseModel(c.at("model_cfg"), "model.json")
                    : seed::parseModel(seed::loadFile("models", c.at("model")), c.at("model"));
            return seed::runReference(model, seed::parseSystem(seed::loadFile("systems", s), s),
                                      seed::parseTask(c.at("task"), "task.json"), "task.json");
        };
        if (c.at("expected").is_null()) {
            CHECK_THROWS_AS(go(), InputError);
            ++refused;
            continue;
        }
        const seed::ReferenceResult r = go();
        const json& e = c.at("expected");
        // Exposed and overlapped are differences of large sums: their rounding is the
        // iteration's, so they are held to 1e-6 of it.
        const double slack = 1e-6 * e.at("iteration_time_ms").get<double>();
        auto near = [&](const char* key, double gotS) {
            CHECK(gotS * 1e3 == Approx(e.at(key).get<double>()).epsilon(1e-6).margin(slack));
        };
        near("iteration_time_ms", r.iterationS);
        near("gemm_ms", r.gemmS);
        near("emb_ms", r.embS);
        near("a2a_ms", r.allToAllS);
        near("ar_ms", r.allReduceS);
        near("ag_ms", r.allGatherS);
        near("rs_ms", r.reduceScatterS);
        near("exposed_ms", r.exposedCommS);
        near("overlapped_ms", r.overlappedCommS);
        ++matched[fam];
    }
    CHECK(matched["DLRM"] == 120);
    CHECK(matched["DLRM_MoE"] == 60);
    CHECK(matched["DLRM_Transformer"] == 90);
    CHECK(matched["LLM"] == 60);
    CHECK(matched["LLM_MoE"] == 60);
    CHECK(matched["ViT"] == 60);
    CHECK(refused == 23);
}

TEST_CASE("Reference mode reproduces the MAD-Max artifact notebook's cloud runs, not in reference.json") {
    // samhsia/MADMAX-AE @ e4e8938, artifact_notebooks/[0] Cloud Provider Launcher.ipynb: the
    // reference code's printed output for DLRM-A (model_cfgs/dlrm/dlrm_a.json) and
    // task_cfgs/cloud/dlrm_train_cloud.json on the four 128-GPU cloud clusters it runs
    // (system_cfgs/cloud_*/…_128.json @ 7508eef, built in under presets/seed/systems). Every
    // number as printed, in ms, to its two decimals.
    struct Row {
        const char* system;
        double gemm, emb, a2a, ag, rs, exposed, overlapped, iteration, mqps;
    };
    const Row rows[] = {
        {"cloud_A_a100.40_128", 8.91, 9.10, 95.39, 59.55, 29.77, 180.40, 4.31, 198.41, 0.33},
        {"cloud_A_h100.80_128", 3.68, 7.07, 11.92, 29.75, 14.88, 54.64, 1.91, 65.39, 1.00},
        {"cloud_B_a100.40_128", 8.91, 9.10, 23.85, 48.35, 24.18, 92.35, 4.03, 110.36, 0.59},
        {"cloud_C_a100.40_128", 8.91, 9.10, 381.55, 63.20, 31.60, 471.95, 4.40, 489.96, 0.13},
    };
    for (const Row& w : rows) {
        INFO(w.system);
        const auto r = seed::runReference(
            seed::parseModel(seed::loadFile("models", "dlrm_a"), "dlrm_a"),
            seed::parseSystem(seed::loadFile("systems", w.system), w.system),
            seed::parseTask(seed::loadFile("tasks", "dlrm_train_cloud"), "dlrm_train_cloud"),
            "dlrm_train_cloud");
        auto ms = [](double s) { return s * 1e3; };
        CHECK(ms(r.gemmS) == Approx(w.gemm).margin(0.006));
        CHECK(ms(r.embS) == Approx(w.emb).margin(0.006));
        CHECK(ms(r.allToAllS) == Approx(w.a2a).margin(0.006));
        CHECK(ms(r.allReduceS) == Approx(0.0).margin(0.006));
        CHECK(ms(r.allGatherS) == Approx(w.ag).margin(0.006));
        CHECK(ms(r.reduceScatterS) == Approx(w.rs).margin(0.006));
        CHECK(ms(r.exposedCommS) == Approx(w.exposed).margin(0.006));
        CHECK(ms(r.overlappedCommS) == Approx(w.overlapped).margin(0.006));
        CHECK(ms(r.iterationS) == Approx(w.iteration).margin(0.006));
        // "Task Throughput" printed in MQPS to two decimals.
        CHECK(r.throughputQps / 1e6 == Approx(w.mqps).margin(0.005));
    }
}
