// Converting a DLRM validation case to a scenario: each setting the table does not publish —
// table rows, embedding precision and sharding, the interaction, the optimizer, the launch mode
// and the framework's fixed cost — is inferred by one function here that says what it assumed
// in the case's notes.
#include "madmax/validation.hpp"

#include "validation/case_reading.hpp"
#include "madmax/engine.hpp"
#include "madmax/error.hpp"
#include "madmax/scenario_io.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace madmax {

using namespace validation_detail;

namespace {

/// "22.8B": a parameter count in billions, one decimal.
std::string billions(double params) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1fB", params / 1e9);
    return buf;
}

/// A model preset with as many tables of the case's dim: its rows and embedding parameters.
struct RowCandidate {
    const Preset* preset;
    std::vector<json> rows;
    double params;
};

/// Per-table rows are rarely published; they set memory (and DP tables' gradient volume), not
/// lookup time. Published: `rows` filled. Else the model presets with as many tables of this
/// dim, from which the caller picks (docs/guide/calibration-and-validation.md "Validation").
void dlrmTableRows(const json& e, int tables, int dim, const PresetLibrary& lib,
                   std::vector<json>& rows, std::vector<RowCandidate>& candidates) {
    if (!isNull(e, "rows_per_table") && e["rows_per_table"].is_array()) {
        for (const auto& r : e["rows_per_table"])
            rows.push_back(r);
        if (int(rows.size()) != tables)
            throw InputError("", "model.dlrm.rows_per_table",
                             "lists " + std::to_string(rows.size()) + " tables, but tables is " +
                                 std::to_string(tables) + ": give one row count per table");
        return;
    }
    for (const Preset* p : lib.list(PresetKind::Model)) {
        const json& pd = p->json.value("dlrm", json());
        if (!pd.is_object() || !pd.contains("tables")) continue;
        RowCandidate cand{p, {}, 0.0};
        for (const auto& t : pd["tables"])
            if (t.value("dim", 0) == dim)
                for (int k = 0; k < t.value("count", 1); ++k) {
                    cand.rows.push_back(t.at("rows"));
                    cand.params += t.at("rows").get<double>() * dim;
                }
        if (int(cand.rows.size()) == tables) candidates.push_back(std::move(cand));
    }
    if (candidates.empty())
        throw InputError("", "model.dlrm.rows_per_table",
                         "not published, and no DLRM preset has " + std::to_string(tables) +
                             " tables of dim " + std::to_string(dim));
}

/// The dense shape: MLPs as published; the interaction dot when not published, said.
json dlrmCaseShape(const json& e) {
    json dlrm = {{"dense_features", e.at("dense_features")},
                 {"bottom_mlp", e.at("bottom_mlp")},
                 {"top_mlp", e.at("top_mlp")}};
    const std::string inter = isNull(e, "interaction") ? "dot" : e["interaction"].get<std::string>();
    if (isNull(e, "interaction")) note("interaction not published: dot assumed");
    dlrm["interaction"] = inter;
    if (inter == "dcnv2") {
        dlrm["dcn_layers"] = e.at("dcn_layers");
        dlrm["dcn_low_rank"] = isNull(e, "dcn_low_rank") ? json(0) : e["dcn_low_rank"];
    }
    return dlrm;
}

/// The embedding sharding: as published where the schema names one the engine runs (for every
/// table); else the DLRM examples' model-parallel tables, table-wise (one GPU: all local),
/// column-wise for a table bigger than one GPU. Returns "tw" or the published kind, and
/// whether it was published.
std::pair<std::string, bool> inferEmbSharding(const json& par, int gpus) {
    if (gpus > 1 && !isNull(par, "emb_sharding")) {
        static const std::map<std::string, std::string> kinds = {
            {"table_wise", "tw"}, {"row_wise", "rw"}, {"column_wise", "cw"},
            {"table_row_wise", "twrw"}, {"data_parallel", "dp"}};
        const json& v = par.at("emb_sharding");
        const auto k = v.is_string() ? kinds.find(v.get<std::string>()) : kinds.end();
        if (k != kinds.end()) {
            note("embedding sharding: " + v.get<std::string>() + " for every table, as published");
            return {k->second, true};
        }
        note("embedding sharding published as " + v.dump() +
             ", not one the engine runs as stated (table_wise, row_wise, column_wise, "
             "table_row_wise, data_parallel): table-wise assumed, column-wise for a table "
             "bigger than one GPU");
    } else if (gpus > 1) {
        note("embedding sharding: table-wise (the examples' model-parallel tables), column-wise "
             "for a table bigger than one GPU");
    }
    return {"tw", false};
}

