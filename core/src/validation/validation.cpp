#include "madmax/validation.hpp"

#include "files/embedded_presets.hpp"

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

using nlohmann::json;

namespace {

double num(const json& j, const char* key, double fallback) {
    auto it = j.find(key);
    return it == j.end() || it->is_null() ? fallback : it->get<double>();
}
/// A whole-number field of a case within [lo, hi] (`fallback` when absent or null), else bad
/// input naming it — never a double converted to int out of range.
int intField(const json& j, const char* key, long long fallback, const char* section,
             long long lo = 1, long long hi = 1LL << 30) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return int(fallback);
    const std::string field = std::string(section) + "." + key;
    if (!it->is_number()) throw InputError("", field, "expected a number, got " + it->dump());
    const double v = it->get<double>();
    if (!std::isfinite(v) || v != std::floor(v) || v < double(lo) || v > double(hi))
        throw InputError("", field,
                         "expected a whole number from " + std::to_string(lo) + " to " +
                             std::to_string(hi) + ", got " + it->dump());
    return int(v);
}

/// The path of a case's field in an error: "case <id>: <field>".
std::string casePath(const json& c, const char* field) {
    return "case " + c.at("id").get<std::string>() + ": " + field;
}
bool isNull(const json& j, const char* key) {
    auto it = j.find(key);
    return it == j.end() || it->is_null();
}

/// What each case assumed, collected while it is converted (runValidation sets it per case).
thread_local std::vector<std::string>* tNotes = nullptr;
void note(const std::string& what) {
    if (tNotes && std::find(tNotes->begin(), tNotes->end(), what) == tNotes->end())
        tNotes->push_back(what);
}

/// The GPU preset whose "skus" list names this SKU; else one of the same chip family (the SKU
/// up to its first '-': "A100-SXM4" → an A100 preset), said so; else the generic one, said so.
const Preset& gpuPresetFor(const std::string& sku, const PresetLibrary& lib) {
    const std::string family = sku.substr(0, sku.find('-'));
    const Preset* familyMatch = nullptr;
    for (const Preset* p : lib.list(PresetKind::Gpu)) {
        auto it = p->json.find("skus");
        if (it == p->json.end() || !it->is_array()) continue;
        for (const auto& s : *it) {
            if (!s.is_string()) continue;
            const std::string name = s.get<std::string>();
            if (name == sku) {
                note("calibration " + p->id);
                return *p;
            }
            if (!familyMatch && !family.empty() && name.rfind(family + "-", 0) == 0)
                familyMatch = p;
        }
    }
    if (familyMatch) {
        note("calibration " + familyMatch->id + " (same chip family as " + sku +
             ", which no preset names)");
        return *familyMatch;
    }
    const Preset* generic = lib.find(PresetKind::Gpu, "generic");
    if (!generic) throw InputError("presets/gpus", "generic", "the generic GPU preset is missing");
    note("calibration generic (no preset for the " + family + " family)");
    return *generic;
}

