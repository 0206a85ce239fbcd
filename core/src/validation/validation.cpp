// Scoring published measurements: each case checked, converted (case_scenario.cpp) or predicted
// directly (collectives, MoE all-to-all), compared with its measurement, and summarised.
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
/// Every numeric field of the case format is a number or null: a wrong type is named here,
/// not met later as the JSON library's "type must be number" (issue #30).
template <class Fail> void checkCaseNumbers(const json& c, const Fail& fail) {
    static const std::pair<const char*, std::vector<const char*>> kNumeric[] = {
        {"model", {"layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab", "seq_len",
                   "params_billion"}},
        {"system", {"gpus", "gpus_per_node", "scaleup_domain", "hbm_gb", "hbm_tbps",
                    "scaleup_gbps", "scaleout_gbps"}},
        {"parallel", {"global_batch", "zero_stage", "etp"}},
        {"inference", {"input_tokens", "output_tokens", "batch", "attention_dp",
                       "prefix_cache_hit", "prefill_chunk_tokens", "redundant_experts",
                       "draft_tokens", "acceptance_rate", "requests", "mean_load"}},
    };
    for (const auto& [section, keys] : kNumeric) {
        if (!c.contains(section) || !c.at(section).is_object()) continue;
        const json& sec = c.at(section);
        for (const char* key : keys)
            if (sec.contains(key) && !sec.at(key).is_null() && !sec.at(key).is_number())
                fail(std::string(section) + "." + key, "expected a number or null, got " +
                                                           sec.at(key).dump());
    }
    if (c.contains("model") && c.at("model").is_object() && c.at("model").contains("moe") &&
        c.at("model").at("moe").is_object())
        for (const auto& [key, value] : c.at("model").at("moe").items())
            if (key != "routing" && key != "notes" && !value.is_null() && !value.is_number())
                fail("model.moe." + key, "expected a number or null, got " + value.dump());
}

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
            if (col.contains("algorithm") && !col["algorithm"].is_null() &&
                !(col["algorithm"].is_string() &&
                  (col["algorithm"] == "ring" || col["algorithm"] == "tree")))
                fail("collective.algorithm",
                     "NCCL_ALGO as the benchmark forced it: \"ring\", \"tree\" or null (NCCL's "
                     "own choice), got " + col["algorithm"].dump());
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
        checkCaseNumbers(c, fail);
        if (c.contains("artifact_prediction") && !c["artifact_prediction"].is_null()) {
            const json& a = c["artifact_prediction"];
            if (!a.is_object())
                fail("artifact_prediction",
                     "expected an object of metric: predicted value, got " + a.dump());
            for (const auto& [key, value] : a.items())
                if (!value.is_null() && !(value.is_number() && std::isfinite(value.get<double>()) &&
                                          value.get<double>() > 0))
                    fail("artifact_prediction." + key,
                         "a prediction must be a positive number or null, got " + value.dump());
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
    const int n = intField(col, "gpus", 0, "collective", 2);
    if (op == "all_reduce") {
        kind = Collective::AllReduce;
    } else if (op == "all_gather") {
        kind = Collective::AllGather;
    } else if (op == "reduce_scatter") {
        kind = Collective::ReduceScatter;
    } else if (op == "all_to_all") {
        kind = Collective::AllToAll;
    } else if (op == "p2p" || op == "sendrecv" || op == "send_recv") {
        kind = Collective::P2P;
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
    // A benchmark run with NCCL_ALGO forced says so; otherwise NCCL's tuner picks.
    const std::string algo = col.contains("algorithm") && col["algorithm"].is_string()
                                 ? col["algorithm"].get<std::string>()
                                 : "";
    if (algo == "ring") dummy.system.allReduceAlgorithm = AllReduceAlgorithm::Ring;
    if (algo == "tree") dummy.system.allReduceAlgorithm = AllReduceAlgorithm::Tree;
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
        o.predicted = bytes / t * ncclBusFactor(kind, n) / 1e9;
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
    req.scaleUpEfficiency = dummy.system.gpu.calibration.deepEpScaleUpEfficiency;
    const MoeA2aTraffic t = moeAllToAll(dummy.system, layoutGroup(dummy.system, n, 1), req);
    if (o.metric == "latency_s")
        o.predicted = t.timeS;
    else if (o.metric == "a2a_bottleneck_gbps")
        o.predicted = t.logicalBytes / t.timeS / 1e9;
    else
        o.skipped = "metric " + o.metric + " is not predicted for all-to-all";
}

namespace {
/// A serving case's prediction of its metric (whole system, per GPU pool or per node).
void predictServing(const json& c, const PresetLibrary& lib, const std::string& file,
                    CaseOutcome& o) {
    const Scenario sc = inferenceScenarioForCase(c, lib, file);
    const Result r = evaluate(sc);
    const double perNode = double(sc.system.gpusPerNode) / sc.gpus;
    if (o.metric == "output_tokens_per_s")
        o.predicted = r.inference.outputTokensPerS;
    else if (o.metric == "output_tokens_per_s_per_node")
        o.predicted = r.inference.outputTokensPerS * perNode;
    else if (o.metric == "input_tokens_per_s_per_node")
        o.predicted = r.inference.inputTokensPerS * perNode;
    else if (o.metric == "output_tokens_per_s_per_gpu")
        o.predicted = r.inference.outputTokensPerS / sc.gpus;
    else if (o.metric == "input_tokens_per_s_per_gpu")
        o.predicted = r.inference.inputTokensPerS / sc.gpus;
    else if (o.metric == "ttft_s")
        o.predicted = r.inference.ttftS;
    else if (o.metric == "tpot_s")
        o.predicted = r.inference.tpotS;
    else if (o.metric == "samples_per_s")
        o.predicted = r.inference.requestsPerS;
    else
        o.skipped = "metric " + o.metric + " is not predicted for inference";
}
/// A training case's prediction of its metric (dense, MoE, ViT, fine-tuning, DLRM).
void predictTraining(const json& c, const PresetLibrary& lib, const std::string& file,
                     CaseOutcome& o) {
    const std::string arch = c.at("model").at("arch").get<std::string>();
    if (arch != "dense" && arch != "moe" && arch != "dlrm") {
        o.skipped = arch + " training is not modelled";
        return;
    }
    const Scenario s =
        arch == "dlrm" ? dlrmScenarioForCase(c, lib, file) : scenarioForCase(c, lib, file);
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

/// The case's artifact_prediction for its measured metric (checkCase has checked its values),
/// kept beside this engine's prediction and said in its notes.
void noteArtifactPrediction(const json& c, CaseOutcome& o, std::vector<std::string>& notes) {
    if (!o.predicted || !c.contains("artifact_prediction") || !c["artifact_prediction"].is_object())
        return;
    const json& v = c["artifact_prediction"].value(o.metric, json());
    if (!v.is_number()) return;
    o.artifactPredicted = v.get<double>();
    char line[160];
    std::snprintf(line, sizeof line, "the artifact's own prediction: %.4g (%+.1f%%)",
                  *o.artifactPredicted, o.artifactErrorPct());
    notes.emplace_back(line);
}

/// One case read, converted and predicted by its kind; what cannot be expressed is skipped
/// with the reason, and the case's notes say what was assumed.
CaseOutcome predictCase(const json& c, std::size_t i, const PresetLibrary& lib,
                        const std::string& file) {
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
            const bool tokens = col.contains("tokens_per_rank") && !col["tokens_per_rank"].is_null();
            if (op == "all_to_all" && tokens)
                predictMoeAllToAll(c, lib, file, i, o);
            else
                predictCollective(c, lib, file, i, o);
        } else if (o.kind == "training") {
            predictTraining(c, lib, file, o);
        } else if (o.kind == "inference") {
            predictServing(c, lib, file, o);
        } else {
            o.skipped = "kind " + o.kind + " is not modelled";
        }
    } catch (const InputError& e) {
        // The case's readers name its field; the file is this one when they leave it out.
        o.skipped = std::string("cannot be expressed: ") +
                    (e.file().empty() ? InputError(file, e.path(), e.message()).what() : e.what());
    } catch (const json::exception& e) {
        o.skipped = std::string("malformed case: ") + e.what();
    }
    if (o.id.empty()) o.id = "cases[" + std::to_string(i) + "]";
    noteArtifactPrediction(c, o, notes);
    o.notes = std::move(notes);
    return o;
}

/// Error statistics overall, by metric and by kind, and the rank correlation within groups.
void scoreReport(ValidationReport& rep) {
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
    std::vector<double> theirs, ours;
    for (const auto& o : rep.cases)
        if (o.predicted && o.artifactPredicted) {
            theirs.push_back(std::fabs(o.artifactErrorPct()));
            ours.push_back(std::fabs(o.errorPct()));
        }
    if (!theirs.empty()) {
        rep.artifact = errorStats(theirs);
        rep.oursOnArtifactCases = errorStats(ours);
    }
}

} // namespace

