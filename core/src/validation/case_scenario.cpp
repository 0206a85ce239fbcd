// Converting a validation case to a scenario: a training case (dense, MoE, ViT, fine-tuning),
// a DLRM case, a serving case; each setting the table does not publish is inferred and said in
// the case's notes.
#include "madmax/validation.hpp"

#include "validation/case_reading.hpp"
#include "madmax/collectives.hpp"
#include "madmax/engine.hpp"
#include "madmax/error.hpp"
#include "madmax/file_io.hpp"
#include "madmax/json_reader.hpp"
#include "madmax/pipeline.hpp"
#include "madmax/scenario_io.hpp"

#include <algorithm>
#include <optional>
#include <cctype>
#include <cmath>
#include <map>
#include <cstdio>
#include <numeric>

namespace madmax {

using namespace validation_detail;

namespace {
/// The case's parallel.pp_schedule ("" when null): 1f1b, interleaved, gpipe, zero_bubble or
/// dualpipe, else an error naming the field.
std::string casePipelineSchedule(const json& c, const json& par, const std::string& file) {
    if (isNull(par, "pp_schedule")) return "";
    const json& ps = par.at("pp_schedule");
    for (const char* known : {"1f1b", "interleaved", "gpipe", "zero_bubble", "dualpipe"})
        if (ps.is_string() && ps == known) return known;
    throw InputError(file, casePath(c, "parallel.pp_schedule"),
                     "expected 1f1b, interleaved, gpipe, zero_bubble, dualpipe or null, got " +
                         ps.dump());
}

/// The schedule a pipelined case ran: a one-chunk schedule it names (zero-bubble, DualPipe) is
/// costed as itself; otherwise the one its chunks per GPU imply.
std::string caseSchedule(const json& par, int vp) {
    const json* named = par.contains("pp_schedule") ? &par.at("pp_schedule") : nullptr;
    if (named && named->is_string() && (*named == "dualpipe" || *named == "zero_bubble"))
        return named->get<std::string>();
    return std::string(toString(scheduleForChunks(vp)));
}
} // namespace


Scenario scenarioForCase(const json& c, const PresetLibrary& lib, const std::string& file) {
    const json& m = c.at("model");
    const json& sys = c.at("system");
    const json& par = c.at("parallel");
    const int gpus = intField(sys, "gpus", 0, "system");

    json model = modelFor(m, lib);

    const int tp = intField(par, "tp", 1, "parallel"), pp = intField(par, "pp", 1, "parallel"),
              cp = intField(par, "cp", 1, "parallel");
    // A vocabulary TP does not divide: padded as Megatron-LM does (to a multiple of 128·TP).
    if (model["vocab"].is_number_integer() && model["vocab"].get<long long>() % tp != 0) {
        const long long v = model["vocab"].get<long long>(), pad = 128LL * tp;
        model["vocab"] = (v + pad - 1) / pad * pad;
        note("vocabulary " + std::to_string(v) + " padded to " + model["vocab"].dump() +
             " (a multiple of 128·TP)");
    }
    const int layers = intField(m, "layers", 0, "model");
    json strategy = {{"tp", tp},
                     {"pp", pp},
                     {"cp", cp},
                     {"dp", isNull(par, "dp") ? json(dataParallelDegree(gpus, tp, pp, cp)) : par.at("dp")},
                     // Defaults for unpublished fields, stated in docs/guide/calibration-and-validation.md "Validation".
                     {"micro_batch", num(par, "microbatch", 1)},
                     {"zero_stage", num(par, "zero_stage", 1)},
                     {"recompute", isNull(par, "recompute") ? json("none") : par.at("recompute")},
                     {"sequence_parallel", isNull(par, "sequence_parallel")
                                               ? json(tp > 1)
                                               : par.at("sequence_parallel")}};
    // Published knobs are read: gradient reduction overlapped with the backward or not.
    if (!isNull(par, "dp_overlap")) strategy["dp_overlap"] = par.at("dp_overlap");
    // A published gradient-accumulation count that the batch sizes contradict is said: the
    // engine takes global batch / (DP · micro-batch), from the published degrees.
    const int gradAccum = intField(par, "grad_accum", 0, "parallel");
    if (gradAccum > 0 && strategy["dp"].is_number() && strategy["micro_batch"].is_number() &&
        par.contains("global_batch") && par.at("global_batch").is_number() &&
        strategy["dp"].get<double>() > 0 && strategy["micro_batch"].get<double>() > 0) {
        const double derived = par.at("global_batch").get<double>() /
                               (strategy["dp"].get<double>() * strategy["micro_batch"].get<double>());
        const double published = gradAccum;
        if (std::fabs(derived - published) > 1e-9) {
            char buf[200];
            std::snprintf(buf, sizeof buf,
                          "published grad_accum %g disagrees with global_batch / (dp x "
                          "micro_batch) = %g; the batch and degrees were taken as published",
                          published, derived);
            note(buf);
        }
    }
    // Unpublished ones are said, with what was taken in their place.
    if (isNull(par, "microbatch")) note("micro-batch not published: 1 assumed");
    // FSDP shards parameters, gradients and optimizer state over the data-parallel ranks:
    // ZeRO stage 3 (Megatron-FSDP's optim_grads_params, PyTorch FSDP's FULL_SHARD).
    bool fsdp = false;
    if (!isNull(par, "fsdp")) {
        const json& f = par.at("fsdp");
        if (f.is_boolean()) fsdp = f.get<bool>();
        else if (f.is_number_integer() && (f.get<long long>() == 0 || f.get<long long>() == 1))
            fsdp = f.get<long long>() == 1; // the tables' FSDP column: 1 = FSDP, 0 = DDP
        else
            throw InputError(file, casePath(c, "parallel.fsdp"),
                             "expected true, false, 0, 1 or null, got " + f.dump());
    }
    if (fsdp) {
        if (!isNull(par, "zero_stage") && num(par, "zero_stage", 3) != 3)
            throw InputError(file, casePath(c, "parallel.zero_stage"),
                             "fsdp is true, which shards parameters (ZeRO stage 3), but zero_stage "
                             "is " + par.at("zero_stage").dump() + ": give 3 or null");
        strategy["zero_stage"] = 3;
        note("FSDP: parameters, gradients and optimizer state sharded over data parallelism "
             "(ZeRO stage 3)");
    } else if (isNull(par, "zero_stage")) {
        note("ZeRO stage not published: 1 (the distributed optimizer) assumed");
    }
    if (model.value("arch", "dense") == "moe") {
        strategy["ep"] = intField(par, "ep", 1, "parallel");
        strategy["etp"] = intField(par, "etp", 1, "parallel");
        // The dispatcher the framework's recipe runs (presets/frameworks/moe-dispatchers.json:
        // Megatron-Bridge's flex dispatcher, DeepEP / HybridEP, unless the model's recipe sets
        // Megatron-Core's flat one) — docs/guide/calibration-and-validation.md "Validation".
        if (const json* d = moeDispatcherFor(c, lib)) {
            strategy["moe_dispatcher"] = d->at("dispatcher");
            note("dispatcher not published: " + d->at("dispatcher").get<std::string>() + " (" +
                 d->at("note").get<std::string>() + ")");
        }
        const json& e = m.at("moe");
        if (e.value("routing", "") != "force_balanced")
            note("load imbalance 1.0 assumed (routing not stated as force-balanced)");
    }
    const std::string published = casePipelineSchedule(c, par, file);
    if (published == "gpipe" && pp > 1)
        note("pp_schedule gpipe: costed as 1F1B, whose bubble is the same (p - 1) / m; "
             "GPipe's memory, all micro-batches' activations held, is not modelled");
    const bool interleaved = published == "interleaved";
    int vp = intField(par, "vp", interleaved ? 2 : 1, "parallel");
    if (interleaved && isNull(par, "vp")) note("virtual stages not published: 2 assumed");
    if (pp > 1) {
        strategy["schedule"] = caseSchedule(par, vp);
        if (layers % pp != 0) {
            // Uneven split: middle stages take ceil(l/p); first and last share the rest.
            const int middle = (layers + pp - 1) / pp;
            const int rest = layers - (pp - 2) * middle;
            strategy["first_stage_layers"] = rest / 2;
            strategy["last_stage_layers"] = rest - rest / 2;
        } else if (layers % (pp * vp) != 0) {
            vp = 1;
            strategy["schedule"] = "1f1b";
        }
        strategy["vp"] = vp;
    }
    const std::string prec = isNull(c, "precision") ? "bf16" : c.at("precision").get<std::string>();
    json system = systemFor(sys, lib, gpus);
    // The attention kernel is never published in these tables: assume the one the matching
    // GPU generation's calibration runs used (docs/guide/calibration-and-validation.md "Validation").
    const json& cal = system["gpu"]["calibration"];
    const std::string attention = cal.value("reference_attention", "flash");
    json workload = {{"global_batch", par.at("global_batch")},
                     {"seq_len", m.at("seq_len")},
                     {"precision", prec},
                     {"attention", attention}};
    if ((prec == "fp8" || prec == "fp4") && !isNull(c, "fp8_scaling")) {
        // Our extension of the schema: the recipe where the source names it (Megatron-Bridge's
        // "FP8-CS" is current scaling, "FP8-MX" block scaling).
        workload["fp8_scaling"] = c.at("fp8_scaling");
    } else if (prec == "fp8" || prec == "fp4") {
        // The scaling recipe is not published per row: block scaling (MXFP8/NVFP4) where the
        // GPU has block-scaled tensor cores (an FP4 peak: Blackwell), else Transformer Engine's
        // delayed scaling (docs/guide/calibration-and-validation.md "Validation").
        // Megatron-Bridge's tables are the exception on Hopper: their Precision column names
        // FP8-CS (current scaling) for every DGX-H100 row, the one FP8 recipe its H100
        // configurations run.
        const bool block = system["gpu"].contains("peak_tflops") &&
                           system["gpu"]["peak_tflops"].value("fp4", json()).is_number();
        const json& src = c.value("source", json::object());
        const bool megatronBridge =
            src.is_object() && src.value("title", "").find("Megatron-Bridge") != std::string::npos;
        const char* scaling = block ? "block" : megatronBridge ? "current" : "delayed";
        workload["fp8_scaling"] = scaling;
        note(std::string("FP8 scaling not published: ") +
             (block ? "block (MXFP8)" : megatronBridge ? "current (Megatron-Bridge's FP8-CS)" : "delayed") +
             " assumed");
    }
    json doc = {{"name", c.at("id")}, {"model", model},       {"system", system},
                {"gpus", gpus},       {"strategy", strategy}, {"workload", workload}};
    const std::string where = file + ": case " + c.at("id").get<std::string>();
    if (!isNull(par, "recompute") || model.value("arch", "dense") != "moe") {
        Scenario out = parseScenario(doc, where); // dense rows: "none" when not published
        noteIfOverCapacity(out);
        return out;
    }
    // MoE rows (Megatron-Bridge recipes recompute modules to fit; the table does not say
    // which): the run did fit in memory, so take the least recompute under which it fits
    // (none, then selective, then full recompute of the first 1, 2, … layers of each model
    // chunk, then of every layer) — docs/guide/calibration-and-validation.md "Validation".
    Scenario out;
    bool fits = false;
    for (const char* r : {"none", "selective", "full"}) {
        doc["strategy"]["recompute"] = r;
        out = parseScenario(doc, where);
        if ((fits = peakMemory(out).fits())) break;
        if (std::string_view(r) != "selective") continue;
        // Between selective and every layer: the fewest layers per chunk recomputed in full.
        doc["strategy"]["recompute"] = "full";
        const int chunk = largestChunkLayers(out);
        for (int n = 1; n < chunk && !fits; ++n) {
            doc["strategy"]["recompute_layers"] = n;
            out = parseScenario(doc, where);
            fits = peakMemory(out).fits();
        }
        if (fits) break;
        doc["strategy"].erase("recompute_layers");
    }
    if (fits)
        note("recompute not published: " + recomputeLabel(out.strategy) +
             ", the least under which the run fits");
    else
        noteIfOverCapacity(out);
    // Dropless routing syncs the host after every router, so the launch mode matters here.
    note("CUDA graphs not published: eager launches assumed (docs/reference/scenario.md \"The host launch bound\")");
    return out;
}

/// "22.8B": a parameter count in billions, one decimal.
std::string billions(double params) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1fB", params / 1e9);
    return buf;
}

