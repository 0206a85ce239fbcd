#include "test_support.hpp"

#include "madmax/error.hpp"

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>

namespace madmax::test {

Scenario preset(const std::string& id, const std::vector<std::string>& sets) {
    std::vector<Override> ov;
    for (const auto& s : sets)
        ov.push_back(parseOverride(s));
    return loadScenario(id, PresetLibrary::builtin(), ov);
}

Model modelPreset(const std::string& id) {
    return parseModel(PresetLibrary::builtin().find(PresetKind::Model, id)->json, id, "model");
}

System systemPreset(const std::string& id) {
    auto j = PresetLibrary::builtin().find(PresetKind::System, id)->json;
    j["gpu"] = PresetLibrary::builtin().find(PresetKind::Gpu, j["gpu"].get<std::string>())->json;
    return parseSystem(j, id, "system");
}

nlohmann::json toyScenario() {
    nlohmann::json doc = nlohmann::json::parse(R"({
  "schema": "madmax-scenario/1",
  "name": "toy",
  "model": {"id": "toy", "layers": 4, "hidden": 1024, "heads": 8, "kv_heads": 8,
            "head_dim": 128, "ffn_hidden": 4096, "vocab": 32768, "gated_mlp": false},
  "gpus": 8,
  "strategy": {"tp": 1, "pp": 1, "dp": 8, "micro_batch": 1, "zero_stage": 0},
  "workload": {"kind": "training", "global_batch": 16, "seq_len": 1024, "precision": "bf16",
               "attention": "flash"}
})");
    doc["system"] = toySystem();
    return doc;
}

Scenario toy(const Edits& edits) {
    nlohmann::json doc = toyScenario();
    for (const auto& [path, value] : edits)
        applyOverride(doc, path, value, "toy");
    return parseScenario(doc, "toy");
}

std::string toyError(const Edits& edits) {
    try {
        toy(edits);
    } catch (const InputError& e) {
        return e.what();
    }
    return "(no error)";
}

std::vector<double> opDurations(const Result& r, const std::string& label) {
    std::vector<double> out;
    for (const auto& e : r.timeline)
        if (e.label == label) out.push_back(e.endS - e.startS);
    return out;
}

double opSeconds(const Result& r, const std::string& label) {
    const auto d = opDurations(r, label);
    if (d.empty()) throw std::runtime_error("no timeline op labelled " + label);
    return d.front();
}

int runCli(const std::string& args, std::string* out, std::string* err) {
    const auto dir = std::filesystem::temp_directory_path();
    const auto errFile = dir / ("madmax-test-err-" + std::to_string(::getpid()));
    const std::string cmd = std::string(MADMAX_CLI) + " " + args + " 2>" + errFile.string();
    FILE* p = ::popen(cmd.c_str(), "r");
    std::string captured;
    std::array<char, 4096> buf{};
    std::size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0)
        captured.append(buf.data(), n);
    const int status = ::pclose(p);
    if (out) *out = captured;
    if (err) {
        std::ifstream in(errFile);
        std::stringstream ss;
        ss << in.rdbuf();
        *err = ss.str();
    }
    std::filesystem::remove(errFile);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

nlohmann::json toySystem() {
    return nlohmann::json::parse(R"({
    "id": "toy-system", "gpus_per_node": 8, "reserve_gb": 0,
    "gpu": {"id": "toy-gpu", "peak_tflops": {"bf16": 100}, "hbm_gb": 80, "hbm_tbps": 1,
            "calibration": {"gemm_efficiency": 0.5, "attention_efficiency": 0.5,
                            "memory_efficiency": 1, "kernel_launch_us": 0,
                            "all_to_all_overhead_us": 0}},
    "tiers": [
      {"kind": "scale_up", "gpus": 8, "gbps": 100, "latency_us": 0, "efficiency": 1,
       "all_reduce_speedup": 1},
      {"kind": "scale_out", "gpus": 1024, "gbps": 10, "latency_us": 0, "efficiency": 1}
    ]})");
}

} // namespace madmax::test
