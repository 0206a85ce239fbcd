#include "madmax/scenario_io.hpp"

#include "madmax/error.hpp"
#include "madmax/json_reader.hpp"

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

namespace madmax {

using nlohmann::json;

// ---------------------------------------------------------------------------------------------
// Text and files

json parseJsonText(const std::string& text, const std::string& file) {
    try {
        return json::parse(text);
    } catch (const json::parse_error& e) {
        // Turn the byte offset into line:column for humans.
        std::size_t line = 1, col = 1;
        for (std::size_t i = 0; i < e.byte && i < text.size(); ++i) {
            if (text[i] == '\n') {
                ++line;
                col = 1;
            } else {
                ++col;
            }
        }
        std::string what = e.what();
        const auto colon = what.find("syntax error");
        if (colon != std::string::npos) what = what.substr(colon);
        throw InputError(file, "",
                         "malformed JSON at line " + std::to_string(line) + ", column " +
                             std::to_string(col) + ": " + what);
    }
}

json readJsonFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw InputError(path, "", "cannot open the file (does it exist, and is it readable?)");
    std::ostringstream ss;
    ss << in.rdbuf();
    return parseJsonText(ss.str(), path);
}

void writeFileAtomically(const std::string& path, const std::string& contents) {
    namespace fs = std::filesystem;
    const fs::path target(path);
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::random_device rd;
    const fs::path tmp = dir / ("." + target.filename().string() + ".tmp" + std::to_string(rd()));
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out)
            throw std::runtime_error("cannot write " + tmp.string() + ": is the folder writable?");
        out << contents;
        out.flush();
        if (!out) {
            std::error_code ec;
            fs::remove(tmp, ec);
            throw std::runtime_error("writing " + tmp.string() + " failed (disk full?); " + path +
                                     " was left unchanged");
        }
    }
    std::error_code ec;
    fs::rename(tmp, target, ec);
    if (ec) {
        fs::remove(tmp, ec);
        throw std::runtime_error("cannot replace " + path + ": " + ec.message() +
                                 "; the old file was left unchanged");
    }
}

// ---------------------------------------------------------------------------------------------
// Resolution: preset ids and overrides

namespace {

std::string joinIds(const std::vector<std::string>& ids) {
    std::string out;
    for (const auto& id : ids)
        out += (out.empty() ? "" : ", ") + id;
    return out;
}

void resolveRef(json& slot, PresetKind kind, const PresetLibrary& lib, const std::string& file,
                const std::string& path) {
    if (!slot.is_string()) return;
    const std::string id = slot.get<std::string>();
    const Preset* p = lib.find(kind, id);
    if (!p) {
        auto ids = lib.ids(kind);
        auto near = didYouMean(id, ids);
        throw InputError(file, path,
                         "no " + std::string(toString(kind)) + " preset named \"" + id + "\"" +
                             (near ? " (did you mean \"" + *near + "\"?)" : "") +
                             "; available: " + joinIds(ids));
    }
    slot = p->json;
}

} // namespace

void resolvePresetRefs(json& doc, const PresetLibrary& lib, const std::string& file) {
    if (!doc.is_object()) return;
    if (doc.contains("model")) resolveRef(doc["model"], PresetKind::Model, lib, file, "model");
    if (doc.contains("system")) {
        resolveRef(doc["system"], PresetKind::System, lib, file, "system");
        json& sys = doc["system"];
        if (sys.is_object() && sys.contains("gpu"))
            resolveRef(sys["gpu"], PresetKind::Gpu, lib, file, "system.gpu");
    }
}

namespace {

json parseOverrideValue(const std::string& text) {
    try {
        return json::parse(text);
    } catch (const json::parse_error&) {
        return json(text); // a bare word is a string: --set model=llama3-70b
    }
}

} // namespace