/// The optimizer: a case's own `optimizer` (this project's extension of the schema: "sgd" or
/// "adam", for the MLPs and the tables alike), else SGD, the NVIDIA DLRM examples'.
std::string inferDlrmOptimizer(const json& c, const std::string& file) {
    if (isNull(c, "optimizer")) {
        note("optimizer not published: SGD for tables and MLPs (the NVIDIA DLRM examples')");
        return "sgd";
    }
    const json& o = c.at("optimizer");
    if (!o.is_string() || (o != "sgd" && o != "adam"))
        throw InputError(file, "case " + c.at("id").get<std::string>() + ".optimizer",
                         "expected \"sgd\" or \"adam\", got " + o.dump());
    note("optimizer: " + o.get<std::string>() + " for tables and MLPs, as the case states");
    return o.get<std::string>();
}

/// How the framework launches kernels, from the source's title (docs/guide/calibration-and-
/// validation.md "Validation"): TensorFlow runs the step as a graph (tf.function, XLA), not op
/// by op from Python; the PyTorch DLRM examples (NVIDIA's of 2020, Naumov et al.'s reference)
/// keep one embedding module per table and launch eagerly; others are taken as eager with
/// fused tables.
void inferLaunchMode(const json& c, json& strategy) {
    const json& src = c.value("source", json::object());
    const std::string title = src.is_object() ? src.value("title", "") : "";
    if (title.find("TensorFlow") != std::string::npos) {
        strategy["cuda_graphs"] = true;
        note("launches: TensorFlow runs the step as a graph (tf.function, XLA), so no host "
             "launch bound");
    } else if (title.find("PyTorch") != std::string::npos &&
               title.find("TorchRec") == std::string::npos) {
        strategy["emb_kernels"] = "per_table";
        note("launches: eager PyTorch with one embedding module per table (the PyTorch DLRM "
             "examples' nn.Embedding list)");
    } else {
        note("launches not published: eager, one fused kernel for all tables");
    }
}

/// A DLRM case as a scenario document waiting for its tables' rows.
struct DlrmCaseDoc {
    const json& c;
    const json& e;
    const json& par;
    const std::string& file;
    json doc = json::object();
    int tables = 0, dim = 0, gpus = 0;
    std::string embPrec = "fp32", embSharding = "tw", where = "";
    bool shardingPublished = false;
};

/// The scenario with these table rows. A published sharding runs as the source ran it (a table
/// it cannot take names the field); otherwise table-wise, except a table bigger than one GPU:
/// split column-wise (distributed-embeddings' column slicing; TorchRec would shard it too).
Scenario buildDlrmScenario(DlrmCaseDoc& d, const std::vector<json>& rowsOf) {
    const json& e = d.e;
    json tabs = json::array();
    for (int t = 0; t < d.tables; ++t) {
        double pooling = isNull(e, "pooling") ? 1.0 : e["pooling"].get<double>();
        if (!isNull(e, "pooling_per_table")) pooling = e["pooling_per_table"].at(t).get<double>();
        tabs.push_back({{"name", "C" + std::to_string(t + 1)},
                        {"rows", rowsOf[std::size_t(t)]},
                        {"dim", d.dim},
                        {"pooling", pooling},
                        {"precision", d.embPrec}});
    }
    d.doc["model"]["dlrm"]["tables"] = tabs;
    d.doc["strategy"]["emb_sharding"] = d.embSharding;
    if (d.shardingPublished) {
        try {
            return parseScenario(d.doc, d.where);
        } catch (const InputError& err) {
            if (err.message().find("emb_sharding") == std::string::npos &&
                err.path().find("strategy.emb_sharding") == std::string::npos)
                throw;
            throw InputError(d.file, casePath(d.c, "parallel.emb_sharding"),
                             "published " + d.par.at("emb_sharding").dump() + ", but " +
                                 err.message() + " (table_wise, data_parallel)");
        }
    }
    Scenario out = parseScenario(d.doc, d.where);
    // Sizes as parsed (the table's precision) against the GPU's HBM as resolved (the case's,
    // else its preset's).
    json sharding = json::array();
    bool sliced = false;
    for (const EmbeddingTableGroup& t : out.model.dlrm.tables) {
        const bool big =
            d.gpus > 1 && double(t.rows) * t.dim * t.bytesPerElement > out.system.gpu.hbmBytes;
        sharding.push_back(big ? "cw" : "tw");
        sliced = sliced || big;
    }
    if (!sliced) return out;
    d.doc["strategy"]["emb_sharding"] = sharding;
    return parseScenario(d.doc, d.where);
}

