// The MAD-Max artifact's DLRM-A cloud table ('[A] Cloud Provider Results.xlsx', Main Results):
// each provider's GPUs at 64–512 GPUs under FSDP, DDP and TP×DDP, their throughput and what
// 5B and 30B training samples cost in hours, GPU-hours, dollars and energy — reproduced with
// the reference engine (presets/seed/cloud-dlrm-a.json holds the sheet's cells and sources).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

namespace madmax::seed {

/// Hours, GPU-hours, dollars and MWh to train on `samples` at `qps` (the sheet's formulas:
/// time = samples / QPS / 3600; GPU-hours = time × GPUs; cost = GPU-hours × rate; energy =
/// GPU-hours × node power per GPU / 1e6).
struct TrainingCost {
    double hours = 0, gpuHours = 0, costUsd = 0, energyMwh = 0;
};
TrainingCost trainingCost(double samples, double qps, int gpus, double pricePerGpuHour,
                          double powerPerGpuW);

struct CloudTableRow {
    int sheetRow = 0;
    std::string provider, gpu, strategy, system; ///< strategy: fsdp, ddp or tp_ddp
    int gpus = 0;
    double pricePerGpuHour = 0, powerPerGpuW = 0;
    double publishedQps = 0;
    bool publishedExact = false; ///< printed with decimals; else rounded to the nearest 10,000
    TrainingCost published5b, published30b;
    double referenceQps = 0;       ///< the reference engine on the row's system and task
    TrainingCost reference5b, reference30b;
};

/// The reference code's cloud task for one row: dlrm_train_cloud (global batch 65,536,
/// embeddings model-parallel over every GPU) with the MLPs fsdp or ddp over all GPUs, or tp over
/// a node's GPUs × ddp across nodes.
nlohmann::json cloudTask(const std::string& strategy, int gpus, int gpusPerNode);

/// Every row of the table (the shipped presets/seed/cloud-dlrm-a.json, or `doc`), run.
std::vector<CloudTableRow> reproduceCloudTable();
std::vector<CloudTableRow> reproduceCloudTable(const nlohmann::json& doc, const std::string& file);

/// As text (a table per row: published and reproduced QPS, 5B-sample cost and energy) or JSON.
std::string formatCloudTable(const std::vector<CloudTableRow>& rows);
nlohmann::json toJson(const std::vector<CloudTableRow>& rows);

} // namespace madmax::seed
