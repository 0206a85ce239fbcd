#include "madmax/seed_cloud_table.hpp"

#include "../files/embedded_presets.hpp"
#include "madmax/error.hpp"
#include "madmax/file_io.hpp"
#include "madmax/json_reader.hpp"
#include "madmax/seed.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>

namespace madmax::seed {

using nlohmann::json;

TrainingCost trainingCost(double samples, double qps, int gpus, double pricePerGpuHour,
                          double powerPerGpuW) {
    TrainingCost c;
    if (!(qps > 0)) return c;
    c.hours = samples / qps / 3600.0;
    c.gpuHours = c.hours * gpus;
    c.costUsd = c.gpuHours * pricePerGpuHour;
    c.energyMwh = c.gpuHours * powerPerGpuW / 1e6;
    return c;
}

json cloudTask(const std::string& strategy, int gpus, int gpusPerNode) {
    json t = loadFile("tasks", "dlrm_train_cloud");
    const double globalBatch = t.at("local_emb_bs").get<double>();
    json kinds, degrees;
    if (strategy == "fsdp" || strategy == "ddp") {
        kinds = json::array({strategy});
        degrees = json::array({gpus});
    } else if (strategy == "tp_ddp") {
        kinds = json::array({"tp", "ddp"});
        degrees = json::array({gpusPerNode, gpus / gpusPerNode});
    } else {
        throw InputError("", "strategy", "\"" + strategy + "\": use fsdp, ddp or tp_ddp");
    }
    const int dataParallel = degrees.back().get<int>();
    t["name"] = "dlrm_train_cloud_" + strategy + "_" + std::to_string(gpus);
    t["mlp_parallel"] = kinds;
    t["mlp_parallel_degree"] = degrees;
    t["emb_parallel_degree"] = json::array({gpus});
    t["local_mlp_bs"] = static_cast<long long>(globalBatch / dataParallel);
    return t;
}

namespace {

constexpr double kSamples5b = 5e9, kSamples30b = 30e9;

TrainingCost readCost(const nlohmann::json& j, const std::string& file, const std::string& path) {
    if (!j.is_object()) throw InputError(file, path, "expected an object of hours, gpu_hours, cost_usd, energy_mwh");
    ObjectReader r(j, file, path);
    TrainingCost c;
    c.hours = r.number("hours", 0, 1e12);
    c.gpuHours = r.number("gpu_hours", 0, 1e15);
    c.costUsd = r.number("cost_usd", 0, 1e15);
    c.energyMwh = r.number("energy_mwh", 0, 1e12);
    r.finish();
    return c;
}

CloudTableRow readRow(const json& j, const std::string& file, const std::string& path) {
    ObjectReader r(j, file, path);
    CloudTableRow row;
    row.sheetRow = int(r.integer("row", 1, 1 << 20));
    row.provider = r.string("provider", "");
    row.gpu = r.string("gpu", "");
    row.gpus = int(r.integer("gpus", 1, 1 << 24));
    row.strategy = r.choice("strategy", {"fsdp", "ddp", "tp_ddp"}, "fsdp");
    row.system = r.string("system", "");
    r.ignore("config_row");
    r.ignore("hbm_used_gb");
    row.publishedQps = r.number("qps", 0, 1e12, true);
    row.publishedExact = r.boolean("qps_exact", false);
    row.pricePerGpuHour = r.number("price_per_gpu_hour", 0, 1e4);
    row.powerPerGpuW = r.number("power_per_gpu_w", 0, 1e5);
    row.published5b = readCost(r.raw("samples_5b"), file, r.pathOf("samples_5b"));
    row.published30b = readCost(r.raw("samples_30b"), file, r.pathOf("samples_30b"));
    r.finish();
    return row;
}

} // namespace

std::vector<CloudTableRow> reproduceCloudTable(const json& doc, const std::string& file) {
    ObjectReader top(doc, file, "");
    top.choice("schema", {"madmax-seed-cloud-table/1"}, "madmax-seed-cloud-table/1");
    top.ignore("source");
    top.ignore("notes");
    top.ignore("configurations");
    const json& rows = top.raw("rows");
    top.finish();
    if (!rows.is_array()) throw InputError(file, "rows", "expected an array of table rows");
    const Model model = parseModel(loadFile("models", "dlrm_a"), "dlrm_a");
    std::vector<CloudTableRow> out;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const std::string at = "rows[" + std::to_string(i) + "]";
        CloudTableRow row = readRow(rows[i], file, at);
        const System sys = parseSystem(loadFile("systems", row.system), row.system);
        if (sys.devices != row.gpus)
            throw InputError(file, at + ".system",
                             row.system + " has " + std::to_string(sys.devices) +
                                 " devices, the row " + std::to_string(row.gpus));
        const Task task =
            parseTask(cloudTask(row.strategy, row.gpus, sys.devices / sys.nodes), at + ".task");
        row.referenceQps = runReference(model, sys, task, at).throughputQps;
        row.reference5b = trainingCost(kSamples5b, row.referenceQps, row.gpus,
                                       row.pricePerGpuHour, row.powerPerGpuW);
        row.reference30b = trainingCost(kSamples30b, row.referenceQps, row.gpus,
                                        row.pricePerGpuHour, row.powerPerGpuW);
        out.push_back(std::move(row));
    }
    return out;
}