void applyOverride(json& doc, const std::string& path, const json& value,
                   const std::string& where) {
    json* node = &doc;
    std::string walked;
    std::size_t pos = 0;
    while (true) {
        const auto dot = path.find('.', pos);
        const std::string seg =
            path.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
        const bool last = dot == std::string::npos;
        const std::string here = walked.empty() ? seg : walked + "." + seg;
        if (seg.empty()) throw InputError(where, path, "empty segment in the override path");
        if (node->is_array()) {
            std::size_t idx = 0;
            try {
                std::size_t used = 0;
                idx = std::stoul(seg, &used);
                if (used != seg.size()) throw std::invalid_argument(seg);
            } catch (const std::exception&) {
                throw InputError(where, here,
                                 "\"" + seg + "\" is not an index into the array at " +
                                     (walked.empty() ? "(root)" : walked));
            }
            if (idx >= node->size())
                throw InputError(where, here,
                                 "index " + seg + " is past the end; the array has " +
                                     std::to_string(node->size()) + " elements");
            node = &(*node)[idx];
        } else if (node->is_object()) {
            if (!node->contains(seg) && !last) {
                std::vector<std::string> keys;
                for (auto it = node->begin(); it != node->end(); ++it)
                    keys.push_back(it.key());
                auto near = didYouMean(seg, keys);
                throw InputError(where, here,
                                 "no such field to override" +
                                     (near ? " (did you mean \"" + *near + "\"?)" : std::string()));
            }
            node = &(*node)[seg];
        } else {
            throw InputError(where, here,
                             (walked.empty() ? std::string("(root)") : walked) +
                                 " is a value, not an object or array");
        }
        if (last) break;
        walked = here;
        pos = dot + 1;
    }
    *node = value;
}

Override parseOverride(const std::string& text) {
    const auto eq = text.find('=');
    if (eq == std::string::npos || eq == 0)
        throw InputError("--set", text,
                         "expected path=value, e.g. strategy.tp=4 or model=llama3-70b");
    return {text.substr(0, eq), text.substr(eq + 1)};
}

json resolveScenario(const json& doc, const PresetLibrary& lib, const std::string& file,
                     const std::vector<Override>& extra) {
    if (!doc.is_object())
        throw InputError(file, "(document)",
                         "a scenario must be a JSON object, got " + describeType(doc));
    json out = doc;
    resolvePresetRefs(out, lib, file);
    if (out.contains("overrides")) {
        const json ov = out["overrides"];
        out.erase("overrides");
        if (!ov.is_object())
            throw InputError(file, "overrides", "expected an object of \"path\": value pairs");
        for (auto it = ov.begin(); it != ov.end(); ++it) {
            applyOverride(out, it.key(), it.value(), file + ": overrides");
            resolvePresetRefs(out, lib, file);
        }
    }
    for (const auto& o : extra) {
        applyOverride(out, o.path, parseOverrideValue(o.value), "--set");
        resolvePresetRefs(out, lib, "--set " + o.path);
    }
    return out;
}

// ---------------------------------------------------------------------------------------------
// Parsing

namespace {

LogCurve parseCurve(const json& j, const ObjectReader& owner, const std::string& key, double maxY) {
    const std::string path = owner.pathOf(key);
    if (j.is_number()) {
        const double y = j.get<double>();
        if (!(y > 0 && y <= maxY))
            throw InputError(owner.file(), path,
                             "a constant efficiency must be in (0, " + std::to_string(maxY) + "]");
        return LogCurve::constant(y);
    }
    if (!j.is_array() || j.empty())
        throw InputError(owner.file(), path,
                         "expected a number or a non-empty array of [x, efficiency] pairs");
    std::vector<std::pair<double, double>> pts;
    for (std::size_t i = 0; i < j.size(); ++i) {
        const json& p = j[i];
        const std::string at = path + "[" + std::to_string(i) + "]";
        if (!p.is_array() || p.size() != 2 || !p[0].is_number() || !p[1].is_number())
            throw InputError(owner.file(), at,
                             "expected a pair [x, efficiency] of numbers, got " + p.dump());
        const double x = p[0].get<double>(), y = p[1].get<double>();
        if (!(x > 0))
            throw InputError(owner.file(), at, "x must be positive (a size in bytes or FLOPs)");
        if (!(y > 0 && y <= maxY))
            throw InputError(owner.file(), at, "efficiency " + p[1].dump() + " must be in (0, 1]");
        pts.emplace_back(x, y);
    }
    return LogCurve(std::move(pts));
}

json curveJson(const LogCurve& c) {
    json a = json::array();
    for (const auto& [x, y] : c.points())
        a.push_back({x, y});
    return a;
}

LinkCalibration parseLink(const json& j, const std::string& file, const std::string& path,
                          const LinkCalibration& fallback) {
    ObjectReader r(j, file, path);
    LinkCalibration l = fallback;
    l.latencyS = r.number("latency_us", 0, 1e6, fallback.latencyS * 1e6) * 1e-6;
    if (r.has("efficiency"))
        l.efficiency = parseCurve(r.raw("efficiency"), r, "efficiency", 1.0);
    else
        r.ignore("efficiency");
    l.allReduceSpeedup = r.number("all_reduce_speedup", 0, 10, fallback.allReduceSpeedup, true);
    r.ignore("notes");
    r.finish();
    return l;
}

json linkJson(const LinkCalibration& l) {
    return {{"latency_us", l.latencyS * 1e6},
            {"efficiency", curveJson(l.efficiency)},
            {"all_reduce_speedup", l.allReduceSpeedup}};
}

/// The descriptive fields every preset shares: id, name (defaults to the id), source, notes.
template <class T> void readIdentity(ObjectReader& r, T& out) {
    out.id = r.string("id", "");
    out.name = r.string("name", out.id);
    out.source = r.string("source", "");
    r.ignore("notes");
    r.ignore("schema");
}

} // namespace

