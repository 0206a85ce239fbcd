// Every preset scenario's headline numbers pinned within 0.5% (tests/data/expected_presets.json,
// written by tools/pin-expected.py). The mechanisms behind them are derived by hand in
// test_hand_derived.cpp; this table catches any change to what a user of a preset sees — step
// time, each collective's exposed time, the bubble, memory — so a physics change must be
// deliberate: re-pin and say in the commit why each number moved.
#include "test_support.hpp"

#include <catch2/catch.hpp>

#include <fstream>

using namespace madmax;
using nlohmann::json;

namespace {

json expectedTable() {
    std::ifstream in(std::string(MADMAX_TEST_DATA) + "/expected_presets.json");
    REQUIRE(in.good());
    return json::parse(in);
}

std::string key(ParallelDim d, Collective c) {
    return std::string(toString(d)) + "." + std::string(toString(c));
}

} // namespace

TEST_CASE("Every preset scenario matches its pinned step time, exposed communication, bubble "
          "and memory") {
    const json table = expectedTable();
    const double tol = table.at("tolerance").get<double>();
    const auto ids = PresetLibrary::builtin().ids(PresetKind::Scenario);
    CHECK(ids.size() == table.at("scenarios").size()); // a new preset must be pinned too
    for (const auto& id : ids) {
        INFO("scenario preset " << id);
        REQUIRE(table.at("scenarios").contains(id));
        const json& e = table.at("scenarios").at(id);
        const Result r = evaluate(test::preset(id));
        CHECK(r.stepTimeS == Approx(e.at("step_time_s").get<double>()).epsilon(tol));
        CHECK(r.bubbleS == Approx(e.at("bubble_s").get<double>()).epsilon(tol).margin(1e-12));
        CHECK(r.memory.totalBytes() ==
              Approx(e.at("memory_total_bytes").get<double>()).epsilon(tol));
        CHECK(r.memory.activationsBytes ==
              Approx(e.at("memory_activations_bytes").get<double>()).epsilon(tol));
        const json& exposed = e.at("exposed_comm_s");
        for (int d = 0; d < kParallelDimCount; ++d)
            for (int c = 0; c < kCollectiveCount; ++c) {
                const std::string k = key(ParallelDim(d), Collective(c));
                INFO("exposed " << k);
                const double want = exposed.contains(k) ? exposed.at(k).get<double>() : 0.0;
                CHECK(r.comm[d][c].exposedS == Approx(want).epsilon(tol).margin(1e-9));
            }
    }
}

TEST_CASE("The default preset's activation memory, derived by hand") {
    // Llama 3 70B (h 8192, a 64, g 8, d 128, f 28672, SwiGLU), TP 8 with SP, selective
    // recompute, s 8192, b 1 (Korthikanti et al. 2022 Table 2, generalised to GQA and a gated
    // MLP): per layer (2sbad + 4sbgd + 2sbad + 6sbf + 10sbh) / t = 8192 · 290,816 / 8 =
    // 297,795,584 B. PP 4 × VP 5: 20 layers on the first stage, holding min(p, m) = 4
    // micro-batches × (1 + (p−1)/(p·v)) = 4.6 (Narayanan et al. SC21 §2.2): 27,397,193,728 B.
    const Result r = evaluate(test::preset("default"));
    CHECK(r.memory.activationsBytes == Approx(27397193728.0).epsilon(1e-9));
}
