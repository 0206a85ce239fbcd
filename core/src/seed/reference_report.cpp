// The reference engine's result as JSON (schema madmax-reference-result/1) and as text.
#include "madmax/error.hpp"
#include "madmax/seed.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <unordered_map>

namespace madmax::seed {

nlohmann::json toJson(const ReferenceResult& r, bool traces) {
    nlohmann::json j = {
        {"schema", "madmax-reference-result/1"},
        {"engine", "reference (MAD-Max seed code, reproduced)"},
        {"iteration_time_ms", r.iterationS * 1e3},
        {"throughput_qps", r.throughputQps},
        {"global_batch", r.globalBatch},
        {"gemm_ms", r.gemmS * 1e3},
        {"emb_ms", r.embS * 1e3},
        {"all2all_ms", r.allToAllS * 1e3},
        {"allreduce_ms", r.allReduceS * 1e3},
        {"allgather_ms", r.allGatherS * 1e3},
        {"reducescatter_ms", r.reduceScatterS * 1e3},
        {"exposed_comm_ms", r.exposedCommS * 1e3},
        {"overlapped_comm_ms", r.overlappedCommS * 1e3},
        {"mlp_weights_gb_per_device", r.mlpWeightsBytesPerDevice / 1e9},
        {"emb_weights_gb_per_device", r.embWeightsBytesPerDevice / 1e9},
        {"transformer_weights_gb_per_device", r.transformerWeightsBytesPerDevice / 1e9},
        {"model_total_params_b", r.totalParams / 1e9}};
    if (traces) {
        auto list = [](const std::vector<TraceOp>& ops) {
            nlohmann::json a = nlohmann::json::array();
            for (const auto& o : ops)
                a.push_back({o.name, o.startS * 1e3, o.endS * 1e3});
            return a;
        };
        j["traces"] = {{"comp", list(r.compute)}, {"comm", list(r.comm)}};
    }
    return j;
}

std::string formatReport(const Model& m, const System& s, const Task& t, const ReferenceResult& r) {
    char buf[256];
    std::string o;
    auto line = [&](const char* name, double ms) {
        std::snprintf(buf, sizeof buf, "  %-22s %12.3f ms\n", name, ms);
        o += buf;
    };
    o += "Reference-compatible mode: the MAD-Max seed code's computation, reproduced\n";
    o += "(no latency term, no memory check; see docs/reference/seed-format.md for its conventions)\n\n";
    o += "Model      " + m.name + "\nSystem     " + s.name + " (" + std::to_string(s.devices) +
         " devices, " + std::to_string(s.nodes) + " nodes)\nTask       " + t.name + "\n\n";
    std::snprintf(buf, sizeof buf, "Iteration time       %.3f ms\n", r.iterationS * 1e3);
    o += buf;
    std::snprintf(buf, sizeof buf, "Throughput           %.1f per second (global batch %.0f)\n\n",
                  r.throughputQps, r.globalBatch);
    o += buf;
    o += "Compute\n";
    line("GEMM", r.gemmS * 1e3);
    line("embedding lookups", r.embS * 1e3);
    o += "Communication (serialized)\n";
    line("all-to-all", r.allToAllS * 1e3);
    line("all-reduce", r.allReduceS * 1e3);
    line("all-gather", r.allGatherS * 1e3);
    line("reduce-scatter", r.reduceScatterS * 1e3);
    line("exposed", r.exposedCommS * 1e3);
    line("overlapped", r.overlappedCommS * 1e3);
    o += "Weights per device\n";
    auto gb = [&](const char* name, double bytes) {
        if (bytes <= 0) return;
        std::snprintf(buf, sizeof buf, "  %-22s %12.3f GB\n", name, bytes / 1e9);
        o += buf;
    };
    gb("MLPs", r.mlpWeightsBytesPerDevice);
    gb("embeddings", r.embWeightsBytesPerDevice);
    gb("transformer", r.transformerWeightsBytesPerDevice);
    std::snprintf(buf, sizeof buf, "Parameters           %.3f billion\n", r.totalParams / 1e9);
    o += buf;
    return o;
}

} // namespace madmax::seed