/// Unpublished rows: the preset whose parameter count matches the published one, or else (the
/// run did fit) the largest under which it fits, said.
Scenario pickTableRows(DlrmCaseDoc& d, const json& m, std::vector<RowCandidate>& candidates) {
    if (!isNull(m, "params_billion")) {
        const double published = m["params_billion"].get<double>() * 1e9;
        const RowCandidate* best = &candidates.front();
        for (const RowCandidate& cand : candidates)
            if (std::abs(cand.params - published) < std::abs(best->params - published))
                best = &cand;
        Scenario out = buildDlrmScenario(d, best->rows);
        note("table rows not published: those of the " + best->preset->id + " preset, whose " +
             billions(best->params) + " embedding parameters are nearest the published " +
             billions(published));
        return out;
    }
    std::sort(candidates.begin(), candidates.end(),
              [](const RowCandidate& a, const RowCandidate& b) { return a.params > b.params; });
    Scenario out;
    bool fits = false;
    std::size_t pick = 0;
    for (; pick < candidates.size(); ++pick) { // the largest that fits, else the smallest
        out = buildDlrmScenario(d, candidates[pick].rows);
        fits = peakMemory(out).fits();
        if (fits || pick + 1 == candidates.size()) break;
    }
    note("table rows not published: those of the " + candidates[pick].preset->id + " preset (" +
         billions(candidates[pick].params) + " embedding parameters), " +
         (fits ? "the largest of this shape under which the run fits"
               : "the smallest of this shape (none fits)"));
    return out;
}

Scenario dlrmCaseScenario(const json& c, const PresetLibrary& lib, const std::string& file) {
    const json& m = c.at("model");
    const json& e = m.at("dlrm");
    const json& sys = c.at("system");
    DlrmCaseDoc d{c, e, c.at("parallel"), file};
    d.gpus = intField(sys, "gpus", 0, "system");
    d.tables = intField(e, "tables", 0, "model.dlrm");
    d.dim = intField(e, "embedding_dim", 0, "model.dlrm");
    std::vector<json> rows;
    std::vector<RowCandidate> candidates;
    dlrmTableRows(e, d.tables, d.dim, lib, rows, candidates);
    d.where = file + ": case " + c.at("id").get<std::string>();
    if (!isNull(e, "emb_precision"))
        d.embPrec = e["emb_precision"].get<std::string>();
    else
        note("embedding precision not published: fp32 assumed");
    const json dlrm = dlrmCaseShape(e);
    std::tie(d.embSharding, d.shardingPublished) = inferEmbSharding(d.par, d.gpus);
    const std::string optimizer = inferDlrmOptimizer(c, file);
    const std::string prec = isNull(c, "precision") ? "fp32" : c.at("precision").get<std::string>();
    if (prec == "fp32") note("FP32 GEMMs at the GPU preset's CUDA-core FP32 peak");
    if (prec == "tf32") note("TF32 GEMMs at the GPU preset's tensor-core TF32 peak");
    json strategy = {{"dp", d.gpus}, {"emb_sharding", d.embSharding}};
    inferLaunchMode(c, strategy);
    d.doc = {{"name", c.at("id")},
             {"model", {{"name", m.at("name")}, {"arch", "dlrm"}, {"dlrm", dlrm}}},
             {"system", systemFor(sys, lib, d.gpus)},
             {"gpus", d.gpus},
             {"strategy", strategy},
             {"workload",
              {{"global_batch", d.par.at("global_batch")},
               {"precision", prec},
               {"grad_reduce_precision", prec == "fp32" || prec == "tf32" ? "fp32" : "bf16"},
               {"optimizer", optimizer},
               {"emb_optimizer", optimizer}}}};
    if (candidates.empty()) return buildDlrmScenario(d, rows);
    return pickTableRows(d, m, candidates);
}