/// System from the case's numbers: GPU datasheet values replace the preset's; one scale-up tier
/// (the NVLink domain) and, beyond it, one scale-out tier.
json systemFor(const json& sys, const PresetLibrary& lib, int gpus) {
    const Preset& gpuPreset = gpuPresetFor(sys.at("gpu").get<std::string>(), lib);
    json gpu = gpuPreset.json;
    gpu["id"] = "case-gpu";
    gpu["name"] = sys.at("gpu");
    const json& peaks = sys.at("peak_tflops");
    const json presetPeaks = gpu.value("peak_tflops", json::object());
    gpu["peak_tflops"] = json::object();
    for (const char* p : {"fp16", "bf16", "fp8", "fp4"})
        gpu["peak_tflops"][p] = isNull(peaks, p) ? json(nullptr) : peaks[p];
    // The schema has no FP32 or TF32 peak: the preset's (CUDA-core FP32 and tensor-core TF32,
    // used by FP32 and TF32 runs only).
    for (const char* p : {"fp32", "tf32"})
        gpu["peak_tflops"][p] =
            isNull(peaks, p) ? presetPeaks.value(p, json(nullptr)) : peaks[p];
    // Unknown HBM size or bandwidth: the preset's, said so (time needs the bandwidth; only the
    // fit verdict needs the size).
    for (const char* key : {"hbm_gb", "hbm_tbps"}) {
        if (!isNull(sys, key)) {
            gpu[key] = sys.at(key);
        } else {
            if (!gpu.contains(key))
                throw InputError("", std::string("system.") + key, "not published, and no preset");
            note(std::string(key) + " not published: the " + gpuPreset.id + " preset's " +
                 gpu[key].dump() + " assumed");
        }
    }
    const int domain = intField(sys, "scaleup_domain", intField(sys, "gpus_per_node", 8, "system"),
                                "system");
    json tiers = json::array();
    tiers.push_back({{"name", "scale-up"},
                     {"kind", "scale_up"},
                     {"gpus", domain},
                     {"gbps", sys.at("scaleup_gbps")}});
    if (gpus > domain) {
        json gbps = isNull(sys, "scaleout_gbps") ? json(nullptr) : sys.at("scaleout_gbps");
        if (gbps.is_null()) {
            // Unknown scale-out bandwidth: that of a system preset built on this GPU, said so.
            for (const Preset* p : lib.list(PresetKind::System)) {
                const json& t = p->json.value("tiers", json::array());
                if (p->json.value("gpu", "") == gpuPreset.id && t.is_array() && t.size() > 1) {
                    gbps = t.back().at("gbps");
                    note("scaleout_gbps not published: the " + p->id + " preset's " + gbps.dump() +
                         " GB/s assumed");
                    break;
                }
            }
        }
        if (gbps.is_null())
            throw InputError("", "system.scaleout_gbps",
                             "needed for a run across nodes, but not published (and no system "
                             "preset uses this GPU)");
        tiers.push_back({{"name", "scale-out"}, {"kind", "scale_out"}, {"gpus", gpus}, {"gbps", gbps}});
    }
    return {{"id", "case-system"},
            {"name", "from case"},
            {"gpu", gpu},
            {"gpus_per_node", intField(sys, "gpus_per_node", 8, "system")},
            {"tiers", tiers}};
}

/// The model preset with the case's shape (arch, layers, hidden, heads), if any: the published
/// tables omit head dimensions, MLA ranks and attention windows, which the preset takes from the
/// model's released config (README "Validation").
const json* shapePresetFor(const json& m, const PresetLibrary& lib) {
    for (const Preset* p : lib.list(PresetKind::Model)) {
        const json& j = p->json;
        if (j.value("arch", "dense") == m.value("arch", "dense") &&
            j.value("layers", -1) == m.value("layers", -2) &&
            j.value("hidden", -1) == m.value("hidden", -2) &&
            j.value("heads", -1) == m.value("heads", -2))
            return &j;
    }
    return nullptr;
}

/// The case's transformer shape (kv_heads null: multi-head attention, or MLA for a preset that
/// has it); MoE cases add their moe block.
json modelFor(const json& m, const PresetLibrary& lib) {
    json out = {{"name", m.at("name")},
                {"layers", m.at("layers")},
                {"hidden", m.at("hidden")},
                {"heads", m.at("heads")},
                {"gated_mlp", m.value("gated_mlp", false)},
                {"vocab", m.at("vocab")}};
    const json* preset = shapePresetFor(m, lib);
    if (preset && preset->contains("mla")) {
        out["mla"] = preset->at("mla");
    } else {
        out["kv_heads"] = isNull(m, "kv_heads") ? m.at("heads") : m.at("kv_heads");
        if (preset && preset->contains("head_dim")) out["head_dim"] = preset->at("head_dim");
    }
    if (preset)
        for (const char* key : {"sliding_window", "sliding_window_every"})
            if (preset->contains(key)) out[key] = preset->at(key);
    if (!isNull(m, "ffn_hidden")) out["ffn_hidden"] = m.at("ffn_hidden");
    if (m.value("arch", "dense") == "moe") {
        const json& e = m.at("moe");
        out["arch"] = "moe";
        // Routing: every MoE row here is force-balanced (load imbalance 1.0, the default).
        json moe = {{"experts", e.at("experts")},
                    {"top_k", e.at("top_k")},
                    {"expert_ffn_hidden", e.at("expert_ffn_hidden")}};
        for (const char* key : {"shared_experts", "dense_layers", "moe_layer_freq", "capacity_factor"})
            if (!isNull(e, key)) moe[key] = e.at(key);
        // Expert biases and the activation's clamp are not in the tables: the model's released
        // config, through its preset.
        if (preset && preset->contains("moe"))
            for (const char* key : {"expert_bias", "glu_clamp"})
                if (preset->at("moe").contains(key)) moe[key] = preset->at("moe").at(key);
        out["moe"] = moe;
    }
    return out;
}

} // namespace

