// The reference-compatible engine against the seed reference code's own outputs
// (tests/data/seed_reference.json, a copy of shared/seed/reference.json: 32 combinations of
// its model, system and task files, run unmodified). Every printed output within 1%.
#include "madmax/error.hpp"
#include "madmax/file_io.hpp"
#include "madmax/seed.hpp"

#include <catch2/catch.hpp>

#include <cmath>

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
