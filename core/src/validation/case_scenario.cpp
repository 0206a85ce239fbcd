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
#include "madmax/pipeline_schedule.hpp"
#include "madmax/scenario_io.hpp"

#include <algorithm>
#include <optional>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <cstdio>
#include <numeric>

namespace madmax {

using namespace validation_detail;

namespace {
/// The case's parallel.pp_schedule ("" when null): a schedule the engine models
/// (madmax/pipeline_schedule.hpp) or gpipe, else an error naming the field.
std::string casePipelineSchedule(const json& c, const json& par, const std::string& file) {
    if (isNull(par, "pp_schedule")) return "";
    const json& ps = par.at("pp_schedule");
    if (ps.is_string() && (ps == "gpipe" || parsePipelineSchedule(ps.get<std::string>())))
        return ps.get<std::string>();
    throw InputError(file, casePath(c, "parallel.pp_schedule"),
                     "expected " + scheduleNameList() + ", gpipe or null, got " + ps.dump());
}

/// The schedule a pipelined case ran: a one-chunk schedule it names other than 1F1B
/// (zero-bubble, DualPipe, DeepSpeed's lock-step 1F1B) is costed as itself; otherwise the one
/// its chunks per GPU imply.
std::string caseSchedule(const std::string& named, int vp) {
    const auto k = parsePipelineSchedule(named);
    if (k && *k != PipelineSchedule::OneFOneB && *k != PipelineSchedule::Interleaved) return named;
    return std::string(toString(scheduleForChunks(vp)));
}
} // namespace


namespace {

/// A vocabulary TP does not divide: padded as Megatron-LM does (to a multiple of 128·TP).
void padVocabulary(json& model, int tp) {
    if (!model["vocab"].is_number_integer() || model["vocab"].get<long long>() % tp == 0) return;
    const long long v = model["vocab"].get<long long>(), pad = 128LL * tp;
    model["vocab"] = (v + pad - 1) / pad * pad;
    note("vocabulary " + std::to_string(v) + " padded to " + model["vocab"].dump() +
         " (a multiple of 128·TP)");
}

/// A published gradient-accumulation count that the batch sizes contradict is said: the engine
/// takes global batch / (DP · micro-batch), from the published degrees.
void noteGradAccumMismatch(const json& par, const json& strategy) {
    const int gradAccum = intField(par, "grad_accum", 0, "parallel");
    if (gradAccum <= 0 || !strategy["dp"].is_number() || !strategy["micro_batch"].is_number() ||
        !par.contains("global_batch") || !par.at("global_batch").is_number() ||
        strategy["dp"].get<double>() <= 0 || strategy["micro_batch"].get<double>() <= 0)
        return;
    const double derived = par.at("global_batch").get<double>() /
                           (strategy["dp"].get<double>() * strategy["micro_batch"].get<double>());
    const double published = gradAccum;
    if (std::fabs(derived - published) <= 1e-9) return;
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "published grad_accum %g disagrees with global_batch / (dp x micro_batch) = "
                  "%g; the batch and degrees were taken as published",
                  published, derived);
    note(buf);
}

/// FSDP shards parameters, gradients and optimizer state over the data-parallel ranks: ZeRO
/// stage 3 (Megatron-FSDP's optim_grads_params, PyTorch FSDP's FULL_SHARD). Unpublished: the
/// distributed optimizer (stage 1), said.
void inferZeroStage(const json& c, const json& par, const std::string& file, json& strategy) {
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
}

/// Whether an MoE case's routing is learned and its imbalance unpublished: not stated as
/// force-balanced, and no model.moe.load_imbalance of its own.
static bool imbalanceUnpublished(const json& c) {
    const json& model = c.at("model");
    if (!model.contains("moe") || !model.at("moe").is_object()) return true;
    const json& moe = model.at("moe");
    return moe.value("routing", "") != "force_balanced" && isNull(moe, "load_imbalance");
}

/// A training MoE case whose imbalance is unpublished: the EP group is taken as evenly loaded,
/// and said.
void noteIfImbalanceAssumed(const json& c) {
    if (imbalanceUnpublished(c))
        note("expert load imbalance not published: 1.0 assumed (an evenly loaded EP group; "
             "routing not stated as force-balanced)");
}

/// A serving case over an EP group whose imbalance is unpublished carries learned routing's
/// residual imbalance (presets/frameworks/served-routing.json), said.
static void assumeServedImbalance(const json& c, json& model) {
    if (!imbalanceUnpublished(c)) return;
    static const json doc = frameworkDoc("served-routing.json");
    if (!doc.contains("load_imbalance")) return noteIfImbalanceAssumed(c);
    model["moe"]["load_imbalance"] = doc.at("load_imbalance");
    note("expert load imbalance not published: " + doc.at("load_imbalance").dump() +
         " assumed for learned routing served (" + doc.at("note").get<std::string>() + ")");
}

/// The switches the row's own recipe sets (this project's extension, `recipe`): CUDA graphs,
/// the MoE all-to-all overlapped with the other micro-batch's work, the fused MoE MLP, the
/// token dispatcher, TP communication overlap — read from the recipe file the row cites, and
/// said. Each is checked here, so a wrong key or type names the case's field.
void applyRecipe(const json& c, const std::string& file, json& strategy) {
    if (isNull(c, "recipe")) return;
    const json& r = c.at("recipe");
    if (!r.is_object())
        throw InputError(file, casePath(c, "recipe"),
                         "expected an object of recipe switches, got " + r.dump());
    // The on/off switches carry the strategy field's own name.
    static const std::set<std::string> switches = {"cuda_graphs", "moe_a2a_overlap",
                                                   "moe_fused_mlp", "tp_comm_overlap"};
    std::string said;
    for (const auto& [key, value] : r.items()) {
        const std::string path = "recipe." + key;
        if (key == "dispatcher") {
            if (!value.is_string() || (value != "deepep" && value != "all_to_all"))
                throw InputError(file, casePath(c, path.c_str()),
                                 "expected \"deepep\" or \"all_to_all\", got " + value.dump());
            strategy["moe_dispatcher"] = value;
        } else if (switches.count(key)) {
            if (!value.is_boolean())
                throw InputError(file, casePath(c, path.c_str()),
                                 "expected true or false, got " + value.dump());
            strategy[key] = value;
        } else {
            throw InputError(file, casePath(c, path.c_str()),
                             "unknown recipe switch; known: cuda_graphs, moe_a2a_overlap, "
                             "moe_fused_mlp, tp_comm_overlap, dispatcher");
        }
        said += (said.empty() ? "" : ", ") + key + " " + value.dump();
    }
    if (!said.empty()) note("recipe: " + said + " (as the row's recipe sets them)");
}

/// An MoE case's expert layout as published, and the dispatcher the framework's recipe runs
/// (presets/frameworks/moe-dispatchers.json: Megatron-Bridge's flex dispatcher, DeepEP /
/// HybridEP, unless the model's recipe sets Megatron-Core's flat one) —
/// docs/guide/calibration-and-validation.md "Validation".
void inferMoeLayout(const json& c, const json& par, const PresetLibrary& lib, json& strategy) {
    strategy["ep"] = intField(par, "ep", 1, "parallel");
    strategy["etp"] = intField(par, "etp", 1, "parallel");
    // (A dispatcher the row's recipe names, applyRecipe, stands.)
    const json* d = strategy.contains("moe_dispatcher") ? nullptr : moeDispatcherFor(c, lib);
    if (d) {
        strategy["moe_dispatcher"] = d->at("dispatcher");
        if (d->contains("moe_a2a_overlap") && !strategy.contains("moe_a2a_overlap"))
            strategy["moe_a2a_overlap"] = d->at("moe_a2a_overlap");
        note("dispatcher not published: " + d->at("dispatcher").get<std::string>() + " (" +
             d->at("note").get<std::string>() + ")");
    }
    noteIfImbalanceAssumed(c);
}

/// The pipeline's schedule and stage split: the one published (GPipe costed as 1F1B, said),
/// two virtual stages for an interleaved run that does not publish them; an uneven split as
/// Megatron-LM makes it (middle stages ceil(l/p), the ends sharing the rest).
void inferPipelineLayout(const json& c, const json& par, const std::string& file, int layers,
                         int pp, json& strategy) {
    const std::string published = casePipelineSchedule(c, par, file);
    if (published == "gpipe" && pp > 1)
        note("pp_schedule gpipe: costed as 1F1B, whose bubble is the same (p - 1) / m; "
             "GPipe's memory, all micro-batches' activations held, is not modelled");
    const bool interleaved = published == "interleaved";
    int vp = intField(par, "vp", interleaved ? 2 : 1, "parallel");
    if (interleaved && isNull(par, "vp")) note("virtual stages not published: 2 assumed");
    if (pp <= 1) return;
    strategy["schedule"] = caseSchedule(published, vp);
    if (layers % pp != 0) {
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

/// FP8/FP4 scaling: the recipe where the source names it (our extension of the schema:
/// Megatron-Bridge's "FP8-CS" is current scaling, "FP8-MX" block scaling). Not published per
/// row: block scaling (MXFP8/NVFP4) where the GPU has block-scaled tensor cores (an FP4 peak:
/// Blackwell), else Transformer Engine's delayed scaling; Megatron-Bridge's tables are the
/// exception on Hopper: their Precision column names FP8-CS for every DGX-H100 row
/// (docs/guide/calibration-and-validation.md "Validation").
void inferFp8Scaling(const json& c, const json& system, const std::string& prec, json& workload) {
    if (prec != "fp8" && prec != "fp4") return;
    if (!isNull(c, "fp8_scaling")) {
        workload["fp8_scaling"] = c.at("fp8_scaling");
        return;
    }
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

/// MoE rows (Megatron-Bridge recipes recompute modules to fit; the table does not say which):
/// the run did fit in memory, so take the least recompute under which it fits (none, then
/// selective, then full recompute of the first 1, 2, … layers of each model chunk, then of
/// every layer) — docs/guide/calibration-and-validation.md "Validation".
Scenario inferMoeRecompute(json& doc, const std::string& where) {
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
    if (!doc["strategy"].contains("cuda_graphs"))
        note("CUDA graphs not published: eager launches assumed (docs/reference/scenario.md "
             "\"The host launch bound\")");
    return out;
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
    padVocabulary(model, tp);
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
    if (const json* style = tpOverlapStyleFor(c); style && tp > 1) {
        strategy["tp_grad_overlap"] = style->at("tp_grad_overlap");
        const bool comm = style->value("tp_comm_overlap", false);
        if (comm) strategy["tp_comm_overlap"] = true;
        note(std::string(comm ? "TP collectives overlapped with their GEMMs (userbuffers)"
                              : "TP gradient collectives ") +
             (comm ? "" : style->at("tp_grad_overlap").get<bool>() ? "overlapped" : "in series") +
             " (" + style->at("note").get<std::string>() + ")");
    }
    noteGradAccumMismatch(par, strategy);
    if (isNull(par, "microbatch")) note("micro-batch not published: 1 assumed");
    inferZeroStage(c, par, file, strategy);
    const bool moe = model.value("arch", "dense") == "moe";
    if (strategy.value("zero_stage", 0) == 3 && !moe) {
        const Zero3Style z = zero3StyleFor(c);
        if (z.entry) {
            strategy["fsdp_style"] = z.entry->at("fsdp_style");
            note("ZeRO-3 coordinator: " + z.entry->at("fsdp_style").get<std::string>() + " (" +
                 z.basis + "; " + z.entry->at("note").get<std::string>() + ")");
        } else if (z.undated) {
            note("ZeRO-3 coordinator: overlapped assumed (the source names DeepSpeed but neither "
                 "a release nor an arXiv date to place it before or after v0.6.0; "
                 "presets/frameworks/zero3-style.json)");
        }
    }
    applyRecipe(c, file, strategy);
    if (moe) inferMoeLayout(c, par, lib, strategy);
    inferPipelineLayout(c, par, file, layers, pp, strategy);
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
    inferFp8Scaling(c, system, prec, workload);
    json doc = {{"name", c.at("id")}, {"model", model},       {"system", system},
                {"gpus", gpus},       {"strategy", strategy}, {"workload", workload}};
    const std::string where = file + ": case " + c.at("id").get<std::string>();
    if (!isNull(par, "recompute") || !moe) {
        Scenario out = parseScenario(doc, where); // dense rows: "none" when not published
        noteIfOverCapacity(out);
        return out;
    }
    return inferMoeRecompute(doc, where);
}

/// A disaggregated or expert-parallel serving case (the DeepSeek-V3/R1 production rows): the
/// pool it measures, EP with its dispatcher and overlap, the prefix-cache share and the prefill
/// chunk, each as the case publishes it. Returns whether the case is one pool of a disaggregated
/// deployment: its batch is then the mean concurrency the source implies, run as given
/// (offline) rather than solved under server limits.
static bool servingDeploymentForCase(const json& c, const json& inf, json& model, json& workload,
                                     json& strategy) {
    const int ep = intField(inf, "ep", 1, "inference");
    if (ep > 1) {
        strategy["ep"] = ep;
        if (!isNull(inf, "dispatcher")) strategy["moe_dispatcher"] = inf.at("dispatcher");
        if (!isNull(inf, "fp8_dispatch")) strategy["moe_fp8_dispatch"] = inf.at("fp8_dispatch");
        if (!isNull(inf, "two_batch_overlap"))
            strategy["moe_a2a_overlap"] = inf.at("two_batch_overlap");
        if (!isNull(inf, "redundant_experts"))
            strategy["redundant_experts"] = inf.at("redundant_experts");
        if (model.contains("moe")) assumeServedImbalance(c, model);
    }
    for (const char* key : {"prefix_cache_hit", "prefill_chunk_tokens", "draft_tokens",
                            "acceptance_rate", "requests", "mean_load"})
        if (!isNull(inf, key)) workload[key] = inf.at(key);
    if (!isNull(inf, "mean_load"))
        note("mean load " + inf.at("mean_load").dump() +
             " of the pool's capacity (the case's own figure; its notes derive it)");
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

/// The request count of a finite benchmark the case's source ran but its row does not give
/// (presets/frameworks/benchmark-requests.json: trtllm-bench's $num_requests by request shape),
/// for an offline, aggregated case of fixed-length requests; said in the notes. 0: none.
static long long benchmarkRequestsFor(const json& c, const json& workload) {
    static const json doc = frameworkDoc("benchmark-requests.json");
    if (!doc.contains("entries") || workload.value("mode", "offline") != "offline" ||
        workload.value("phase", "aggregated") != "aggregated" ||
        workload.value("output_distribution", "fixed") != "fixed")
        return 0;
    const std::string title = sourceTitle(c);
    for (const json& e : doc.at("entries")) {
        bool all = true;
        for (const json& part : e.at("source_title_contains_all"))
            all = all && title.find(part.get<std::string>()) != std::string::npos;
        if (!all) continue;
        for (const json& shape : e.at("shapes"))
            if (shape.at("input_tokens") == workload.at("input_tokens") &&
                shape.at("output_tokens") == workload.at("output_tokens")) {
                const long long requests = shape.at("requests").get<long long>();
                note("benchmark request count not in the case: " + std::to_string(requests) +
                     " (" + e.at("note").get<std::string>() +
                     "; presets/frameworks/benchmark-requests.json), predicted as that finite "
                     "benchmark");
                return requests;
            }
    }
    return 0;
}

Scenario inferenceScenarioForCase(const json& c, const PresetLibrary& lib,
                                  const std::string& file) {
    rejectRecipe(c, file, "serving");
    const json& m = c.at("model");
    const json& sys = c.at("system");
    const json& inf = c.at("inference");
    const int gpus = intField(sys, "gpus", 0, "system");
    json model = modelFor(m, lib);
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
            throw InputError("", casePath(c, "inference.output_tokens"),
                             "request lengths are not published: give inference.input_tokens "
                             "and output_tokens (derived from the source, said in the case's "
                             "notes), or the measured output_tokens_per_s and samples_per_s "
                             "they follow from");
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
    const bool pool = servingDeploymentForCase(c, inf, model, workload, strategy);
    if (!pool && inf.value("scenario", "offline") == "server") {
        // MLPerf Inference server limits for LLMs (TTFT ≤ 2 s, TPOT ≤ 200 ms), as defaults.
        workload["mode"] = "server";
        workload["ttft_objective_s"] = 2.0;
        workload["tpot_objective_s"] = 0.2;
    }
    if (!workload.contains("requests"))
        if (const long long requests = benchmarkRequestsFor(c, workload))
            workload["requests"] = requests;
    json doc = {{"name", c.at("id")},
                {"model", model},
                {"system", systemFor(sys, lib, gpus)},
                {"gpus", gpus},
                {"strategy", strategy},
                {"workload", workload}};
    return parseScenario(doc, file + ": case " + c.at("id").get<std::string>());
}

} // namespace madmax