namespace {

/// A file of presets/frameworks/, compiled in (an empty object when absent).
json frameworkDoc(const std::string& name) {
    const std::string path = "frameworks/" + name;
    const char* text = detail::embeddedPresetText(path);
    return text ? parseJsonText(text, "presets/" + path) : json::object();
}

/// The title of a case's source ("" when it has none).
std::string sourceTitle(const json& c) {
    const json& src = c.value("source", json::object());
    return src.is_object() ? src.value("title", "") : "";
}

/// The MoE dispatcher a case's framework ran (presets/frameworks/moe-dispatchers.json): the
/// entry of its source, model (the preset of its shape) and GPU, else the source's default;
/// null when neither names one.
const json* moeDispatcherFor(const json& c, const PresetLibrary& lib) {
    static const json doc = frameworkDoc("moe-dispatchers.json");
    const std::string title = sourceTitle(c);
    const std::string gpu = c.at("system").value("gpu", "");
    const json* shape = shapePresetFor(c.at("model"), lib);
    const std::string model = shape ? shape->value("id", "") : "";
    auto fromSource = [&](const json& e) {
        return title.find(e.at("source_title_contains").get<std::string>()) != std::string::npos;
    };
    // By reference into the static document: the entry outlives the call.
    if (doc.contains("entries"))
        for (const json& e : doc.at("entries"))
            if (fromSource(e) && !model.empty() && e.at("model") == model &&
                (e.at("gpu") == "*" || e.at("gpu") == gpu))
                return &e;
    if (doc.contains("defaults"))
        for (const json& e : doc.at("defaults"))
            if (fromSource(e)) return &e;
    return nullptr;
}

} // namespace