Model parseModel(const json& j, const std::string& file, const std::string& path) {
    ObjectReader r(j, file, path);
    Model m;
    readIdentity(r, m);
    r.ignore("params_billion");
    r.choice("arch", {"dense"}, "dense");
    m.layers = int(r.integer("layers", 1, 100000));
    m.hidden = r.integer("hidden", 1, 1LL << 30);
    m.heads = int(r.integer("heads", 1, 1 << 20));
    m.kvHeads = int(r.integer("kv_heads", 1, 1 << 20, m.heads));
    if (!r.has("head_dim") && m.hidden % m.heads != 0)
        r.fail("head_dim", "hidden (" + std::to_string(m.hidden) + ") is not divisible by heads (" +
                               std::to_string(m.heads) + "); give head_dim explicitly");
    m.headDim = r.integer("head_dim", 1, 1 << 20, m.hidden / m.heads);
    m.ffnHidden = r.integer("ffn_hidden", 1, 1LL << 32);
    m.gatedMlp = r.boolean("gated_mlp", false);
    m.vocab = r.integer("vocab", 1, 1LL << 32);
    m.tiedEmbeddings = r.boolean("tied_embeddings", false);
    m.causal = r.boolean("causal", true);
    m.maxSeqLen = r.integer("max_seq_len", 0, 1LL << 32, 0);
    if (m.kvHeads > m.heads)
        r.fail("kv_heads", "cannot exceed heads (" + std::to_string(m.heads) + ")");
    r.finish();
    return m;
}

Gpu parseGpu(const json& j, const std::string& file, const std::string& path) {
    ObjectReader r(j, file, path);
    Gpu g;
    readIdentity(r, g);
    r.ignore("generation");
    r.ignore("skus");
    g.powerW = r.number("power_w", 0, 1e5, 0.0);
    {
        ObjectReader pk(r.raw("peak_tflops"), file, r.pathOf("peak_tflops"));
        for (int i = 0; i < kPrecisionCount; ++i) {
            const std::string key(toString(Precision(i)));
            g.peakFlops[i] = pk.number(key, 0, 1e6, 0.0) * 1e12;
        }
        pk.finish();
        if (g.peak(Precision::BF16) <= 0 && g.peak(Precision::FP16) <= 0)
            r.fail("peak_tflops", "needs a 16-bit peak (bf16 or fp16)");
    }
    g.hbmBytes = r.number("hbm_gb", 0, 1e6, true) * 1e9;
    g.hbmBytesPerS = r.number("hbm_tbps", 0, 1e4, true) * 1e12;
    if (r.has("calibration")) {
        ObjectReader c(r.raw("calibration"), file, r.pathOf("calibration"));
        auto& cal = g.calibration;
        if (c.has("gemm_efficiency"))
            cal.gemmEfficiency = parseCurve(c.raw("gemm_efficiency"), c, "gemm_efficiency", 1.0);
        else
            c.fail("gemm_efficiency",
                   "required field is missing: [[GEMM FLOPs, fraction of peak], ...]");
        cal.attentionEfficiency = c.number("attention_efficiency", 0, 1, 0.5, true);
        cal.memoryEfficiency = c.number("memory_efficiency", 0, 1, 0.8, true);
        cal.kernelLaunchS = c.number("kernel_launch_us", 0, 1e4, 4.0) * 1e-6;
        cal.lowPrecisionGemmScale = c.number("low_precision_gemm_scale", 0, 1, 1.0, true);
        cal.decodeMemoryEfficiency =
            c.number("decode_memory_efficiency", 0, 1, cal.memoryEfficiency, true);
        cal.decodeKernelOverheadS = c.number("decode_kernel_overhead_us", 0, 1e4, 1.5) * 1e-6;
        cal.kvCacheFraction = c.number("kv_cache_fraction", 0, 1, 0.9, true);
        cal.referenceAttention =
            *parseAttentionKernel(c.choice("reference_attention", {"flash", "unfused"}, "flash"));
        c.ignore("notes");
        c.finish();
    } else {
        r.ignore("calibration");
        g.calibration.gemmEfficiency = LogCurve({{1e8, 0.3}, {1e10, 0.65}, {1e12, 0.75}});
    }
    if (r.has("links")) {
        ObjectReader l(r.raw("links"), file, r.pathOf("links"));
        if (l.has("scale_up"))
            g.scaleUpLink = parseLink(l.raw("scale_up"), file, l.pathOf("scale_up"), g.scaleUpLink);
        else
            l.ignore("scale_up");
        if (l.has("scale_out"))
            g.scaleOutLink =
                parseLink(l.raw("scale_out"), file, l.pathOf("scale_out"), g.scaleOutLink);
        else
            l.ignore("scale_out");
        l.finish();
    } else {
        r.ignore("links");
    }
    r.finish();
    return g;
}