std::vector<CloudTableRow> reproduceCloudTable() {
    const std::string path = "seed/cloud-dlrm-a.json";
    const char* text = detail::embeddedPresetText(path);
    if (!text) throw InputError("presets/" + path, "", "not built in");
    return reproduceCloudTable(parseJsonText(text, "presets/" + path), "presets/" + path);
}

std::string formatCloudTable(const std::vector<CloudTableRow>& rows) {
    std::string out =
        "DLRM-A training on the clouds (MAD-Max artifact, '[A] Cloud Provider Results.xlsx'),\n"
        "reproduced with the reference engine; cost and energy for 5B samples\n\n";
    char line[256];
    std::snprintf(line, sizeof line, "%-8s %-13s %5s %-7s %12s %12s %7s %11s %11s %9s\n",
                  "provider", "GPU", "GPUs", "MLPs", "QPS sheet", "QPS ref", "diff", "$ sheet",
                  "$ ref", "MWh ref");
    out += line;
    for (const auto& r : rows) {
        std::snprintf(line, sizeof line,
                      "%-8s %-13s %5d %-7s %12.2f %12.2f %+6.2f%% %11.0f %11.0f %9.3f\n",
                      r.provider.c_str(), r.gpu.c_str(), r.gpus, r.strategy.c_str(),
                      r.publishedQps, r.referenceQps,
                      100.0 * (r.referenceQps - r.publishedQps) / r.publishedQps,
                      r.published5b.costUsd, r.reference5b.costUsd, r.reference5b.energyMwh);
        out += line;
    }
    out += "\nQPS the sheet prints without decimals are rounded to the nearest 10,000; cost = "
           "GPU-hours x the configuration's hourly rate, energy = GPU-hours x its node TDP per GPU.\n";
    return out;
}

json toJson(const std::vector<CloudTableRow>& rows) {
    auto cost = [](const TrainingCost& c) {
        return json{{"hours", c.hours},
                    {"gpu_hours", c.gpuHours},
                    {"cost_usd", c.costUsd},
                    {"energy_mwh", c.energyMwh}};
    };
    json a = json::array();
    for (const auto& r : rows)
        a.push_back({{"row", r.sheetRow},
                     {"provider", r.provider},
                     {"gpu", r.gpu},
                     {"gpus", r.gpus},
                     {"strategy", r.strategy},
                     {"system", r.system},
                     {"price_per_gpu_hour", r.pricePerGpuHour},
                     {"power_per_gpu_w", r.powerPerGpuW},
                     {"published", {{"qps", r.publishedQps},
                                    {"qps_exact", r.publishedExact},
                                    {"samples_5b", cost(r.published5b)},
                                    {"samples_30b", cost(r.published30b)}}},
                     {"reference", {{"qps", r.referenceQps},
                                    {"samples_5b", cost(r.reference5b)},
                                    {"samples_30b", cost(r.reference30b)}}}});
    return {{"schema", "madmax-seed-cloud-table-result/1"}, {"rows", a}};
}

} // namespace madmax::seed