namespace {
/// A published run did fit: when the modelled memory says otherwise, the run saved memory in a
/// way the table does not give (activation offloading, partial recompute) or the memory model
/// over-counts. The prediction stands as published, and says so.
void noteIfOverCapacity(const Scenario& s) {
    const MemoryBreakdown m = peakMemory(s);
    if (m.fits()) return;
    char buf[160];
    std::snprintf(buf, sizeof buf,
                  "does not fit as modelled: %.1f GB of %.1f GB per GPU; predicted as published "
                  "(the run saved memory in a way the table does not give, or the count is high)",
                  m.totalBytes() / 1e9, m.capacityBytes / 1e9);
    note(buf);
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
                     // Defaults for unpublished fields, stated in README "Validation".
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
        // Megatron-Core's flat one) — README "Validation".
        if (const json* d = moeDispatcherFor(c, lib)) {
            strategy["moe_dispatcher"] = d->at("dispatcher");
            note("dispatcher not published: " + d->at("dispatcher").get<std::string>() + " (" +
                 d->at("note").get<std::string>() + ")");
        }
        const json& e = m.at("moe");
        if (e.value("routing", "") != "force_balanced")
            note("load imbalance 1.0 assumed (routing not stated as force-balanced)");
    }
    if (!isNull(par, "pp_schedule")) {
        const json& ps = par.at("pp_schedule");
        if (!ps.is_string() || (ps != "1f1b" && ps != "interleaved" && ps != "gpipe"))
            throw InputError(file, casePath(c, "parallel.pp_schedule"),
                             "expected 1f1b, interleaved, gpipe or null, got " + ps.dump());
        if (ps == "gpipe" && pp > 1)
            note("pp_schedule gpipe: costed as 1F1B, whose bubble is the same (p - 1) / m; "
                 "GPipe's memory, all micro-batches' activations held, is not modelled");
    }
    const bool interleaved = !isNull(par, "pp_schedule") && par["pp_schedule"] == "interleaved";
    int vp = intField(par, "vp", interleaved ? 2 : 1, "parallel");
    if (interleaved && isNull(par, "vp")) note("virtual stages not published: 2 assumed");
    if (pp > 1) {
        strategy["schedule"] = vp > 1 ? "interleaved" : "1f1b";
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
    // GPU generation's calibration runs used (README "Validation").
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
        // delayed scaling (README "Validation").
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
    // chunk, then of every layer) — README "Validation".
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
    note("CUDA graphs not published: eager launches assumed (README \"The host launch bound\")");
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
    // largest under which it fits (README "Validation").
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
    // How the framework launches kernels, from the source's title (README "Validation"):
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


Scenario inferenceScenarioForCase(const json& c, const PresetLibrary& lib,
                                  const std::string& file) {
    const json& m = c.at("model");
    const json& sys = c.at("system");
    const json& inf = c.at("inference");
    const int gpus = intField(sys, "gpus", 0, "system");
    const json model = modelFor(m, lib);
    const int tp = intField(inf, "tp", 1, "inference"), pp = intField(inf, "pp", 1, "inference");
    const int replicas =
        intField(inf, "replicas", dataParallelDegree(gpus, tp, pp, 1), "inference");
    // Request lengths: as published; when they vary and are not published, the mean output is
    // the published output tokens per completed request (tokens/s ÷ samples/s), the mean prompt
    // is taken equal to it, and outputs are exponentially distributed (README "Validation").
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
    workload["kv_precision"] = prec;
    if (inf.value("scenario", "offline") == "server") {
        // MLPerf Inference server limits for LLMs (TTFT ≤ 2 s, TPOT ≤ 200 ms), as defaults.
        workload["mode"] = "server";
        workload["ttft_objective_s"] = 2.0;
        workload["tpot_objective_s"] = 0.2;
    }
    json doc = {{"name", c.at("id")},
                {"model", model},
                {"system", systemFor(sys, lib, gpus)},
                {"gpus", gpus},
                {"strategy", {{"tp", tp}, {"pp", pp}, {"dp", replicas}}},
                {"workload", workload}};
    return parseScenario(doc, file + ": case " + c.at("id").get<std::string>());
}

ErrorStats errorStats(std::vector<double> errs) {
    ErrorStats s;
    s.count = int(errs.size());
    if (errs.empty()) return s;
    std::sort(errs.begin(), errs.end());
    auto quantile = [&](double q) {
        const double pos = q * (errs.size() - 1);
        const std::size_t lo = std::size_t(std::floor(pos)), hi = std::size_t(std::ceil(pos));
        return errs[lo] + (pos - lo) * (errs[hi] - errs[lo]);
    };
    s.medianAbsPct = quantile(0.5);
    s.p90AbsPct = quantile(0.9);
    s.maxAbsPct = errs.back();
    return s;
}

namespace {
std::vector<double> ranks(const std::vector<double>& v) {
    std::vector<std::size_t> idx(v.size());
    std::iota(idx.begin(), idx.end(), 0);
    std::sort(idx.begin(), idx.end(), [&](auto a, auto b) { return v[a] < v[b]; });
    std::vector<double> r(v.size());
    for (std::size_t i = 0; i < idx.size();) {
        std::size_t j = i;
        while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]])
            ++j;
        const double avg = (i + j) / 2.0 + 1.0; // ties share their mean rank
        for (std::size_t k = i; k <= j; ++k)
            r[idx[k]] = avg;
        i = j + 1;
    }
    return r;
}
} // namespace

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
    const auto ra = ranks(a), rb = ranks(b);
    const double n = double(a.size());
    const double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / n;
    const double mb = std::accumulate(rb.begin(), rb.end(), 0.0) / n;
    double cov = 0, va = 0, vb = 0;
    for (std::size_t i = 0; i < ra.size(); ++i) {
        cov += (ra[i] - ma) * (rb[i] - mb);
        va += (ra[i] - ma) * (ra[i] - ma);
        vb += (rb[i] - mb) * (rb[i] - mb);
    }
    return va > 0 && vb > 0 ? cov / std::sqrt(va * vb) : 0.0;
}

