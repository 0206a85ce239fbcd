#include "validation/case_reading.hpp"

#include "files/embedded_presets.hpp"
#include "madmax/collectives.hpp"
#include "madmax/engine.hpp"
#include "madmax/error.hpp"
#include "madmax/file_io.hpp"
#include "madmax/json_reader.hpp"
#include "madmax/pipeline.hpp"
#include "madmax/scenario_io.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <optional>

namespace madmax::validation_detail {

double num(const json& j, const char* key, double fallback) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return fallback;
    if (!it->is_number()) throw InputError("", key, "expected a number, got " + it->dump());
    return it->get<double>();
}
/// A whole-number field of a case within [lo, hi] (`fallback` when absent or null), else bad
/// input naming it — never a double converted to int out of range.
int intField(const json& j, const char* key, long long fallback, const char* section, long long lo,
             long long hi) {
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
thread_local std::vector<std::string>* tNotes = nullptr; // NOLINT: per-thread case notes
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
        gpu["peak_tflops"][p] = isNull(peaks, p) ? presetPeaks.value(p, json(nullptr)) : peaks[p];
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
    const int domain =
        intField(sys, "scaleup_domain", intField(sys, "gpus_per_node", 8, "system"), "system");
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
        tiers.push_back(
            {{"name", "scale-out"}, {"kind", "scale_out"}, {"gpus", gpus}, {"gbps", gbps}});
    }
    return {{"id", "case-system"},
            {"name", "from case"},
            {"gpu", gpu},
            {"gpus_per_node", intField(sys, "gpus_per_node", 8, "system")},
            {"tiers", tiers}};
}

/// The model preset with the case's shape (arch, layers, hidden, heads), if any: the published
/// tables omit head dimensions, MLA ranks and attention windows, which the preset takes from the
/// model's released config (docs/guide/calibration-and-validation.md "Validation").
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
                {"gated_mlp", m.value("gated_mlp", false)}};
    // A vision transformer has patches and a classifier head instead of a vocabulary.
    if (m.contains("vit") && m["vit"].is_object())
        out["vit"] = m.at("vit");
    else
        out["vocab"] = m.at("vocab");
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
        // Routing: a published imbalance is the case's; otherwise force-balanced rows and
        // training take 1.0, the default, and serving over EP learned routing's residual
        // (case_scenario.cpp, assumeServedImbalance).
        json moe = {{"experts", e.at("experts")},
                    {"top_k", e.at("top_k")},
                    {"expert_ffn_hidden", e.at("expert_ffn_hidden")}};
        for (const char* key :
             {"shared_experts", "dense_layers", "moe_layer_freq", "capacity_factor",
              "load_imbalance"})
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

const json* entryOfSource(const json& doc, const json& c) {
    const std::string title = sourceTitle(c);
    if (doc.contains("entries"))
        for (const json& e : doc.at("entries"))
            if (title.find(e.at("source_title_contains").get<std::string>()) != std::string::npos)
                return &e;
    return nullptr;
}

/// The TP overlap style of a case's framework (presets/frameworks/tp-overlap.json): the entry
/// of its source, null when none names one (the strategy's default then holds).
const json* tpOverlapStyleFor(const json& c) {
    static const json doc = frameworkDoc("tp-overlap.json");
    return entryOfSource(doc, c);
}

namespace {

/// "20YY-MM" from an arXiv identifier in `url` (arxiv.org/abs/YYMM.NNNNN or /pdf/), else "".
std::string arxivMonth(const std::string& url) {
    for (const char* stem : {"arxiv.org/abs/", "arxiv.org/pdf/"}) {
        const std::size_t at = url.find(stem);
        if (at == std::string::npos) continue;
        const std::string id = url.substr(at + std::string(stem).size(), 5);
        if (id.size() == 5 && id[4] == '.' &&
            std::all_of(id.begin(), id.begin() + 4, [](char ch) { return ch >= '0' && ch <= '9'; }))
            return "20" + id.substr(0, 2) + "-" + id.substr(2, 2);
    }
    return "";
}

/// The first "deepspeed [v|version ]MAJOR.MINOR" in lowered `text` as {major, minor}, else
/// {-1, -1}.
std::pair<int, int> deepSpeedVersion(const std::string& text) {
    for (std::size_t at = text.find("deepspeed"); at != std::string::npos;
         at = text.find("deepspeed", at + 1)) {
        std::size_t i = at + 9;
        while (i < text.size() && (text[i] == ' ' || text[i] == '-')) ++i;
        if (text.compare(i, 7, "version") == 0) i += 7;
        while (i < text.size() && text[i] == ' ') ++i;
        if (i < text.size() && text[i] == 'v') ++i;
        auto digits = [&](int& v) {
            const std::size_t from = i;
            v = 0;
            while (i < text.size() && std::isdigit((unsigned char)text[i]) && i - from < 4)
                v = v * 10 + (text[i++] - '0');
            return i > from;
        };
        int major = 0, minor = 0;
        if (digits(major) && i < text.size() && text[i] == '.' && (++i, digits(minor)))
            return {major, minor};
    }
    return {-1, -1};
}

std::string lowered(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char ch) { return char(std::tolower(ch)); });
    return text;
}

} // namespace

Zero3Style zero3StyleFor(const json& c) {
    static const json doc = frameworkDoc("zero3-style.json");
    const json& src = c.value("source", json::object());
    auto field = [](const json& o, const char* key) {
        return o.is_object() && o.contains(key) && o.at(key).is_string()
                   ? o.at(key).get<std::string>()
                   : std::string();
    };
    const std::string url = field(src, "url");
    const std::string text = lowered(sourceTitle(c) + " " + field(src, "where") + " " + url +
                                     " " + field(c, "notes"));
    Zero3Style out;
    if (!doc.contains("entries")) return out;
    for (const json& e : doc.at("entries")) {
        bool named = false;
        for (const json& marker : e.at("text_contains_any"))
            named = named || text.find(marker.get<std::string>()) != std::string::npos;
        if (!named) continue;
        // A release the source names decides; else the source's date.
        const auto [major, minor] = deepSpeedVersion(text);
        if (major >= 0) {
            const std::string before = e.at("version_before").get<std::string>();
            const auto dot = before.find('.');
            const int bMajor = std::stoi(before.substr(0, dot)),
                      bMinor = std::stoi(before.substr(dot + 1));
            if (major < bMajor || (major == bMajor && minor < bMinor)) {
                out.entry = &e;
                out.basis = "DeepSpeed " + std::to_string(major) + "." + std::to_string(minor) +
                            " named in the source";
                return out;
            }
            continue;
        }
        const std::string month = arxivMonth(url);
        if (month.empty()) {
            out.undated = true;
            continue;
        }
        if (month < e.at("published_before").get<std::string>()) {
            out.entry = &e;
            out.basis = "source dated " + month + " by its arXiv identifier, no release named";
            return out;
        }
    }
    return out;
}

/// A `recipe` block on a case that does not read it (serving, DLRM): an error naming it.
void rejectRecipe(const json& c, const std::string& file, const char* kind) {
    if (!isNull(c, "recipe"))
        throw InputError(file, casePath(c, "recipe"),
                         std::string("recipe switches are read for dense and MoE training cases, "
                                     "not for ") +
                             kind + " cases: remove the block");
}

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
} // namespace madmax::validation_detail