System parseSystem(const json& j, const std::string& file, const std::string& path) {
    ObjectReader r(j, file, path);
    System s;
    readIdentity(r, s);
    s.pricePerGpuHour = r.number("price_per_gpu_hour", 0, 1e4, 0.0);
    s.gpu = parseGpu(r.raw("gpu"), file, r.pathOf("gpu"));
    s.gpusPerNode = int(r.integer("gpus_per_node", 1, 4096, 8));
    s.reserveBytes = r.number("reserve_gb", 0, 1e6, 0.0) * 1e9;
    const json& tiers = r.raw("tiers");
    const std::string tiersPath = r.pathOf("tiers");
    if (!tiers.is_array() || tiers.empty())
        throw InputError(file, tiersPath,
                         "expected a non-empty array of network tiers, innermost first");
    for (std::size_t i = 0; i < tiers.size(); ++i) {
        ObjectReader t(tiers[i], file, tiersPath + "[" + std::to_string(i) + "]");
        NetworkTier tier;
        tier.name = t.string("name", "tier " + std::to_string(i));
        const std::string kind =
            t.choice("kind", {"scale_up", "scale_out"}, i == 0 ? "scale_up" : "scale_out");
        tier.kind = kind == "scale_up" ? TierKind::ScaleUp : TierKind::ScaleOut;
        const LinkCalibration& link =
            tier.kind == TierKind::ScaleUp ? s.gpu.scaleUpLink : s.gpu.scaleOutLink;
        tier.gpus = int(t.integer("gpus", 1, 1 << 30));
        tier.bytesPerS = t.number("gbps", 0, 1e6, true) * 1e9;
        tier.latencyS = t.number("latency_us", 0, 1e6, link.latencyS * 1e6) * 1e-6;
        tier.efficiency = t.has("efficiency")
                              ? parseCurve(t.raw("efficiency"), t, "efficiency", 1.0)
                              : link.efficiency;
        if (!t.has("efficiency")) t.ignore("efficiency");
        tier.oversubscription = t.number("oversubscription", 1, 1e4, 1.0);
        tier.allReduceSpeedup =
            t.number("all_reduce_speedup", 0, 10,
                     tier.kind == TierKind::ScaleUp ? link.allReduceSpeedup : 1.0, true);
        t.ignore("notes");
        t.finish();
        s.tiers.push_back(std::move(tier));
    }
    r.finish();
    return s;
}

namespace {} // namespace