namespace {

/// What a case must hold before it can be predicted at all: a positive, finite measurement,
/// parallel degrees of at least 1, a collective over at least 2 GPUs and a positive size. A case
/// that breaks these is bad input (an error naming the case and field), not a case to skip.
void checkCase(const json& c, std::size_t i, const std::string& file) {
    const std::string at = "cases[" + std::to_string(i) + "]";
    auto fail = [&](const std::string& field, const std::string& why) {
        throw InputError(file, at + "." + field, why);
    };
    try {
        if (!c.is_object()) fail("", "a case must be an object");
        const json& v = c.at("measured").at("value");
        if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0)
            fail("measured.value", "a measurement must be a positive number, got " + v.dump());
        const json& sys = c.at("system");
        if (!sys.at("gpus").is_number() || !(sys.at("gpus").get<double>() >= 1) ||
            sys.at("gpus").get<double>() > double(1 << 30))
            fail("system.gpus", "must be a number of GPUs from 1 to 2^30");
        if (c.value("kind", "") == "collective") {
            const json& col = c.at("collective");
            if (!col.at("gpus").is_number() || col.at("gpus").get<double>() < 2)
                fail("collective.gpus", "a collective needs at least 2 GPUs, got " +
                                            col.at("gpus").dump());
            // bytes is null for token-based benchmarks (DeepEP: tokens_per_rank, hidden).
            if (!col.at("bytes").is_null() &&
                (!col.at("bytes").is_number() || !(col.at("bytes").get<double>() > 0)))
                fail("collective.bytes",
                     "the message size must be a positive number of bytes, got " +
                         col.at("bytes").dump());
        }
        for (const char* section : {"parallel", "inference"}) {
            if (!c.contains(section) || !c[section].is_object()) continue;
            for (const char* key : {"tp", "pp", "cp", "vp", "dp", "ep", "microbatch", "replicas"}) {
                const json& d = c[section].value(key, json());
                if (d.is_null()) continue;
                if (!d.is_number_integer() || d.get<long long>() < 1)
                    fail(std::string(section) + "." + key,
                         "a parallel degree must be a whole number of at least 1, got " +
                             d.dump());
            }
        }
    } catch (const json::exception& e) {
        throw InputError(file, at, std::string("malformed case: ") + e.what());
    }
}

} // namespace

/// An nccl-tests row: all_reduce, all_gather, reduce_scatter, all_to_all or p2p (sendrecv) of
/// `bytes` (nccl-tests' size: the full buffer; all-to-all: each rank's send buffer; p2p: the
/// message) over `gpus` ranks. Predicts the bus bandwidth by nccl-tests' definitions (algbw ×
/// 2(n−1)/n for all-reduce, × (n−1)/n for all-gather, reduce-scatter and all-to-all, × 1 for
/// p2p) or the time.
static void predictCollective(const json& c, const PresetLibrary& lib, const std::string& file,
                              std::size_t i, CaseOutcome& o) {
    const json& col = c.at("collective");
    const std::string op = col.at("op").get<std::string>();
    Collective kind;
    double busFactor;
    const int n = intField(col, "gpus", 0, "collective", 2);
    if (op == "all_reduce") {
        kind = Collective::AllReduce;
        busFactor = 2.0 * (n - 1) / n;
    } else if (op == "all_gather") {
        kind = Collective::AllGather;
        busFactor = double(n - 1) / n;
    } else if (op == "reduce_scatter") {
        kind = Collective::ReduceScatter;
        busFactor = double(n - 1) / n;
    } else if (op == "all_to_all") {
        kind = Collective::AllToAll;
        busFactor = double(n - 1) / n;
    } else if (op == "p2p" || op == "sendrecv" || op == "send_recv") {
        kind = Collective::P2P;
        busFactor = 1.0;
    } else {
        o.skipped = "collective " + op + " is not modelled";
        return;
    }
    if (col.at("bytes").is_null())
        throw InputError(file, "cases[" + std::to_string(i) + "].collective.bytes",
                         "the message size is needed for " + op);
    const json& sys = c.at("system");
    Scenario dummy;
    dummy.system =
        parseSystem(systemFor(sys, lib, n), file, "cases[" + std::to_string(i) + "].system");
    const double bytes = col.at("bytes").get<double>();
    // p2p: between neighbours one node apart when the ranks span nodes, else inside the node.
    const double t = kind == Collective::P2P
                         ? p2pTime(dummy.system, n > dummy.system.tiers.front().gpus
                                                     ? dummy.system.tiers.front().gpus
                                                     : 1,
                                   bytes)
                         : collectiveTime(dummy.system, layoutGroup(dummy.system, n, 1), kind,
                                          bytes);
    if (o.metric == "busbw_gbps")
        o.predicted = bytes / t * busFactor / 1e9;
    else if (o.metric == "latency_s" || o.metric == "time_s")
        o.predicted = t;
    else
        o.skipped = "metric " + o.metric + " is not predicted for collectives";
}