/// The framework's measured fixed cost per step for this case (presets/frameworks/
/// step-costs.json): the entry of the case's source, GPU and precision (as parsed), if any.
const json* frameworkStepCost(const json& c, Precision precision) {
    static const json doc = frameworkDoc("step-costs.json");
    const std::string title = sourceTitle(c);
    const std::string gpu = c.at("system").value("gpu", "");
    const std::string prec(toString(precision));
    if (!doc.contains("costs")) return nullptr;
    for (const json& e : doc.at("costs")) // by reference: the entry outlives the call
        if (title.find(e.at("source_title_contains").get<std::string>()) != std::string::npos &&
            e.at("gpu") == gpu && e.at("precision") == prec)
            return &e;
    return nullptr;
}
} // namespace

/// A training loop that reads its batches itself (presets/frameworks/input-loading.json): the
/// entry of the case's source, if any, sets the storage and host-link rates, and says so.
static void applyInputLoading(const json& c, Scenario& out) {
    static const json doc = frameworkDoc("input-loading.json");
    const json* e = entryOfSource(doc, c);
    if (!e) return;
    out.workload.inputReadBytesPerS = e->at("input_read_gbps").get<double>() * 1e9;
    if (out.system.hostLinkBytesPerS <= 0)
        out.system.hostLinkBytesPerS = e->at("host_link_gbps").get<double>() * 1e9;
    char buf[160];
    std::snprintf(buf, sizeof buf,
                  "input loading: synchronous, %.2f GB/s off storage, %.2f GB/s to the GPU "
                  "(presets/frameworks/input-loading.json: ",
                  out.workload.inputReadBytesPerS / 1e9, out.system.hostLinkBytesPerS / 1e9);
    note(buf + e->at("id").get<std::string>() + ": " + e->at("note").get<std::string>() + ")");
}

Scenario dlrmScenarioForCase(const json& c, const PresetLibrary& lib, const std::string& file) {
    rejectRecipe(c, file, "DLRM");
    Scenario out = dlrmCaseScenario(c, lib, file);
    applyInputLoading(c, out);
    const json* cost = frameworkStepCost(c, out.workload.precision);
    if (!cost) return out;
    // The source's own inference latency at a small batch is its framework's fixed cost per
    // step plus a forward pass: take off the forward pass predicted at that batch, on one GPU
    // (lookup and MLP time do not depend on the tables' rows).
    json probe = toJson(out);
    const int batch = cost->at("batch").get<int>();
    probe["gpus"] = 1;
    probe["strategy"]["dp"] = 1;
    probe["strategy"]["emb_sharding"] = "tw";
    probe["workload"]["global_batch"] = batch;
    probe["workload"]["step_overhead_ms"] = 0;
    const double forward = evaluate(parseScenario(probe, file + ": framework cost probe"))
                               .compute.forwardS;
    const double latency = cost->at("latency_s").get<double>();
    char buf[320];
    if (forward >= latency) { // the model is slower than the measurement: say so, add nothing
        std::snprintf(buf, sizeof buf,
                      "framework fixed cost per step: none added, the predicted %.3f ms forward "
                      "pass at batch %d already exceeds the source's %.2f ms inference latency "
                      "(presets/frameworks/step-costs.json: %s)",
                      forward * 1e3, batch, latency * 1e3, cost->at("id").get<std::string>().c_str());
        note(buf);
        return out;
    }
    out.workload.stepOverheadS = latency - forward;
    std::snprintf(buf, sizeof buf,
                  "framework fixed cost per step: %.2f ms, the source's inference latency at "
                  "batch %d (%.2f ms) less its predicted %.3f ms forward pass "
                  "(presets/frameworks/step-costs.json: %s)",
                  out.workload.stepOverheadS * 1e3, batch, latency * 1e3, forward * 1e3,
                  cost->at("id").get<std::string>().c_str());
    note(buf);
    return out;
}



} // namespace madmax