Strategy parseStrategy(const json& j, const std::string& file, int gpus) {
    ObjectReader r(j, file, "strategy");
    Strategy st;
    st.tp = int(r.integer("tp", 1, 1 << 20, 1));
    st.pp = int(r.integer("pp", 1, 1 << 20, 1));
    st.vp = int(r.integer("vp", 1, 1 << 20, 1));
    st.cp = int(r.integer("cp", 1, 1 << 20, 1));
    const long long inner = 1LL * st.tp * st.pp * st.cp;
    if (!r.has("dp") && gpus % inner != 0)
        r.fail("dp", "cannot derive dp: gpus (" + std::to_string(gpus) +
                         ") is not divisible by tp × pp × cp = " + std::to_string(inner));
    st.dp = int(r.integer("dp", 1, 1 << 30, gpus / inner));
    st.microBatch = int(r.integer("micro_batch", 1, 1 << 20, 1));
    st.zeroStage = int(r.integer("zero_stage", 0, 3, 0));
    st.shardGroup = int(r.integer("shard_group", 0, 1 << 30, 0));
    st.sequenceParallel = r.boolean("sequence_parallel", false);
    st.tpCommOverlap = r.boolean("tp_comm_overlap", false);
    st.dpOverlap = r.boolean("dp_overlap", true);
    st.bucketBytes = r.number("bucket_mb", 0, 1e6, 40.0, true) * 1e6;
    st.recompute = *parseRecompute(r.choice("recompute", {"none", "selective", "full"}, "none"));
    st.schedule = *parsePipelineSchedule(
        r.choice("schedule", {"1f1b", "interleaved"}, st.vp > 1 ? "interleaved" : "1f1b"));
    st.firstStageLayers = int(r.integer("first_stage_layers", 0, 100000, 0));
    st.lastStageLayers = int(r.integer("last_stage_layers", 0, 100000, 0));
    if (r.has("placement")) {
        const json& p = r.raw("placement");
        const std::string at = r.pathOf("placement");
        const std::string help =
            "list tp, cp, dp, pp (and optionally ep) once each, innermost first, "
            "e.g. [\"tp\", \"cp\", \"dp\", \"pp\"]";
        if (!p.is_array()) throw InputError(file, at, "expected an array; " + help);
        std::vector<ParallelDim> dims;
        for (const auto& e : p) {
            auto d = e.is_string() ? parseParallelDim(e.get<std::string>()) : std::nullopt;
            if (!d) throw InputError(file, at, e.dump() + " is not a parallel dimension; " + help);
            if (std::find(dims.begin(), dims.end(), *d) != dims.end())
                throw InputError(file, at, e.dump() + " appears twice; " + help);
            dims.push_back(*d);
        }
        if (std::find(dims.begin(), dims.end(), ParallelDim::EP) == dims.end()) {
            auto cp = std::find(dims.begin(), dims.end(), ParallelDim::CP);
            dims.insert(cp == dims.end() ? dims.begin() : cp + 1, ParallelDim::EP);
        }
        if (dims.size() != std::size_t(kParallelDimCount))
            throw InputError(file, at, "incomplete; " + help);
        std::copy(dims.begin(), dims.end(), st.placement.begin());
    } else {
        r.ignore("placement");
    }
    r.finish();
    return st;
}

namespace {

Workload parseWorkload(const json& j, const std::string& file) {
    ObjectReader r(j, file, "workload");
    Workload w;
    const std::vector<std::string> precisions = {"fp32", "fp16", "bf16", "fp8", "fp4"};
    const std::string kind = r.choice("kind", {"training", "inference"}, "training");
    w.attention = *parseAttentionKernel(r.choice("attention", {"flash", "unfused"}, "flash"));
    w.precision = *parsePrecision(r.choice("precision", precisions, "bf16"));
    if (kind == "training") {
        w.globalBatch = int(r.integer("global_batch", 1, 1 << 30));
        w.seqLen = int(r.integer("seq_len", 1, 1 << 30));
        w.gradReducePrecision =
            *parsePrecision(r.choice("grad_reduce_precision", {"fp32", "bf16", "fp16"}, "bf16"));
        w.optimizer = *parseOptimizer(r.choice("optimizer", {"adam", "sgd"}, "adam"));
    } else {
        w.kind = WorkloadKind::Inference;
        InferenceWorkload& inf = w.inference;
        inf.inputTokens = int(r.integer("input_tokens", 1, 1 << 24));
        inf.outputTokens = int(r.integer("output_tokens", 1, 1 << 24));
        const std::string dist =
            r.choice("output_distribution", {"fixed", "uniform", "exponential"}, "fixed");
        inf.outputDistribution = dist == "fixed"     ? LengthDistribution::Fixed
                                 : dist == "uniform" ? LengthDistribution::Uniform
                                                     : LengthDistribution::Exponential;
        inf.batch = int(r.integer("batch", 0, 1 << 20, 0));
        inf.weightPrecision = *parsePrecision(
            r.choice("weight_precision", precisions, std::string(toString(w.precision))));
        inf.kvPrecision = *parsePrecision(r.choice("kv_precision", {"fp16", "bf16", "fp8", "fp4"},
                                                   std::string(toString(w.precision))));
        inf.mode = r.choice("mode", {"offline", "server"}, "offline") == "server"
                       ? ServingMode::Server
                       : ServingMode::Offline;
        inf.ttftObjectiveS = r.number("ttft_objective_s", 0, 1e6, 0.0);
        inf.tpotObjectiveS = r.number("tpot_objective_s", 0, 1e6, 0.0);
        inf.prefillChunkTokens = int(r.integer("prefill_chunk_tokens", 1, 1 << 24, 8192));
        // The generic checks see one request of the full context.
        w.seqLen = inf.inputTokens + inf.outputTokens;
        w.globalBatch = 1;
    }
    r.finish();
    return w;
}

} // namespace