/// A MoE dispatch/combine benchmark (DeepEP): tokens per rank to top-k experts over EP ranks.
/// Normal kernels forward once per destination node (dedup), low-latency kernels send every
/// copy directly. Predicts the per-call latency or DeepEP's "bottleneck bandwidth": the logical
/// bytes over the bottleneck link class (local-rank traffic included) per second.
static void predictMoeAllToAll(const json& c, const PresetLibrary& lib, const std::string& file,
                        std::size_t i, CaseOutcome& o) {
    const json& col = c.at("collective");
    const json& sys = c.at("system");
    const int n = intField(col, "ep", intField(col, "gpus", 0, "collective", 2), "collective", 2);
    Scenario dummy;
    dummy.system =
        parseSystem(systemFor(sys, lib, n), file, "cases[" + std::to_string(i) + "].system");
    const std::string phase = col.value("phase", "dispatch");
    const std::string dtype =
        phase == "dispatch" ? col.value("dispatch_dtype", "bf16") : col.value("combine_dtype", "bf16");
    const double hidden = intField(col, "hidden", 0, "collective");
    MoeA2aRequest req;
    req.tokens = intField(col, "tokens_per_rank", 0, "collective");
    req.topK = intField(col, "top_k", 1, "collective");
    // FP8: one byte per element plus an fp32 scale per 128 channels (DeepEP); else 2 bytes.
    req.bytesPerToken = dtype == "fp8" ? hidden * (1.0 + 4.0 / 128.0) : 2.0 * hidden;
    req.dedupPerNode = col.value("kernel", "normal") == "normal";
    req.overheadS = dummy.system.gpu.calibration.allToAllOverheadS;
    const MoeA2aTraffic t = moeAllToAll(dummy.system, layoutGroup(dummy.system, n, 1), req);
    if (o.metric == "latency_s")
        o.predicted = t.timeS;
    else if (o.metric == "a2a_bottleneck_gbps")
        o.predicted = t.logicalBytes / t.timeS / 1e9;
    else
        o.skipped = "metric " + o.metric + " is not predicted for all-to-all";
}