ValidationReport runValidation(const json& dataset, const PresetLibrary& lib,
                               const std::string& file) {
    if (schemaOf(dataset) != "madmax-validation/1")
        throw InputError(file, "schema", "expected \"madmax-validation/1\"");
    if (!dataset.contains("cases") || !dataset["cases"].is_array())
        throw InputError(file, "cases", "expected an array of cases");
    ValidationReport rep;
    const json& cases = dataset["cases"];
    for (std::size_t i = 0; i < cases.size(); ++i) {
        checkCase(cases[i], i, file);
        rep.cases.push_back(predictCase(cases[i], i, lib, file));
    }
    scoreReport(rep);
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
        // Ids become file names: the one id rule (madmax/file_io.hpp).
        if (auto why = explainBadFileId(id)) throw InputError(file, "cases[id=" + id + "].id", *why);
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
        if (o.predicted) {
            cases.push_back({{"id", o.id},
                             {"kind", o.kind},
                             {"metric", o.metric},
                             {"measured", o.measured},
                             {"predicted", *o.predicted},
                             {"error_pct", o.errorPct()},
                             {"group", o.group},
                             {"notes", o.notes}});
            if (o.artifactPredicted) {
                cases.back()["artifact_predicted"] = *o.artifactPredicted;
                cases.back()["artifact_error_pct"] = o.artifactErrorPct();
            }
        } else
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
    if (r.artifact) {
        summary["artifact"] = stats(*r.artifact);
        summary["ours_on_artifact_cases"] = stats(*r.oursOnArtifactCases);
    }
    return {{"cases", cases}, {"summary", summary}};
}

} // namespace madmax