Scenario parseScenario(const json& resolved, const std::string& file) {
    ObjectReader r(resolved, file, "");
    Scenario s;
    if (r.has("schema")) {
        const std::string schema = r.string("schema");
        if (schema != kScenarioSchema)
            r.fail("schema",
                   "\"" + schema + "\" is not a scenario; expected \"" + kScenarioSchema + "\"");
    } else {
        r.ignore("schema");
    }
    s.name = r.string("name", "");
    r.ignore("description");
    r.ignore("id");
    s.model = parseModel(r.raw("model"), file, "model");
    s.system = parseSystem(r.raw("system"), file, "system");
    s.gpus = int(r.integer("gpus", 1, 1 << 30));
    s.workload = parseWorkload(r.raw("workload"), file);
    s.strategy = parseStrategy(r.raw("strategy"), file, s.gpus);
    r.finish();
    if (auto why = explainInvalid(s)) throw InputError(file, "", *why);
    return s;
}

json loadScenarioJson(const std::string& pathOrId, const PresetLibrary& lib,
                      const std::vector<Override>& extra) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::is_regular_file(pathOrId, ec))
        return resolveScenario(readJsonFile(pathOrId), lib, pathOrId, extra);
    if (const Preset* p = lib.find(PresetKind::Scenario, pathOrId))
        return resolveScenario(p->json, lib, p->origin, extra);
    auto ids = lib.ids(PresetKind::Scenario);
    throw InputError(pathOrId, "",
                     "no such file, and no scenario preset by that name; presets: " + joinIds(ids));
}

Scenario loadScenario(const std::string& pathOrId, const PresetLibrary& lib,
                      const std::vector<Override>& extra) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const std::string label = fs::is_regular_file(pathOrId, ec) ? pathOrId
                              : lib.find(PresetKind::Scenario, pathOrId)
                                  ? lib.find(PresetKind::Scenario, pathOrId)->origin
                                  : pathOrId;
    return parseScenario(loadScenarioJson(pathOrId, lib, extra), label);
}

// ---------------------------------------------------------------------------------------------
// Serialisation

json toJson(const Model& m) {
    return {{"id", m.id},
            {"name", m.name},
            {"source", m.source},
            {"arch", "dense"},
            {"layers", m.layers},
            {"hidden", m.hidden},
            {"heads", m.heads},
            {"kv_heads", m.kvHeads},
            {"head_dim", m.headDim},
            {"ffn_hidden", m.ffnHidden},
            {"gated_mlp", m.gatedMlp},
            {"vocab", m.vocab},
            {"tied_embeddings", m.tiedEmbeddings},
            {"causal", m.causal},
            {"max_seq_len", m.maxSeqLen}};
}

json toJson(const Gpu& g) {
    json peaks = json::object();
    for (int i = 0; i < kPrecisionCount; ++i)
        peaks[std::string(toString(Precision(i)))] =
            g.peakFlops[i] > 0 ? json(g.peakFlops[i] / 1e12) : json(nullptr);
    const auto& c = g.calibration;
    return {
        {"id", g.id},
        {"name", g.name},
        {"source", g.source},
        {"peak_tflops", peaks},
        {"hbm_gb", g.hbmBytes / 1e9},
        {"hbm_tbps", g.hbmBytesPerS / 1e12},
        {"calibration",
         {{"gemm_efficiency", curveJson(c.gemmEfficiency)},
          {"attention_efficiency", c.attentionEfficiency},
          {"memory_efficiency", c.memoryEfficiency},
          {"kernel_launch_us", c.kernelLaunchS * 1e6},
          {"low_precision_gemm_scale", c.lowPrecisionGemmScale},
          {"decode_memory_efficiency", c.decodeMemoryEfficiency},
          {"decode_kernel_overhead_us", c.decodeKernelOverheadS * 1e6},
          {"kv_cache_fraction", c.kvCacheFraction},
          {"reference_attention", std::string(toString(c.referenceAttention))}}},
        {"links", {{"scale_up", linkJson(g.scaleUpLink)}, {"scale_out", linkJson(g.scaleOutLink)}}},
        {"power_w", g.powerW}};
}

