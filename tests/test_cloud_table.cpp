// The MAD-Max artifact's DLRM-A cloud table ('[A] Cloud Provider Results.xlsx', Main Results,
// rows 23-135; presets/seed/cloud-dlrm-a.json holds its cells) reproduced by the reference
// engine, and its prices and power carried by the 61 cloud system files.
#include "madmax/engine.hpp"
#include "madmax/error.hpp"
#include "madmax/presets.hpp"
#include "madmax/scenario_io.hpp"
#include "madmax/seed.hpp"
#include "madmax/seed_cloud_table.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>

using namespace madmax;

TEST_CASE("The artifact's DLRM-A cloud table: every row's QPS from the reference engine") {
    const auto rows = seed::reproduceCloudTable();
    REQUIRE(rows.size() == 113);
    int exact = 0;
    for (const auto& r : rows) {
        INFO("sheet row " << r.sheetRow << " " << r.provider << " " << r.gpu << " " << r.gpus
                          << " " << r.strategy << " on " << r.system << ": sheet "
                          << r.publishedQps << ", reference " << r.referenceQps);
        if (r.publishedExact) {
            // Printed as the reference code computed it (two decimals): the same number.
            ++exact;
            CHECK(r.referenceQps == Approx(r.publishedQps).epsilon(1e-6));
            // And so the cost and energy columns, within 1% (they agree to 1e-6).
            CHECK(r.reference5b.costUsd == Approx(r.published5b.costUsd).epsilon(0.01));
            CHECK(r.reference30b.energyMwh == Approx(r.published30b.energyMwh).epsilon(0.01));
        } else {
            // The sheet rounds the others to the nearest 10,000 QPS.
            CHECK(std::round(r.referenceQps / 1e4) * 1e4 == r.publishedQps);
        }
    }
    CHECK(exact == 20); // the no-NVLink and 16-GPU-node systems, printed with decimals
}

TEST_CASE("The cloud table's cost and energy columns follow its formulas from its QPS") {
    // Time = samples / QPS / 3600; GPU-hours × the configuration's rate; × its node TDP per GPU.
    // e.g. Cloud_A H100 (8 × $12.29 = $98.32/h for p5.48xlarge, 1,275 W per GPU), 64 GPUs,
    // FSDP at 590,000 QPS: 5e9 / 590,000 / 3600 = 2.3540 h, 150.66 GPU-h, $1,851.60, 0.19209 MWh.
    const auto c = seed::trainingCost(5e9, 590000, 64, 12.29, 1275);
    CHECK(c.hours == Approx(2.3540489642184559));
    CHECK(c.gpuHours == Approx(150.65913370998118));
    CHECK(c.costUsd == Approx(1851.6007532956685));
    CHECK(c.energyMwh == Approx(0.19209039548022599));
    for (const auto& r : seed::reproduceCloudTable()) {
        INFO("sheet row " << r.sheetRow);
        const auto p5 = seed::trainingCost(5e9, r.publishedQps, r.gpus, r.pricePerGpuHour,
                                           r.powerPerGpuW);
        const auto p30 = seed::trainingCost(30e9, r.publishedQps, r.gpus, r.pricePerGpuHour,
                                            r.powerPerGpuW);
        CHECK(p5.costUsd == Approx(r.published5b.costUsd).epsilon(1e-9));
        CHECK(p5.energyMwh == Approx(r.published5b.energyMwh).epsilon(1e-9));
        CHECK(p30.gpuHours == Approx(r.published30b.gpuHours).epsilon(1e-9));
        CHECK(p30.costUsd == Approx(r.published30b.costUsd).epsilon(1e-9));
    }
}

TEST_CASE("The 61 cloud system files carry the workbook's price and power per GPU") {
    int clouds = 0;
    for (const auto& id : seed::builtinIds("systems")) {
        if (id.rfind("cloud_", 0) != 0) continue;
        ++clouds;
        INFO(id);
        const seed::System s = seed::parseSystem(seed::loadFile("systems", id), id);
        CHECK(s.pricePerGpuHour > 0);
        CHECK(s.powerPerGpuW > 0);
    }
    CHECK(clouds == 61);
    // GPU Configurations row 10: Cloud_A H100 - 80GB, $98.32/h per node of 8, node TDP
    // 8 × 700 W + 4,600 W = 10,200 W, 1,275 W per GPU.
    const seed::System h = seed::parseSystem(seed::loadFile("systems", "cloud_A_h100.80_64"), "s");
    CHECK(h.pricePerGpuHour == Approx(12.29));
    CHECK(h.powerPerGpuW == Approx(1275));
    // Row 11: Cloud_B V100 16 GB without NVLink, $13.46/h per node of 4.
    const seed::System v = seed::parseSystem(seed::loadFile("systems", "cloud_B_v100.16_512"), "s");
    CHECK(v.pricePerGpuHour == Approx(13.46 / 4));
    // The price reaches a converted native scenario (its dollar fronts read it).
    std::vector<std::string> assumed;
    const auto doc = seed::toScenarioJson(seed::parseModel(seed::loadFile("models", "llama2_70b"), "m"),
                                          h, seed::parseTask(seed::loadFile("tasks", "llm_train"), "t"),
                                          PresetLibrary::builtin(), assumed);
    CHECK(doc.at("system").at("price_per_gpu_hour").get<double>() == Approx(12.29));
}

TEST_CASE("A cloud table whose row names the wrong system is refused with the row's field") {
    nlohmann::json doc = {{"schema", "madmax-seed-cloud-table/1"}, {"rows", nlohmann::json::array()}};
    nlohmann::json row = {{"row", 65}, {"provider", "Cloud_A"}, {"gpu", "H100-80GB"}, {"gpus", 64},
                          {"strategy", "fsdp"}, {"system", "cloud_A_h100.80_128"},
                          {"qps", 590000}, {"qps_exact", false}, {"price_per_gpu_hour", 12.29},
                          {"power_per_gpu_w", 1275},
                          {"samples_5b", {{"hours", 1}, {"gpu_hours", 1}, {"cost_usd", 1}, {"energy_mwh", 1}}},
                          {"samples_30b", {{"hours", 1}, {"gpu_hours", 1}, {"cost_usd", 1}, {"energy_mwh", 1}}}};
    doc["rows"].push_back(row);
    CHECK_THROWS_WITH(seed::reproduceCloudTable(doc, "t.json"),
                      Catch::Contains("rows[0].system") && Catch::Contains("128 devices"));
    doc["rows"][0]["system"] = "cloud_A_h100.80_64";
    doc["rows"][0]["strategy"] = "zero3";
    CHECK_THROWS_WITH(seed::reproduceCloudTable(doc, "t.json"), Catch::Contains("strategy"));
    doc["rows"][0]["strategy"] = "fsdp";
    doc["rows"][0]["qps"] = -1;
    CHECK_THROWS_WITH(seed::reproduceCloudTable(doc, "t.json"), Catch::Contains("rows[0].qps"));
}