ValidationReport runValidation(const json& dataset, const PresetLibrary& lib,
                               const std::string& file) {
    if (schemaOf(dataset) != "madmax-validation/1")
        throw InputError(file, "schema", "expected \"madmax-validation/1\"");
    if (!dataset.contains("cases") || !dataset["cases"].is_array())
        throw InputError(file, "cases", "expected an array of cases");
    ValidationReport rep;
    const json& cases = dataset["cases"];
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const json& c = cases[i];
        checkCase(c, i, file);
        CaseOutcome o;
        std::vector<std::string> notes;
        tNotes = &notes;
        struct Reset {
            ~Reset() { tNotes = nullptr; }
        } reset;
        try {
            o.id = c.at("id").get<std::string>();
            o.kind = c.at("kind").get<std::string>();
            o.metric = c.at("measured").at("metric").get<std::string>();
            o.measured = c.at("measured").at("value").get<double>();
            const json& sys = c.at("system");
            const int gpus = intField(sys, "gpus", 0, "system");
            const std::string modelName =
                c.contains("model") && c.at("model").is_object()
                    ? c.at("model").value("name", "?")
                    : ""; // (operator[] on a const document with a missing key is undefined)
            o.group =
                (modelName.empty() ? "collective " + sys.at("gpu").get<std::string>() : modelName) +
                " @ " + std::to_string(gpus) + " GPUs";
            if (o.kind == "collective") {
                const json& col = c.at("collective");
                const std::string op = col.at("op").get<std::string>();
                const bool tokens =
                    col.contains("tokens_per_rank") && !col["tokens_per_rank"].is_null();
                if (op == "all_to_all" && tokens) {
                    predictMoeAllToAll(c, lib, file, i, o);
                } else {
                    predictCollective(c, lib, file, i, o);
                }
            } else if (o.kind == "training") {
                const std::string arch = c.at("model").at("arch").get<std::string>();
                if (arch != "dense" && arch != "moe" && arch != "dlrm") {
                    o.skipped = arch + " training is not modelled";
                } else {
                    const Scenario s = arch == "dlrm" ? dlrmScenarioForCase(c, lib, file)
                                                     : scenarioForCase(c, lib, file);
                    const Result r = evaluate(s);
                    if (o.metric == "step_time_s")
                        o.predicted = r.stepTimeS;
                    else if (o.metric == "hardware_tflops_per_gpu")
                        o.predicted = r.hardwareTflopsPerGpu;
                    else if (o.metric == "model_tflops_per_gpu")
                        o.predicted = r.modelTflopsPerGpu;
                    else if (o.metric == "mfu")
                        o.predicted = r.mfu;
                    else if (o.metric == "tokens_per_s_per_gpu")
                        o.predicted = r.tokensPerSPerGpu;
                    else if (o.metric == "samples_per_s")
                        o.predicted = r.samplesPerS;
                    else if (o.metric == "tokens_per_s")
                        o.predicted = r.tokensPerS;
                    else
                        o.skipped = "metric " + o.metric + " is not predicted for training";
                }
            } else if (o.kind == "inference") {
                const std::string arch = c.at("model").at("arch").get<std::string>();
                if (arch != "dense") {
                    o.skipped = arch + " inference is not modelled yet";
                } else {
                    const Result r = evaluate(inferenceScenarioForCase(c, lib, file));
                    if (o.metric == "output_tokens_per_s")
                        o.predicted = r.inference.outputTokensPerS;
                    else if (o.metric == "ttft_s")
                        o.predicted = r.inference.ttftS;
                    else if (o.metric == "tpot_s")
                        o.predicted = r.inference.tpotS;
                    else if (o.metric == "samples_per_s")
                        o.predicted = r.inference.requestsPerS;
                    else
                        o.skipped = "metric " + o.metric + " is not predicted for inference";
                }
            } else {
                o.skipped = "kind " + o.kind + " is not modelled";
            }
        } catch (const InputError& e) {
            o.skipped = std::string("cannot be expressed: ") + e.what();
        } catch (const json::exception& e) {
            o.skipped = std::string("malformed case: ") + e.what();
        }
        if (o.id.empty()) o.id = "cases[" + std::to_string(i) + "]";
        o.notes = std::move(notes);
        rep.cases.push_back(std::move(o));
    }

    std::vector<double> all;
    std::map<std::string, std::vector<double>> byMetric, byKind;
    std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> groups;
    for (const auto& o : rep.cases) {
        if (!o.predicted) continue;
        const double e = std::fabs(o.errorPct());
        all.push_back(e);
        byMetric[o.metric].push_back(e);
        byKind[o.kind].push_back(e);
        groups[o.group + " / " + o.metric].first.push_back(o.measured);
        groups[o.group + " / " + o.metric].second.push_back(*o.predicted);
    }
    rep.overall = errorStats(all);
    for (auto& [k, v] : byMetric)
        rep.byMetric[k] = errorStats(v);
    for (auto& [k, v] : byKind)
        rep.byKind[k] = errorStats(v);
    double sum = 0;
    for (const auto& [g, mv] : groups) {
        if (mv.first.size() < 2) continue;
        rep.spearmanByGroup[g] = spearman(mv.first, mv.second);
        sum += rep.spearmanByGroup[g];
    }
    if (!rep.spearmanByGroup.empty()) rep.spearmanMean = sum / rep.spearmanByGroup.size();
    return rep;
}