namespace {
Scenario dlrmCaseScenario(const json& c, const PresetLibrary& lib, const std::string& file) {
    const json& m = c.at("model");
    const json& e = m.at("dlrm");
    const json& sys = c.at("system");
    const json& par = c.at("parallel");
    const int gpus = intField(sys, "gpus", 0, "system");
    const int tables = intField(e, "tables", 0, "model.dlrm");
    const int dim = intField(e, "embedding_dim", 0, "model.dlrm");
    // Per-table rows are rarely published; they set memory (and DP tables' gradient volume),
    // not lookup time. Unpublished: those of a model preset with as many tables of this dim —
    // the one whose parameter count matches the published one, or else (the run did fit) the
    // largest under which it fits (docs/guide/calibration-and-validation.md "Validation").
    struct Candidate {
        const Preset* preset;
        std::vector<json> rows;
        double params;
    };
    std::vector<json> rows;
    std::vector<Candidate> candidates;
    if (!isNull(e, "rows_per_table") && e["rows_per_table"].is_array()) {
        for (const auto& r : e["rows_per_table"])
            rows.push_back(r);
        if (int(rows.size()) != tables)
            throw InputError("", "model.dlrm.rows_per_table",
                             "lists " + std::to_string(rows.size()) + " tables, but tables is " +
                                 std::to_string(tables) + ": give one row count per table");
    } else {
        for (const Preset* p : lib.list(PresetKind::Model)) {
            const json& pd = p->json.value("dlrm", json());
            if (!pd.is_object() || !pd.contains("tables")) continue;
            Candidate cand{p, {}, 0.0};
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
    const std::string where = file + ": case " + c.at("id").get<std::string>();
    std::string embPrec = "fp32";
    if (!isNull(e, "emb_precision"))
        embPrec = e["emb_precision"].get<std::string>();
    else
        note("embedding precision not published: fp32 assumed");
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
    // The embedding sharding: as published where the schema names one the engine runs (for
    // every table); else the DLRM examples' model-parallel tables, table-wise (one GPU: all
    // local), column-wise for a table bigger than one GPU.
    std::string embSharding = "tw";
    bool shardingPublished = false;
    if (gpus > 1 && !isNull(par, "emb_sharding")) {
        static const std::map<std::string, std::string> kinds = {
            {"table_wise", "tw"}, {"row_wise", "rw"}, {"column_wise", "cw"},
            {"table_row_wise", "twrw"}, {"data_parallel", "dp"}};
        const json& v = par.at("emb_sharding");
        const auto k = v.is_string() ? kinds.find(v.get<std::string>()) : kinds.end();
        if (k != kinds.end()) {
            embSharding = k->second;
            shardingPublished = true;
            note("embedding sharding: " + v.get<std::string>() + " for every table, as published");
        } else {
            note("embedding sharding published as " + v.dump() +
                 ", not one the engine runs as stated (table_wise, row_wise, column_wise, "
                 "table_row_wise, data_parallel): table-wise assumed, column-wise for a table "
                 "bigger than one GPU");
        }
    } else if (gpus > 1) {
        note("embedding sharding: table-wise (the examples' model-parallel tables), column-wise "
             "for a table bigger than one GPU");
    }
    // The optimizer: a case's own `optimizer` (this project's extension of the schema: "sgd"
    // or "adam", for the MLPs and the tables alike), else SGD, the NVIDIA DLRM examples'.
    std::string optimizer = "sgd";
    if (!isNull(c, "optimizer")) {
        const json& o = c.at("optimizer");
        if (!o.is_string() || (o != "sgd" && o != "adam"))
            throw InputError(file, "case " + c.at("id").get<std::string>() + ".optimizer",
                             "expected \"sgd\" or \"adam\", got " + o.dump());
        optimizer = o.get<std::string>();
        note("optimizer: " + optimizer + " for tables and MLPs, as the case states");
    } else {
        note("optimizer not published: SGD for tables and MLPs (the NVIDIA DLRM examples')");
    }
    const std::string prec = isNull(c, "precision") ? "fp32" : c.at("precision").get<std::string>();
    if (prec == "fp32") note("FP32 GEMMs at the GPU preset's CUDA-core FP32 peak");
    if (prec == "tf32") note("TF32 GEMMs at the GPU preset's tensor-core TF32 peak");
    // How the framework launches kernels, from the source's title (docs/guide/calibration-and-validation.md "Validation"):
    // TensorFlow runs the step as a graph (tf.function, XLA), not op by op from Python; the
    // PyTorch DLRM examples (NVIDIA's of 2020, Naumov et al.'s reference) keep one embedding
    // module per table and launch eagerly; others are taken as eager with fused tables.
    json strategy = {{"dp", gpus}, {"emb_sharding", embSharding}};
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
    json doc = {{"name", c.at("id")},
                {"model", {{"name", m.at("name")}, {"arch", "dlrm"}, {"dlrm", dlrm}}},
                {"system", systemFor(sys, lib, gpus)},
                {"gpus", gpus},
                {"strategy", strategy},
                {"workload",
                 {{"global_batch", par.at("global_batch")},
                  {"precision", prec},
                  {"grad_reduce_precision", prec == "fp32" || prec == "tf32" ? "fp32" : "bf16"},
                  {"optimizer", optimizer},
                  {"emb_optimizer", optimizer}}}};
    auto build = [&](const std::vector<json>& rowsOf) {
        json tabs = json::array();
        for (int t = 0; t < tables; ++t) {
            double pooling = isNull(e, "pooling") ? 1.0 : e["pooling"].get<double>();
            if (!isNull(e, "pooling_per_table")) pooling = e["pooling_per_table"].at(t).get<double>();
            tabs.push_back({{"name", "C" + std::to_string(t + 1)},
                            {"rows", rowsOf[std::size_t(t)]},
                            {"dim", dim},
                            {"pooling", pooling},
                            {"precision", embPrec}});
        }
        doc["model"]["dlrm"]["tables"] = tabs;
        doc["strategy"]["emb_sharding"] = embSharding;
        if (shardingPublished) { // as the source ran it; a table it cannot take names the field
            try {
                return parseScenario(doc, where);
            } catch (const InputError& err) {
                if (err.message().find("emb_sharding") == std::string::npos &&
                    err.path().find("strategy.emb_sharding") == std::string::npos)
                    throw;
                throw InputError(file, casePath(c, "parallel.emb_sharding"),
                                 "published " + par.at("emb_sharding").dump() + ", but " +
                                     err.message() + " (table_wise, data_parallel)");
            }
        }
        Scenario out = parseScenario(doc, where);
        // Table-wise, except a table bigger than one GPU: split column-wise (distributed-
        // embeddings' column slicing; TorchRec would shard it too). Sizes as parsed (the
        // table's precision) against the GPU's HBM as resolved (the case's, else its preset's).
        json sharding = json::array();
        bool sliced = false;
        for (const EmbeddingTableGroup& t : out.model.dlrm.tables) {
            const bool big = gpus > 1 && double(t.rows) * t.dim * t.bytesPerElement >
                                             out.system.gpu.hbmBytes;
            sharding.push_back(big ? "cw" : "tw");
            sliced = sliced || big;
        }
        if (!sliced) return out;
        doc["strategy"]["emb_sharding"] = sharding;
        return parseScenario(doc, where);
    };
    if (candidates.empty()) return build(rows);
    if (!isNull(m, "params_billion")) {
        const double published = m["params_billion"].get<double>() * 1e9;
        const Candidate* best = &candidates.front();
        for (const Candidate& cand : candidates)
            if (std::abs(cand.params - published) < std::abs(best->params - published))
                best = &cand;
        Scenario out = build(best->rows);
        note("table rows not published: those of the " + best->preset->id + " preset, whose " +
             billions(best->params) + " embedding parameters are nearest the published " +
             billions(published));
        return out;
    }
    std::sort(candidates.begin(), candidates.end(),
              [](const Candidate& a, const Candidate& b) { return a.params > b.params; });
    Scenario out;
    bool fits = false;
    std::size_t pick = 0;
    for (; pick < candidates.size(); ++pick) { // the largest that fits, else the smallest
        out = build(candidates[pick].rows);
        fits = peakMemory(out).fits();
        if (fits || pick + 1 == candidates.size()) break;
    }
    note("table rows not published: those of the " + candidates[pick].preset->id + " preset (" +
         billions(candidates[pick].params) + " embedding parameters), " +
         (fits ? "the largest of this shape under which the run fits"
               : "the smallest of this shape (none fits)"));
    return out;
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

Scenario dlrmScenarioForCase(const json& c, const PresetLibrary& lib, const std::string& file) {
    Scenario out = dlrmCaseScenario(c, lib, file);
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


/// A disaggregated or expert-parallel serving case (the DeepSeek-V3/R1 production rows): the
/// pool it measures, EP with its dispatcher and overlap, the prefix-cache share and the prefill
/// chunk, each as the case publishes it. Returns whether the case is one pool of a disaggregated
/// deployment: its batch is then the mean concurrency the source implies, run as given
/// (offline) rather than solved under server limits.
static bool servingDeploymentForCase(const json& c, const json& inf, json& workload, json& strategy) {
    const int ep = intField(inf, "ep", 1, "inference");
    if (ep > 1) {
        strategy["ep"] = ep;
        if (!isNull(inf, "dispatcher")) strategy["moe_dispatcher"] = inf.at("dispatcher");
        if (!isNull(inf, "fp8_dispatch")) strategy["moe_fp8_dispatch"] = inf.at("fp8_dispatch");
        if (!isNull(inf, "two_batch_overlap"))
            strategy["moe_a2a_overlap"] = inf.at("two_batch_overlap");
        if (!isNull(inf, "redundant_experts"))
            strategy["redundant_experts"] = inf.at("redundant_experts");
    }
    for (const char* key : {"prefix_cache_hit", "prefill_chunk_tokens", "draft_tokens",
                            "acceptance_rate"})
        if (!isNull(inf, key)) workload[key] = inf.at(key);
    if (!inf.value("disaggregated", false)) return false;
    if (isNull(inf, "phase"))
        throw InputError("", casePath(c, "inference.phase"),
                         "a disaggregated case names the pool it measures: prefill or decode");
    workload["phase"] = inf.at("phase");
    note("disaggregated " + inf.at("phase").get<std::string>() +
         " pool: its published mean concurrency run as a fixed batch (no server-mode solve)");
    if (isNull(inf, "draft_tokens")) note("speculative decoding / MTP: not stated, none assumed");
    return true;
}

Scenario inferenceScenarioForCase(const json& c, const PresetLibrary& lib,
                                  const std::string& file) {
    const json& m = c.at("model");
    const json& sys = c.at("system");
    const json& inf = c.at("inference");
    const int gpus = intField(sys, "gpus", 0, "system");
    const json model = modelFor(m, lib);
    const int tp = intField(inf, "tp", 1, "inference"), pp = intField(inf, "pp", 1, "inference");
    // Attention data parallelism: every attention-DP rank is its own engine replica.
    const int attentionDp = intField(inf, "attention_dp", 0, "inference");
    const int replicas = intField(
        inf, "replicas", attentionDp > 0 ? attentionDp : dataParallelDegree(gpus, tp, pp, 1),
        "inference");
    // Request lengths: as published; when they vary and are not published, the mean output is
    // the published output tokens per completed request (tokens/s ÷ samples/s), the mean prompt
    // is taken equal to it, and outputs are exponentially distributed (docs/guide/calibration-and-validation.md "Validation").
    json workload = {{"kind", "inference"}};
    if (!isNull(inf, "input_tokens") && !isNull(inf, "output_tokens")) {
        workload["input_tokens"] = inf["input_tokens"];
        workload["output_tokens"] = inf["output_tokens"];
    } else {
        double tokens = 0, samples = 0;
        std::vector<json> all = {c.at("measured")};
        for (const auto& a : c.value("also_measured", json::array()))
            all.push_back(a);
        for (const auto& a : all) {
            if (a.value("metric", "") == "output_tokens_per_s") tokens = a.value("value", 0.0);
            if (a.value("metric", "") == "samples_per_s") samples = a.value("value", 0.0);
        }
        if (tokens <= 0 || samples <= 0)
            throw InputError("", "inference.output_tokens", "request lengths are not published");
        if (!(tokens / samples < double(1 << 24)))
            throw InputError("", "measured", "tokens per request beyond 16M: not a serving run");
        const int mean = int(std::lround(tokens / samples));
        workload["input_tokens"] = mean;
        workload["output_tokens"] = mean;
        workload["output_distribution"] = "exponential";
    }
    if (!isNull(inf, "batch")) workload["batch"] = inf["batch"];
    const std::string prec = isNull(c, "precision") ? "bf16" : c.at("precision").get<std::string>();
    workload["precision"] = prec;
    workload["weight_precision"] = prec;
    if (!isNull(inf, "kv_precision")) {
        workload["kv_precision"] = inf.at("kv_precision");
    } else {
        // Not published: the precision's own, except below 8 bits, where serving stacks keep
        // the KV cache in FP8 (TensorRT-LLM's NVFP4 checkpoints, the serving search's rule).
        const std::string kv = prec == "fp4" ? "fp8" : prec;
        workload["kv_precision"] = kv;
        note("kv_precision not published: " + kv + " assumed" +
             (kv != prec ? " (an FP4 model's KV cache in FP8, as TensorRT-LLM's NVFP4 "
                           "checkpoints ship it)"
                         : " (the run's precision)"));
    }
    json strategy = {{"tp", tp}, {"pp", pp}, {"dp", replicas}};
    const bool pool = servingDeploymentForCase(c, inf, workload, strategy);
    if (!pool && inf.value("scenario", "offline") == "server") {
        // MLPerf Inference server limits for LLMs (TTFT ≤ 2 s, TPOT ≤ 200 ms), as defaults.
        workload["mode"] = "server";
        workload["ttft_objective_s"] = 2.0;
        workload["tpot_objective_s"] = 0.2;
    }
    json doc = {{"name", c.at("id")},
                {"model", model},
                {"system", systemFor(sys, lib, gpus)},
                {"gpus", gpus},
                {"strategy", strategy},
                {"workload", workload}};
    return parseScenario(doc, file + ": case " + c.at("id").get<std::string>());
}

} // namespace madmax
