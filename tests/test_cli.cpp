// The madmax command line, run as a user would.
#include "madmax/collectives.hpp"
#include "test_support.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>
#include <unistd.h>

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using madmax::test::runCli;

TEST_CASE("madmax evaluate prints a report for the built-in default scenario") {
    std::string out;
    REQUIRE(runCli("evaluate", &out) == 0);
    CHECK_THAT(out, Contains("Llama 3 70B") && Contains("Step time") && Contains("MFU") &&
                        Contains("fits"));
}

TEST_CASE("madmax evaluate --json has the stable machine keys") {
    std::string out;
    REQUIRE(runCli("evaluate default --json --set strategy.micro_batch=2", &out) == 0);
    const auto j = nlohmann::json::parse(out);
    for (const char* k : {"step_time_s", "samples_per_s", "tokens_per_s", "tokens_per_s_per_gpu",
                          "model_tflops_per_gpu", "hardware_tflops_per_gpu", "mfu", "hfu",
                          "compute_s", "exposed_comm_s", "bubble_s", "comm", "memory"})
        CHECK(j.contains(k));
    for (const char* k : {"weights_bytes", "grads_bytes", "optimizer_bytes", "activations_bytes",
                          "reserve_bytes", "total_bytes", "capacity_bytes", "fits"})
        CHECK(j["memory"].contains(k));
    CHECK(j["comm"]["by_dimension"]["tp"]["serialized_s"].get<double>() > 0);
    CHECK(j["comm"]["by_collective"].contains("all_gather"));
    CHECK(j["step_time_s"].get<double>() ==
          Approx(j["compute_s"].get<double>() + j["exposed_comm_s"].get<double>() +
                 j["bubble_s"].get<double>()));
}

TEST_CASE("madmax evaluate --json carries a DLRM's breakdown") {
    // The sparse side of a DLRM step, as the text report prints it, for scripts: lookups, the
    // embedding update, the dense part, the interaction, each sparse collective and the load
    // balance. The preset shards 26 table groups over 64 H100s (several per GPU, so the
    // pooled all-to-all carries bytes); fused table kernels, so no per-table copies.
    std::string out;
    REQUIRE(runCli("evaluate dlrm-dcnv2-64-h100 --json", &out) == 0);
    const auto j = nlohmann::json::parse(out);
    REQUIRE(j.contains("dlrm"));
    const auto& x = j["dlrm"];
    for (const char* k :
         {"lookup_s", "embedding_backward_s", "dense_forward_s", "dense_backward_s",
          "interaction_s", "per_table_copies_s", "pooled_all_to_all_fwd_s", "sparse_exposed_s",
          "imbalance", "lookup_bytes_critical", "table_bytes_critical"})
        CHECK(x.contains(k));
    CHECK(x["lookup_s"].get<double>() > 0);
    CHECK(x["pooled_all_to_all_fwd_s"].get<double>() > 0);
    CHECK(x["all_to_all_bytes_per_gpu"].get<double>() > 0);
    CHECK(x["per_table_copies_s"].get<double>() == 0.0);
    CHECK(x["imbalance"].get<double>() >= 1.0);
    // Eager per-table modules add their copies; one GPU sends nothing to others.
    REQUIRE(runCli("evaluate dlrm-dcnv2-64-h100 --json --set strategy.emb_kernels=per_table "
                   "--set gpus=1 --set strategy.dp=1 --set workload.global_batch=4096",
                   &out) == 0);
    const auto one = nlohmann::json::parse(out)["dlrm"];
    CHECK(one["per_table_copies_s"].get<double>() > 0);
    CHECK(one["all_to_all_bytes_per_gpu"].get<double>() == 0.0);
    CHECK(one["pooled_all_to_all_fwd_s"].get<double>() == 0.0);
}

TEST_CASE("madmax exits 2 with a message on bad input") {
    std::string out, err;
    CHECK(runCli("evaluate default --set strategy.tp=16 --set strategy.dp=4", &out, &err) == 2);
    CHECK_THAT(err, Contains("error:") && Contains("TP=16"));
    CHECK(runCli("evaluate /no/such/file.json", &out, &err) == 2);
    CHECK_THAT(err, Contains("/no/such/file.json"));
    CHECK(runCli("frobnicate", &out, &err) == 2);
    CHECK(runCli("presets show nonesuch", &out, &err) == 2);
    CHECK_THAT(err, Contains("no preset by that id"));
}