json toJson(const System& s) {
    json tiers = json::array();
    for (const auto& t : s.tiers)
        tiers.push_back({{"name", t.name},
                         {"kind", t.kind == TierKind::ScaleUp ? "scale_up" : "scale_out"},
                         {"gpus", t.gpus},
                         {"gbps", t.bytesPerS / 1e9},
                         {"latency_us", t.latencyS * 1e6},
                         {"efficiency", curveJson(t.efficiency)},
                         {"oversubscription", t.oversubscription},
                         {"all_reduce_speedup", t.allReduceSpeedup}});
    return {{"id", s.id},
            {"name", s.name},
            {"source", s.source},
            {"gpu", toJson(s.gpu)},
            {"gpus_per_node", s.gpusPerNode},
            {"reserve_gb", s.reserveBytes / 1e9},
            {"price_per_gpu_hour", s.pricePerGpuHour},
            {"tiers", tiers}};
}

json toJson(const Strategy& st) {
    json placement = json::array();
    for (ParallelDim d : st.placement)
        placement.push_back(std::string(toString(d)));
    return {{"tp", st.tp},
            {"pp", st.pp},
            {"vp", st.vp},
            {"cp", st.cp},
            {"dp", st.dp},
            {"micro_batch", st.microBatch},
            {"zero_stage", st.zeroStage},
            {"shard_group", st.shardGroup},
            {"sequence_parallel", st.sequenceParallel},
            {"tp_comm_overlap", st.tpCommOverlap},
            {"dp_overlap", st.dpOverlap},
            {"bucket_mb", st.bucketBytes / 1e6},
            {"recompute", std::string(toString(st.recompute))},
            {"schedule", std::string(toString(st.schedule))},
            {"first_stage_layers", st.firstStageLayers},
            {"last_stage_layers", st.lastStageLayers},
            {"placement", placement}};
}

json toJson(const Workload& w) {
    if (w.kind == WorkloadKind::Inference) {
        const InferenceWorkload& i = w.inference;
        return {{"kind", "inference"},
                {"input_tokens", i.inputTokens},
                {"output_tokens", i.outputTokens},
                {"output_distribution", std::string(toString(i.outputDistribution))},
                {"batch", i.batch},
                {"precision", std::string(toString(w.precision))},
                {"weight_precision", std::string(toString(i.weightPrecision))},
                {"kv_precision", std::string(toString(i.kvPrecision))},
                {"mode", i.mode == ServingMode::Server ? "server" : "offline"},
                {"ttft_objective_s", i.ttftObjectiveS},
                {"tpot_objective_s", i.tpotObjectiveS},
                {"prefill_chunk_tokens", i.prefillChunkTokens},
                {"attention", std::string(toString(w.attention))}};
    }
    return {{"kind", "training"},
            {"global_batch", w.globalBatch},
            {"seq_len", w.seqLen},
            {"precision", std::string(toString(w.precision))},
            {"grad_reduce_precision", std::string(toString(w.gradReducePrecision))},
            {"optimizer", std::string(toString(w.optimizer))},
            {"attention", std::string(toString(w.attention))}};
}

json toJson(const Scenario& s) {
    return {{"schema", kScenarioSchema},     {"name", s.name}, {"model", toJson(s.model)},
            {"system", toJson(s.system)},    {"gpus", s.gpus}, {"strategy", toJson(s.strategy)},
            {"workload", toJson(s.workload)}};
}