int writeCaseScenarios(const json& dataset, const PresetLibrary& lib, const std::string& file,
                       const std::string& dir) {
    if (!dataset.contains("cases") || !dataset["cases"].is_array())
        throw InputError(file, "cases", "expected an array of cases");
    int written = 0;
    for (const json& c : dataset["cases"]) {
        if (!c.is_object() || !c.contains("id") || !c["id"].is_string()) continue;
        const std::string id = c["id"].get<std::string>();
        const std::string kind = c.value("kind", "");
        if (kind != "training" && kind != "inference") continue;
        // Ids become file names: letters, digits, '.', '-', '_' only (no path, no "..").
        const bool plain = !id.empty() && id != "." && id != ".." &&
                           std::all_of(id.begin(), id.end(), [](unsigned char ch) {
                               return std::isalnum(ch) || ch == '.' || ch == '-' || ch == '_';
                           });
        if (!plain)
            throw InputError(file, "cases[id=" + id + "].id",
                             "not a plain file name: letters, digits, '.', '-' and '_' only");
        std::optional<Scenario> s;
        try {
            const bool dlrm = c.contains("model") && c["model"].is_object() &&
                              c["model"].value("arch", "") == "dlrm";
            s = kind != "training" ? inferenceScenarioForCase(c, lib, file)
                : dlrm             ? dlrmScenarioForCase(c, lib, file)
                                   : scenarioForCase(c, lib, file);
        } catch (const InputError&) {
            // Cases that cannot be expressed are reported by runValidation; nothing to write.
        } catch (const json::exception&) {
        }
        if (!s) continue;
        // Outside the try: a file that cannot be written is the user's to know about.
        writeFileAtomically(dir + "/" + id + ".json", toJson(*s).dump(2) + "\n");
        ++written;
    }
    return written;
}

json toJson(const ValidationReport& r) {
    json cases = json::array();
    for (const auto& o : r.cases) {
        if (o.predicted)
            cases.push_back({{"id", o.id},
                             {"kind", o.kind},
                             {"metric", o.metric},
                             {"measured", o.measured},
                             {"predicted", *o.predicted},
                             {"error_pct", o.errorPct()},
                             {"group", o.group},
                             {"notes", o.notes}});
        else
            cases.push_back(
                {{"id", o.id}, {"kind", o.kind}, {"metric", o.metric}, {"skipped", o.skipped}});
    }
    auto stats = [](const ErrorStats& s) {
        return json{{"count", s.count},
                    {"median_abs_error_pct", s.medianAbsPct},
                    {"p90_abs_error_pct", s.p90AbsPct},
                    {"max_abs_error_pct", s.maxAbsPct}};
    };
    json summary = stats(r.overall);
    summary["spearman"] = r.spearmanMean ? json(*r.spearmanMean) : json(nullptr);
    summary["skipped"] =
        std::count_if(r.cases.begin(), r.cases.end(), [](const auto& o) { return !o.predicted; });
    json byMetric = json::object(), byKind = json::object(), sp = json::object();
    for (const auto& [k, v] : r.byMetric)
        byMetric[k] = stats(v);
    for (const auto& [k, v] : r.byKind)
        byKind[k] = stats(v);
    for (const auto& [k, v] : r.spearmanByGroup)
        sp[k] = v;
    summary["by_metric"] = byMetric;
    summary["by_kind"] = byKind;
    summary["spearman_by_group"] = sp;
    return {{"cases", cases}, {"summary", summary}};
}

} // namespace madmax