TEST_CASE("A bad value from --set is blamed on the --set, not on the scenario file") {
    std::string out, err;
    // The field the override wrote: the error names that --set (the last one, as applied).
    CHECK(runCli("evaluate default --set strategy.tp=2 --set strategy.tp=0", &out, &err) == 2);
    CHECK_THAT(err,
               StartsWith("error: --set strategy.tp=0: strategy.tp: value 0 is out of range") &&
                   Contains("applied to presets/scenarios/default.json"));
    // An object the override replaced: a field inside it is still that --set's doing; an
    // element's path as --set writes it (tiers.0) matches the one the parser reports (tiers[0]).
    CHECK(runCli("evaluate default --set 'strategy={\"tp\":0}'", &out, &err) == 2);
    CHECK_THAT(err, StartsWith("error: --set strategy={\"tp\":0}: strategy.tp:"));
    CHECK(runCli("evaluate default --set system.tiers.0.gbps=-1", &out, &err) == 2);
    CHECK_THAT(err, StartsWith("error: --set system.tiers.0.gbps=-1: system.tiers[0].gbps:"));
    // A check across fields: the file is named with the overrides that were applied to it.
    CHECK(runCli("evaluate default --set model.hidden=3", &out, &err) == 2);
    CHECK_THAT(err, StartsWith("error: presets/scenarios/default.json with --set model.hidden=3: "
                               "model.head_dim:"));
    // No override: the file alone, as before.
    CHECK(runCli("evaluate /no/such/file.json", &out, &err) == 2);
    CHECK_THAT(err, !Contains("--set"));
}