json toJson(const Result& r) {
    json byDim = json::object(), byColl = json::object(), detail = json::array();
    for (int d = 0; d < kParallelDimCount; ++d) {
        const CommTime t = r.dimTotal(ParallelDim(d));
        byDim[std::string(toString(ParallelDim(d)))] = {{"serialized_s", t.serializedS},
                                                        {"exposed_s", t.exposedS}};
        for (int c = 0; c < kCollectiveCount; ++c) {
            const CommTime& ct = r.comm[d][c];
            if (ct.serializedS <= 0 && ct.exposedS <= 0) continue;
            detail.push_back({{"dimension", std::string(toString(ParallelDim(d)))},
                              {"collective", std::string(toString(Collective(c)))},
                              {"serialized_s", ct.serializedS},
                              {"exposed_s", ct.exposedS}});
        }
    }
    for (int c = 0; c < kCollectiveCount; ++c) {
        const CommTime t = r.collectiveTotal(Collective(c));
        byColl[std::string(toString(Collective(c)))] = {{"serialized_s", t.serializedS},
                                                        {"exposed_s", t.exposedS}};
    }
    const auto& m = r.memory;
    json out = {{"step_time_s", r.stepTimeS},
                {"samples_per_s", r.samplesPerS},
                {"tokens_per_s", r.tokensPerS},
                {"tokens_per_s_per_gpu", r.tokensPerSPerGpu},
                {"model_tflops_per_gpu", r.modelTflopsPerGpu},
                {"hardware_tflops_per_gpu", r.hardwareTflopsPerGpu},
                {"mfu", r.mfu},
                {"hfu", r.hfu},
                {"compute_s", r.computeS},
                {"exposed_comm_s", r.exposedCommS},
                {"serialized_comm_s", r.serializedCommS()},
                {"bubble_s", r.bubbleS},
                {"compute",
                 {{"forward_s", r.compute.forwardS},
                  {"backward_s", r.compute.backwardS},
                  {"recompute_s", r.compute.recomputeS},
                  {"optimizer_s", r.compute.optimizerS}}},
                {"comm", {{"by_dimension", byDim}, {"by_collective", byColl}, {"detail", detail}}},
                {"memory",
                 {{"weights_bytes", m.weightsBytes},
                  {"grads_bytes", m.gradsBytes},
                  {"optimizer_bytes", m.optimizerBytes},
                  {"activations_bytes", m.activationsBytes},
                  {"reserve_bytes", m.reserveBytes},
                  {"total_bytes", m.totalBytes()},
                  {"capacity_bytes", m.capacityBytes},
                  {"margin_bytes", m.marginBytes()},
                  {"fits", m.fits()}}},
                {"critical_stage", r.criticalStage},
                {"micro_batches", r.microBatches},
                {"forward_per_micro_batch_s", r.forwardPerMicroBatchS},
                {"backward_per_micro_batch_s", r.backwardPerMicroBatchS},
                {"model_flops_per_step", r.modelFlopsPerStep},
                {"hardware_flops_per_step", r.hardwareFlopsPerStep},
                {"conventions", "model FLOPs = 3 x forward GEMM FLOPs + full (non-causal) "
                                "attention 4·s·h per token per layer "
                                "+ LM head (Megatron/PaLM); hardware FLOPs add recomputed forward "
                                "work; MFU/HFU against the "
                                "dense peak of the workload precision"}};
    if (r.isInference) {
        const InferenceResult& i = r.inference;
        out["inference"] = {{"ttft_s", i.ttftS},
                            {"tpot_s", i.tpotS},
                            {"e2e_latency_s", i.e2eLatencyS},
                            {"output_tokens_per_s", i.outputTokensPerS},
                            {"output_tokens_per_s_per_gpu", i.outputTokensPerSPerGpu},
                            {"requests_per_s", i.requestsPerS},
                            {"batch", i.batch},
                            {"max_batch_that_fits", i.maxBatchThatFits},
                            {"meets_objectives", i.meetsObjectives},
                            {"kv_bytes_per_token", i.kvBytesPerToken},
                            {"kv_bytes_per_sequence", i.kvBytesPerSequence},
                            {"decode",
                             {{"weight_read_s", i.decodeWeightReadS},
                              {"kv_read_s", i.decodeKvReadS},
                              {"compute_s", i.decodeComputeS},
                              {"comm_s", i.decodeCommS},
                              {"overhead_s", i.decodeOverheadS},
                              {"prefill_per_iteration_s", i.prefillPerIterationS}}},
                            {"prefill",
                             {{"compute_s", i.prefillComputeS},
                              {"comm_s", i.prefillCommS},
                              {"overhead_s", i.prefillOverheadS}}}};
        out["memory"]["kv_cache_bytes"] = r.memory.kvCacheBytes;
    }
    if (!r.timeline.empty()) {
        json tl = json::array();
        for (const auto& e : r.timeline) {
            json ev = {{"label", e.label},
                       {"lane", e.lane == Lane::Compute ? "compute"
                                : e.lane == Lane::Comm  ? "comm"
                                                        : "dp_comm"},
                       {"start_s", e.startS},
                       {"end_s", e.endS}};
            if (e.isComm) {
                ev["dimension"] = std::string(toString(e.dim));
                ev["collective"] = std::string(toString(e.collective));
            }
            tl.push_back(ev);
        }
        out["timeline"] = tl;
    }
    return out;
}

} // namespace madmax