TEST_CASE("A file the CLI cannot write is a user's error (exit 2) naming it, never replaced") {
    namespace fs = std::filesystem;
    const fs::path dir =
        fs::temp_directory_path() / ("madmax-cli-write-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir / "folder.json");
    std::ofstream(dir / "folder.json" / "keep.txt") << "mine";
    // The seed's files converted and written out (--write-scenario) onto a folder.
    const nlohmann::json seed =
        nlohmann::json::parse(std::ifstream(MADMAX_TEST_DATA "/../fuzz/seeds/seed-llm-fsdp.json"));
    for (const char* k : {"model", "system", "task"})
        std::ofstream(dir / (std::string(k) + ".json")) << seed.at(k).dump();
    const std::string d = dir.string();
    std::string out, err;
    CHECK(runCli("evaluate --model-cfg " + d + "/model.json --system-cfg " + d +
                     "/system.json --task-cfg " + d + "/task.json --write-scenario " + d +
                     "/folder.json",
                 &out, &err) == 2); // was "internal error" (exit 1)
    CHECK_THAT(err, StartsWith("error: " + d + "/folder.json: will not replace it"));
    // validate --write-scenarios: a case whose file cannot be written stops the run with its
    // name (it had been swallowed with the cases that cannot be expressed).
    fs::create_directories(dir / "cases" / "mbridge2511-gpt-oss-120b-dgx-h100-64-bf16.json");
    CHECK(runCli(std::string("validate ") + MADMAX_PUBLIC_DATASET + " --write-scenarios " + d +
                     "/cases",
                 &out, &err) == 2);
    CHECK_THAT(err,
               Contains("mbridge2511-gpt-oss-120b-dgx-h100-64-bf16.json: will not replace it"));
    CHECK(fs::is_directory(dir / "folder.json"));
    CHECK(fs::exists(dir / "folder.json" / "keep.txt"));
    fs::remove_all(dir);
}

TEST_CASE("A search option the workload's search has no use for is refused, not ignored") {
    std::string out, err;
    // Serving options on a training search, and training ones on a serving or DLRM search.
    CHECK(runCli("search default --ttft 0.1", &out, &err) == 2);
    CHECK_THAT(err, StartsWith("error: --ttft: does not apply to a training search"));
    CHECK(runCli("search serve-llama2-70b-8xh100-offline --objective cost", &out, &err) == 2);
    CHECK_THAT(err, StartsWith("error: --objective: does not apply to a serving search"));
    // Throughput is what it ranks: saying so is fine.
    CHECK(runCli("search serve-llama2-70b-8xh100-offline --objective throughput --top 1", &out,
                 &err) == 0);
    CHECK(runCli("search dlrm-dcnv2-64-h100 --restrict tp=2", &out, &err) == 2);
    CHECK_THAT(err, StartsWith("error: --restrict: does not apply to a DLRM's plan search"));
    // Sweeps and the Pareto run the same searches: the objective is checked there too (the
    // Pareto had reported it as every point's "no valid strategy").
    CHECK(runCli("sweep serve-llama2-70b-8xh100-offline --knob hbm_bw=1,2 --objective cost", &out,
                 &err) == 2);
    CHECK_THAT(err, Contains("a serving search ranks output tokens/s per GPU"));
    CHECK(runCli("pareto dlrm-dcnv2-64-h100 --objective cost --gpus 64", &out, &err) == 2);
    CHECK_THAT(err, StartsWith("error: --objective: cost: a DLRM's plan search ranks samples/s"));
    // Counts are ranges, said as such: a negative --top was refused with a 300-digit bound
    // (search) or taken as 0 without a word (merge); --threads took any count.
    CHECK(runCli("search default --top -1", &out, &err) == 2);
    CHECK_THAT(err, Contains("--top: Value -1 not in range 0 to 1073741824"));
    CHECK(runCli("merge --top -1 x.json", &out, &err) == 2);
    CHECK_THAT(err, Contains("--top: Value -1 not in range 0 to 1073741824"));
    CHECK(runCli("search default --threads 100000", &out, &err) == 2);
    CHECK_THAT(err, Contains("--threads: Value 100000 not in range 0 to 4096"));
    CHECK(runCli("search default --token-budget -5", &out, &err) == 2);
    CHECK_THAT(err, Contains("--token-budget: \"-5\" is not a positive number"));
    CHECK(runCli("search serve-llama2-70b-8xh100-offline --ttft -1", &out, &err) == 2);
    CHECK_THAT(err, Contains("--ttft: \"-1\" is not a number of 0 or more"));
    CHECK(runCli("search serve-llama2-70b-8xh100-offline --tpot nan", &out, &err) == 2);
    CHECK_THAT(err, Contains("is not a finite number"));
    // The Pareto comparison is one run with its own GPU counts.
    CHECK(runCli("pareto --shard 1/2 --gpus 64", &out, &err) == 2);
    CHECK_THAT(err, StartsWith("error: --shard: 1/2: does not apply to the Pareto comparison"));
    CHECK(runCli("pareto --restrict gpus=64", &out, &err) == 2);
    CHECK_THAT(err, Contains("takes its GPU counts from --gpus"));
    // --sensitivity ranks every knob itself and is not sharded; its CSV is its own table.
    CHECK(runCli("sweep --sensitivity --knob hbm_bw=1,2", &out, &err) == 2);
    CHECK_THAT(err, Contains("give --knob for a sweep or --sensitivity, not both"));
    CHECK(runCli("sweep --sensitivity --shard 0/2", &out, &err) == 2);
    CHECK(runCli("sweep llama2-7b-8-a100-40gb --sensitivity --csv", &out, &err) == 0);
    CHECK_THAT(out, StartsWith("knob,speedup_half,speedup_double\n"));
    // What applies still runs.
    CHECK(runCli("search serve-llama2-70b-8xh100-offline --tpot 0.1 --top 2", &out, &err) == 0);
}

TEST_CASE("madmax presets list and show") {
    std::string out;
    REQUIRE(runCli("presets list", &out) == 0);
    CHECK_THAT(out, Contains("llama31-405b") && Contains("gb200-nvl72") && Contains("default"));
    REQUIRE(runCli("presets show dgx-h100-superpod", &out) == 0);
    CHECK(nlohmann::json::parse(out)["gpus_per_node"] == 8);
}

TEST_CASE("madmax validate --json reports cases and a summary") {
    std::string out;
    REQUIRE(runCli(std::string("validate ") + MADMAX_PUBLIC_DATASET + " --json", &out) == 0);
    const auto j = nlohmann::json::parse(out);
    CHECK(j["cases"].size() == 62);
    for (const char* k :
         {"count", "median_abs_error_pct", "p90_abs_error_pct", "max_abs_error_pct", "spearman"})
        CHECK(j["summary"].contains(k));
    int skipped = 0;
    for (const auto& c : j["cases"])
        skipped += c.contains("skipped");
    CHECK(skipped == 0); // every case is predicted (the DLRM rows since issue #11)
}

TEST_CASE("madmax --help and --version exit 0") {
    std::string out;
    CHECK(runCli("--help", &out) == 0);
    CHECK_THAT(out, Contains("evaluate") && Contains("validate"));
    CHECK(runCli("--version", &out) == 0);
    CHECK_THAT(out, Contains("madmax"));
}

TEST_CASE("madmax search --json reports the ranking and its stats") {
    std::string out;
    REQUIRE(runCli("search default --top 3 --json --threads 2 --baseline "
                   "tp=8,pp=4,vp=5,mb=1,zero=1,recompute=selective,sp=1",
                   &out) == 0);
    const auto j = nlohmann::json::parse(out);
    CHECK(j["schema"] == "madmax-search/1");
    CHECK(j["top"].size() == 3);
    for (const char* k : {"enumerated", "timed", "seconds", "enumerated_per_s", "timed_per_s"})
        CHECK(j["stats"].contains(k));
    // The scatter sample is opt-in: without --scatter the JSON stays small.
    CHECK_FALSE(j.contains("scatter"));
    CHECK(out.size() < 200000);
    REQUIRE(runCli("search default --top 3 --json --scatter --restrict tp=8", &out) == 0);
    CHECK(nlohmann::json::parse(out)["scatter"].size() > 0);
    CHECK(j["speedup_over_baseline"].get<double>() >= 1.0);
    REQUIRE(runCli("search default --top 2 --csv --restrict tp=8 --objective cost", &out) == 0);
    CHECK_THAT(out, Contains("rank,gpus,tp,pp"));
}

TEST_CASE("madmax search --shard I/N outputs merge into the unsharded result") {
    std::string whole, a, b;
    REQUIRE(runCli("search default --top 5 --json", &whole) == 0);
    // A folder of this run's own: concurrent test runs must not share the shard files.
    char tmpl[] = "/tmp/madmax-shard-test.XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    const std::string dir = tmpl;
    REQUIRE(runCli("search default --top 5 --json --shard 0/2 > " + dir + "/a.json", nullptr) == 0);
    REQUIRE(runCli("search default --top 5 --json --shard 1/2 > " + dir + "/b.json", nullptr) == 0);
    std::string merged;
    REQUIRE(runCli("merge --top 5 " + dir + "/a.json " + dir + "/b.json", &merged) == 0);
    const auto w = nlohmann::json::parse(whole), m = nlohmann::json::parse(merged);
    CHECK(m["top"] == w["top"]);
    CHECK(m["pareto_memory"] == w["pareto_memory"]);
    CHECK(m["heatmap"] == w["heatmap"]);
    CHECK(m["stats"]["enumerated"] == w["stats"]["enumerated"]);
    // Shards prune differently (each has its own running best), but every fitting
    // configuration is either timed or pruned by a bound.
    CHECK(m["stats"]["timed"].get<long>() + m["stats"]["pruned"].get<long>() ==
          w["stats"]["timed"].get<long>() + w["stats"]["pruned"].get<long>());
}

TEST_CASE("madmax sweep scales a knob and reports speedups") {
    std::string out, err;
    REQUIRE(runCli("sweep llama2-7b-8-a100-40gb --knob hbm_bw=1,2 --json", &out) == 0);
    const auto j = nlohmann::json::parse(out);
    CHECK(j["points"].size() == 2);
    CHECK(j["points"][0]["speedup"].get<double>() == Approx(1.0));
    CHECK(j["points"][1]["speedup"].get<double>() >= 1.0);
    CHECK(runCli("sweep default --knob nvlink=2", &out, &err) == 2);
    CHECK_THAT(err, Contains("unknown knob"));
    CHECK(runCli("search default --shard 3/2", &out, &err) == 2);
    CHECK_THAT(err, Contains("0 ≤ I < N"));
}

TEST_CASE("madmax on inference scenarios: evaluate, search under objectives, curve") {
    std::string out;
    REQUIRE(runCli("evaluate serve-llama33-70b-2xh100-tp2", &out) == 0);
    CHECK_THAT(out, Contains("TTFT") && Contains("TPOT") && Contains("KV cache"));
    REQUIRE(runCli("evaluate serve-llama33-70b-2xh100-tp2 --json", &out) == 0);
    const auto j = nlohmann::json::parse(out);
    for (const char* k :
         {"ttft_s", "tpot_s", "output_tokens_per_s", "kv_bytes_per_token", "decode"})
        CHECK(j["inference"].contains(k));
    CHECK(j["memory"]["kv_cache_bytes"].get<double>() > 0);
    REQUIRE(runCli("search serve-llama2-70b-8xh100-offline --tpot 0.05 --json", &out) == 0);
    const auto s = nlohmann::json::parse(out);
    REQUIRE_FALSE(s["top"].empty());
    CHECK(s["top"][0]["tpot_s"].get<double>() <= 0.05);
    REQUIRE(runCli("curve serve-llama33-70b-2xh100-tp2 --json", &out) == 0);
    CHECK(nlohmann::json::parse(out).size() >= 6);
    std::string err;
    CHECK(runCli("curve default", &out, &err) == 2);
    CHECK_THAT(err, Contains("inference scenarios"));
}

TEST_CASE("madmax collective prints the engine's collective as nccl-tests would, and refuses "
          "what it cannot run") {
    // An all-gather of 1 GiB over 16 ranks of the default scenario's system (two DGX H100
    // nodes' worth): the time is collectiveTime's, the bus bandwidth nccl-tests' algbw · 15/16.
    std::string out, err;
    REQUIRE(runCli("collective --op all_gather --gpus 16 --bytes 1073741824 --json", &out) == 0);
    const auto j = nlohmann::json::parse(out);
    const madmax::System sys = madmax::test::preset("default").system;
    const double t = madmax::collectiveTime(sys, madmax::layoutGroup(sys, 16, 1),
                                            madmax::Collective::AllGather, 1073741824.0);
    REQUIRE(j["rows"].size() == 1);
    CHECK(j["rows"][0]["time_s"].get<double>() == Approx(t).epsilon(1e-12));
    CHECK(j["rows"][0]["busbw_gbps"].get<double>() ==
          Approx(1073741824.0 / t * 15.0 / 16.0 / 1e9).epsilon(1e-12));
    // All-reduce's bus factor is 2(n−1)/n; the default sweep has nccl-tests' five sizes.
    REQUIRE(runCli("collective --gpus 8", &out) == 0);
    CHECK_THAT(out, Contains("all_reduce over 8 ranks") && Contains("8589934592"));
    // A group larger than the system, a NaN size, an op the engine does not model: exit 2.
    CHECK(runCli("collective --gpus 100000000", &out, &err) == 2);
    CHECK_THAT(err, Contains("--gpus") && Contains("more than the system's"));
    CHECK(runCli("collective --gpus 16 --bytes nan", &out, &err) == 2);
    CHECK_THAT(err, Contains("not a finite number"));
    CHECK(runCli("collective --gpus 16 --op broadcast", &out, &err) == 2);
}

TEST_CASE("madmax refuses nan, out-of-range restrictions and impossible merge inputs (exit 2)") {
    std::string out, err;
    // nan passes CLI11's range checks (every comparison with NaN is false): refused first.
    CHECK(runCli("search default --token-budget nan", &out, &err) == 2);
    CHECK_THAT(err, Contains("not a finite number"));
    CHECK(runCli("search default --tpot nan", &out, &err) == 2);
    // tp = 0 is not a configuration; it used to surface as "nothing fits in memory".
    CHECK(runCli("search default --restrict tp=0", &out, &err) == 2);
    CHECK_THAT(err, Contains("tp takes 1 to"));
    char tmpl[] = "/tmp/madmax-merge-test.XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    const std::string dir = tmpl;
    REQUIRE(runCli("search default --top 2 --json --restrict tp=8 > " + dir + "/s.json") == 0);
    auto doc = nlohmann::json::parse(std::ifstream(dir + "/s.json"));
    doc["top"][0]["gpus"] = 0;
    std::ofstream(dir + "/bad.json") << doc.dump();
    CHECK(runCli("merge " + dir + "/bad.json", &out, &err) == 2);
    CHECK_THAT(err, Contains("candidate.gpus: must be a whole number of GPUs from 1 to 2^30"));
    doc = nlohmann::json::parse(std::ifstream(dir + "/s.json"));
    doc["heatmap"] = {{{"tp", "eight"}}};
    std::ofstream(dir + "/type.json") << doc.dump();
    CHECK(runCli("merge " + dir + "/type.json", &out, &err) == 2); // was "internal error" (1)
    const nlohmann::json sweep = {
        {"schema", "madmax-sweep/1"},
        {"axes", {{{"knob", "hbm_bw"}, {"factors", nlohmann::json::array()}}}},
        {"unscaled", nlohmann::json::parse(std::ifstream(dir + "/s.json"))["top"][0]},
        {"points", nlohmann::json::array()}};
    std::ofstream(dir + "/sweep.json") << sweep.dump();
    CHECK(runCli("merge " + dir + "/sweep.json", &out, &err) == 2); // was a division by zero
    CHECK_THAT(err, Contains("has no factors"));
}
