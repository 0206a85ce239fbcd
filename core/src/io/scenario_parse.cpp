// Strict parsing of scenario documents and their parts (model, GPU, system, strategy, workload).
#include "madmax/error.hpp"
#include "madmax/json_reader.hpp"
#include "madmax/pipeline_schedule.hpp"
#include "madmax/scenario_io.hpp"
#include "madmax/strategy_numbers.hpp"
#include "madmax/strategy_switches.hpp"

#include "io/preset_identity.hpp"
#include "io/strategy_parse_parts.hpp"

namespace madmax {

using detail::readIdentity;
using nlohmann::json;

namespace {
// The smallest rates and sizes a real machine could have (issue #30): below these a value is a
// unit slip or a typo, and the predictions it gives (10^300-second steps, NaN) mean nothing.
constexpr double kMinTflops = 0.01;     ///< 10 GFLOP/s
constexpr double kMinTera = 1e-3;       ///< 10^9 per second
constexpr double kMinTbps = 1e-3;       ///< 1 GB/s of HBM
constexpr double kMinHbmGb = 0.01;      ///< 10 MB of HBM
constexpr double kMinGbps = 1e-3;       ///< 1 MB/s of link
constexpr double kMinEfficiency = 1e-3; ///< 0.1% of a peak
} // namespace

namespace {

LogCurve parseCurve(const json& j, const ObjectReader& owner, const std::string& key, double maxY) {
    const std::string path = owner.pathOf(key);
    owner.record(key, "a constant in [0.001, " + std::to_string(int(maxY)) +
                          "], or [[x from 1 to 1e18, efficiency in [0.001, 1]], …] (x: bytes or "
                          "FLOPs)");
    if (j.is_number()) {
        const double y = j.get<double>();
        if (!(y >= kMinEfficiency && y <= maxY))
            throw InputError(owner.file(), path,
                             "a constant efficiency must be in [0.001, " + std::to_string(maxY) +
                                 "]: 0.1% of a peak at least");
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
        if (!(x >= 1 && x <= 1e18))
            throw InputError(owner.file(), at,
                             "x " + p[0].dump() + " must be a size from 1 to 1e18 (bytes or FLOPs)");
        if (!(y >= kMinEfficiency && y <= maxY))
            throw InputError(owner.file(), at,
                             "efficiency " + p[1].dump() + " must be in [0.001, 1]: 0.1% of a peak "
                             "at least");
        pts.emplace_back(x, y);
    }
    return LogCurve(std::move(pts));
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
    l.allReduceSpeedup = r.number("all_reduce_speedup", 0.01, 10, fallback.allReduceSpeedup);
    l.allToAllEfficiency =
        r.number("all_to_all_efficiency", 0.01, 1, fallback.allToAllEfficiency);
    r.ignore("notes");
    r.finish();
    return l;
}


} // namespace

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
            // A rate a real machine could have: a peak below 10 GFLOP/s is a typo's, not a GPU's.
            if (g.peakFlops[i] > 0 && g.peakFlops[i] < kMinTflops * 1e12)
                pk.fail(key, "a peak below 0.01 TFLOP/s is no GPU's: give TFLOP/s (0.01 to "
                             "1e+06), or 0 / absent for unsupported");
            pk.record(key, "0.01 to 1e+06 TFLOP/s; 0, absent or null = unsupported");
        }
        pk.finish();
        if (g.peak(Precision::BF16) <= 0 && g.peak(Precision::FP16) <= 0)
            r.fail("peak_tflops", "needs a 16-bit peak (bf16 or fp16)");
    }
    g.hbmBytes = r.number("hbm_gb", kMinHbmGb, 1e6) * 1e9;
    g.hbmBytesPerS = r.number("hbm_tbps", kMinTbps, 1e4) * 1e12;
    g.expPerS = r.number("peak_exp_tera_per_s", kMinTera, 1e6, 0.0) * 1e12;
    r.record("peak_exp_tera_per_s",
             "0.001 to 1e+06 (10^12 exponentials/s); absent or null = attention on "
             "the tensor cores alone");
    if (r.has("calibration")) {
        ObjectReader c(r.raw("calibration"), file, r.pathOf("calibration"));
        auto& cal = g.calibration;
        if (c.has("gemm_efficiency"))
            cal.gemmEfficiency = parseCurve(c.raw("gemm_efficiency"), c, "gemm_efficiency", 1.0);
        else
            c.fail("gemm_efficiency",
                   "required field is missing: [[GEMM FLOPs, fraction of peak], ...]");
        cal.attentionEfficiency = c.number("attention_efficiency", kMinEfficiency, 1, 0.5);
        cal.memoryEfficiency = c.number("memory_efficiency", kMinEfficiency, 1, 0.8);
        cal.kernelLaunchS = c.number("kernel_launch_us", 0, 1e4, 4.0) * 1e-6;
        cal.lowPrecisionGemmScale = c.number("low_precision_gemm_scale", kMinEfficiency, 1, 1.0);
        cal.decodeMemoryEfficiency =
            c.number("decode_memory_efficiency", kMinEfficiency, 1, cal.memoryEfficiency);
        cal.mlaDecodeEfficiency =
            c.number("mla_decode_efficiency", kMinEfficiency, 1, cal.attentionEfficiency);
        cal.mlaDecodeMemoryEfficiency = c.number("mla_decode_memory_efficiency", kMinEfficiency,
                                                 1, cal.decodeMemoryEfficiency);
        cal.decodeKernelOverheadS = c.number("decode_kernel_overhead_us", 0, 1e4, 1.5) * 1e-6;
        cal.kvCacheFraction = c.number("kv_cache_fraction", kMinEfficiency, 1, 0.9);
        cal.allToAllOverheadS = c.number("all_to_all_overhead_us", 0, 1e5, 25.0) * 1e-6;
        cal.deepEpScaleUpEfficiency =
            c.number("deepep_nvlink_efficiency", kMinEfficiency, 1, cal.deepEpScaleUpEfficiency);
        cal.hostOpS = c.number("host_op_us", 0, 1e5, 0.0) * 1e-6;
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
    s.hostLinkBytesPerS = r.number("host_link_gbps", 0, 1e6, 0.0) * 1e9;
    if (s.hostLinkBytesPerS > 0 && s.hostLinkBytesPerS < kMinGbps * 1e9)
        r.fail("host_link_gbps", "a host link below 0.001 GB/s is no machine's: give GB/s, or 0 "
                                 "for none");
    s.flatRingGathers =
        r.choice("gather_algorithm", {"flat_ring", "hierarchical"}, "flat_ring") == "flat_ring";
    r.record("gather_algorithm",
             "flat_ring (NCCL's all-gather and reduce-scatter: one ring over every rank) or "
             "hierarchical (an NVLink stage, then the network on the 1/f share)");
    const std::string arAlgo = r.choice("all_reduce_algorithm", {"auto", "ring", "tree"}, "auto");
    s.allReduceAlgorithm = arAlgo == "ring"   ? AllReduceAlgorithm::Ring
                           : arAlgo == "tree" ? AllReduceAlgorithm::Tree
                                              : AllReduceAlgorithm::Auto;
    r.record("all_reduce_algorithm",
             "auto (NCCL's tuner: the faster of ring and tree), ring or tree (NCCL_ALGO) for an "
             "all-reduce over several GPUs in each of several nodes");
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
        tier.bytesPerS = t.number("gbps", kMinGbps, 1e6) * 1e9;
        tier.latencyS = t.number("latency_us", 0, 1e6, link.latencyS * 1e6) * 1e-6;
        tier.efficiency = t.has("efficiency")
                              ? parseCurve(t.raw("efficiency"), t, "efficiency", 1.0)
                              : link.efficiency;
        if (!t.has("efficiency")) t.ignore("efficiency");
        tier.oversubscription = t.number("oversubscription", 1, 1e4, 1.0);
        tier.allReduceSpeedup =
            t.number("all_reduce_speedup", 0.01, 10,
                     tier.kind == TierKind::ScaleUp ? link.allReduceSpeedup : 1.0);
        tier.allToAllEfficiency =
            t.number("all_to_all_efficiency", 0.01, 1, link.allToAllEfficiency);
        t.ignore("notes");
        t.finish();
        s.tiers.push_back(std::move(tier));
    }
    r.finish();
    return s;
}

/// The schedules the engine models, by name (madmax/pipeline_schedule.hpp).
static std::vector<std::string> scheduleNames() {
    std::vector<std::string> out;
    for (const ScheduleModel& m : scheduleModels())
        out.emplace_back(m.name);
    return out;
}

/// The deployment fields of a serving workload: latency objectives, prefill chunk, which pool
/// (disaggregation), the prefix cache and speculative decoding (docs/reference/scenario.md "Serving").
static void parseServingDeployment(ObjectReader& r, InferenceWorkload& inf) {
    inf.ttftObjectiveS = r.number("ttft_objective_s", 0, 1e6, 0.0);
    inf.tpotObjectiveS = r.number("tpot_objective_s", 0, 1e6, 0.0);
    inf.prefillChunkTokens = int(r.integer("prefill_chunk_tokens", 1, 1 << 24, 8192));
    const std::string phase = r.choice("phase", {"aggregated", "prefill", "decode"}, "aggregated");
    inf.phase = phase == "prefill"  ? ServingPhase::Prefill
                : phase == "decode" ? ServingPhase::Decode
                                    : ServingPhase::Aggregated;
    // A hit share of 1 would leave no prompt token to compute: the last one always is.
    inf.prefixCacheHit = r.number("prefix_cache_hit", 0.0, 0.999, 0.0);
    // The offload tier's rate applies to it alone (the GPU tier loads nothing).
    const std::string tier = r.choice("prefix_cache_tier", {"gpu", "host"}, "gpu");
    inf.prefixCacheTier = tier == "host" ? PrefixCacheTier::Host : PrefixCacheTier::Gpu;
    if (inf.prefixCacheTier == PrefixCacheTier::Gpu && r.has("prefix_cache_load_gbps"))
        r.fail("prefix_cache_load_gbps",
               "applies to an offloaded prefix cache only: set prefix_cache_tier to \"host\", "
               "or remove it");
    inf.prefixCacheLoadBytesPerS = r.number("prefix_cache_load_gbps", 0.0, 1e6, 0.0) * 1e9;
    if (inf.prefixCacheLoadBytesPerS > 0 && inf.prefixCacheLoadBytesPerS < kMinGbps * 1e9)
        r.fail("prefix_cache_load_gbps", "a load rate below 0.001 GB/s is no machine's: give "
                                         "GB/s, or 0 for the system's host link");
    inf.requests = r.integer("requests", 0, 1LL << 40, 0);
    // Below 0.001 no deployment is worth modelling: a typo for a percentage, most likely.
    inf.meanLoad = r.number("mean_load", 0.001, 1.0, 1.0);
    inf.mlaDecode = r.choice("mla_decode", {"absorbed", "expanded"}, "absorbed") == "expanded"
                        ? MlaDecode::Expanded
                        : MlaDecode::Absorbed;
    if (inf.requests > 0 && inf.meanLoad < 1)
        r.fail("mean_load", "a finite benchmark (requests) queues every request at the start, "
                            "so it runs at capacity: remove mean_load, or requests for a stream");
    // Speculation's settings need draft_tokens named (0 keeps them, switched off).
    const bool drafts = r.has("draft_tokens");
    inf.draftTokens = int(r.integer("draft_tokens", 0, 16, 0));
    if (!drafts) {
        for (const char* key : {"acceptance_rate", "draft_layers"})
            if (r.has(key))
                r.fail(key, "applies to speculative decoding only: set draft_tokens (≥ 1 "
                            "for speculation), or remove it");
    }
    inf.acceptanceRate = r.number("acceptance_rate", 0.0, 1.0, 0.85);
    inf.draftLayers = int(r.integer("draft_layers", 1, 1 << 10, 1));
}

/// The strategy's numeric fields of one group, as madmax/strategy_numbers.hpp declares them;
/// a derived default (dp) is GPUs ÷ (TP·PP·CP), refused when that does not divide.
static void readNumbers(ObjectReader& r, Strategy& st, StrategyNumber::Group group, int gpus) {
    for (const StrategyNumber& n : strategyNumbers()) {
        if (n.group != group) continue;
        const std::string key(n.key);
        double fallback = n.byDefault;
        if (n.derivedDefault) {
            fallback = dataParallelDegree(gpus, st);
            if (!r.has(key) && fallback == 0)
                r.fail(key, "cannot derive dp: gpus (" + std::to_string(gpus) +
                                ") is not divisible by tp × pp × cp = " +
                                std::to_string(replicaGpus(st)) +
                                "; set strategy.dp, or choose degrees whose product divides the "
                                "GPUs");
        }
        if (n.integer())
            n.set(st, double(r.integer(key, (long long)n.min, (long long)n.max,
                                       (long long)fallback)));
        else
            n.set(st, r.number(key, n.min, n.max, fallback));
        if (!n.allowed.empty()) r.record(key, std::string(n.allowed));
    }
}

/// The strategy's on/off switches of one group, as madmax/strategy_switches.hpp declares them.
static void readSwitches(ObjectReader& r, Strategy& st, StrategySwitch::Group group) {
    for (const StrategySwitch& sw : strategySwitches())
        if (sw.group == group) st.*sw.member = r.boolean(std::string(sw.key), sw.byDefault);
}

/// The mixture-of-experts switches of a strategy: dispatcher, overlap, FP8 dispatch, fused
/// MLP, node-limited routing, SMs for communication, redundant experts.
static void parseMoeStrategy(ObjectReader& r, Strategy& st) {
    readNumbers(r, st, StrategyNumber::Group::MixtureOfExperts, 0);
    st.dispatcher = r.choice("moe_dispatcher", {"all_to_all", "deepep"}, "all_to_all") == "deepep"
                        ? MoeDispatcher::DeepEp
                        : MoeDispatcher::AllToAll;
    readSwitches(r, st, StrategySwitch::Group::MixtureOfExperts);
}

/// strategy.placement: the parallel dimensions innermost first (EP, when not listed, right
/// after CP).
static void parsePlacement(ObjectReader& r, const std::string& file, Strategy& st) {
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
}

Strategy parseStrategy(const json& j, const std::string& file, int gpus) {
    ObjectReader r(j, file, "strategy");
    Strategy st;
    readNumbers(r, st, StrategyNumber::Group::Degrees, gpus);
    readNumbers(r, st, StrategyNumber::Group::Memory, gpus);
    readSwitches(r, st, StrategySwitch::Group::Parallelism);
    st.recompute = *parseRecompute(r.choice("recompute", {"none", "selective", "full"}, "none"));
    st.schedule = *parsePipelineSchedule(
        r.choice("schedule", scheduleNames(), std::string(toString(scheduleForChunks(st.vp)))));
    readNumbers(r, st, StrategyNumber::Group::Pipeline, gpus);
    parseMoeStrategy(r, st);
    detail::parseEmbPlan(r, file, st);
    st.fsdpPerTensor = r.choice("fsdp_unit", {"layer", "tensor"}, "layer") == "tensor";
    r.record("fsdp_unit", "ZeRO-3 collectives: one per layer (layer) or per weight tensor (tensor)");
    st.fsdpStyle = *parseFsdpStyle(
        r.choice("fsdp_style", {"overlapped", "deepspeed-legacy"}, "overlapped"));
    r.record("fsdp_style", "ZeRO-3's coordinator: overlapped, or DeepSpeed's up to v0.5.10 "
                           "(deepspeed-legacy: a host sync per gathered module)");
    parsePlacement(r, file, st);
    r.finish();
    return st;
}

namespace {

/// workload.frozen: {"embedding", "head", "layers": N (the first N) or {"first", "count"},
/// and for DLRM "bottom_mlp", "top_mlp"}. Ranges against the model are checked by
/// explainInvalid (the model's layer count is not known here).
Frozen parseFrozen(const json& j, const std::string& file, bool dlrm) {
    ObjectReader r(j, file, "workload.frozen");
    Frozen f;
    f.embedding = r.boolean("embedding", false);
    if (dlrm) {
        f.bottomMlp = r.boolean("bottom_mlp", false);
        f.topMlp = r.boolean("top_mlp", false);
        for (const char* key : {"head", "layers"}) {
            if (r.has(key))
                r.fail(key, "a DLRM has no transformer layers or LM head; freeze \"embedding\" "
                            "(the tables), \"bottom_mlp\" or \"top_mlp\"");
            r.ignore(key);
        }
    } else {
        f.head = r.boolean("head", false);
        for (const char* key : {"bottom_mlp", "top_mlp"}) {
            if (r.has(key))
                r.fail(key, "applies to DLRM models only; a transformer freezes \"embedding\", "
                            "\"layers\" or \"head\"");
            r.ignore(key);
        }
        if (r.has("layers") && r.raw("layers").is_object()) {
            ObjectReader l(r.raw("layers"), file, "workload.frozen.layers");
            f.firstLayer = int(l.integer("first", 0, 1 << 20, 0));
            f.layers = int(l.integer("count", 0, 1 << 20));
            l.finish();
        } else {
            f.layers = int(r.integer("layers", 0, 1 << 20, 0));
            r.record("layers", "N (the first N layers) or {\"first\": i, \"count\": n}");
        }
    }
    r.finish();
    return f;
}

/// A training workload's sequence: samples for a DLRM (and its embedding optimizer), a ViT's
/// patch tokens, else seq_len.
void parseTrainingSequence(ObjectReader& r, bool dlrm, std::int64_t vitTokens, Workload& w) {
    if (dlrm) {
        // Samples, not sequences: a recommendation model has no sequence length.
        if (r.has("seq_len")) r.fail("seq_len", "a DLRM has no sequence length; remove it");
        r.ignore("seq_len");
        w.seqLen = 1;
        const std::string o =
            r.choice("emb_optimizer", {"rowwise_adagrad", "adam", "sgd"}, "rowwise_adagrad");
        w.embOptimizer = o == "adam"  ? EmbOptimizer::Adam
                         : o == "sgd" ? EmbOptimizer::Sgd
                                      : EmbOptimizer::RowwiseAdagrad;
        return;
    }
    if (vitTokens > 0) {
        // A ViT's sequence is its patch tokens plus the class token.
        w.seqLen = int(r.integer("seq_len", 1, 1 << 30, vitTokens));
        if (w.seqLen != vitTokens)
            r.fail("seq_len", "a ViT sees (image_size/patch_size)² + 1 = " +
                                  std::to_string(vitTokens) +
                                  " tokens per image; remove seq_len or set it to that");
    } else {
        w.seqLen = int(r.integer("seq_len", 1, 1 << 30));
    }
    if (r.has("emb_optimizer")) r.fail("emb_optimizer", "applies to DLRM models only");
    r.ignore("emb_optimizer");
}

/// workload.lora: adapters of a rank on a frozen base (of a stored precision).
void parseLora(ObjectReader& r, const std::string& file, bool dlrm, Workload& w) {
    if (!r.has("lora")) {
        r.ignore("lora");
        return;
    }
    if (dlrm) r.fail("lora", "LoRA adapts a transformer's linear layers; a DLRM freezes "
                             "its parts with workload.frozen");
    if (r.has("frozen"))
        r.fail("lora", "LoRA freezes the whole base model (embedding, every layer, "
                       "head) and trains only its adapters: remove workload.frozen");
    ObjectReader l(r.raw("lora"), file, "workload.lora");
    w.frozen.loraRank = int(l.integer("rank", 1, 1 << 16));
    const std::string t = l.choice("targets", {"all", "attention", "mlp"}, "all");
    const std::string base = l.choice("base_precision", {"bf16", "fp8", "nf4"}, "bf16");
    w.frozen.loraBaseBytes = base == "nf4" ? 4.127 / 8.0 : base == "fp8" ? 1.0 : 2.0;
    w.frozen.loraTargets = t == "attention" ? LoraTargets::Attention
                           : t == "mlp"     ? LoraTargets::Mlp
                                            : LoraTargets::All;
    l.finish();
    w.frozen.embedding = w.frozen.head = true; // the base is frozen; layers: see below
}

void parseTrainingWorkload(ObjectReader& r, const std::string& file, bool dlrm,
                           std::int64_t vitTokens, Workload& w) {
    w.globalBatch = int(r.integer("global_batch", 1, 1 << 30));
    parseTrainingSequence(r, dlrm, vitTokens, w);
    w.stepOverheadS = r.number("step_overhead_ms", 0, 1e7, 0.0) * 1e-3;
    w.microBatchOverheadS = r.number("micro_batch_overhead_ms", 0, 1e7, 0.0) * 1e-3;
    r.record("micro_batch_overhead_ms",
             "≥ 0: framework time per micro-batch no op accounts for (once per micro-batch)");
    r.record("step_overhead_ms",
             "≥ 0: framework time per step no op accounts for (data loading, Python)");
    w.inputReadBytesPerS = r.number("input_read_gbps", 0, 1e6, 0.0) * 1e9;
    r.record("input_read_gbps",
             "DLRM: > 0 when the training loop reads each batch itself, synchronously (storage "
             "GB/s per GPU's loader); 0 (default): a prefetching loader hides the input");
    if (w.inputReadBytesPerS > 0 && !dlrm)
        r.fail("input_read_gbps",
               "synchronous input loading is modelled for DLRM workloads only (a transformer's "
               "token ids are a few kB per step): remove it, or give 0");
    w.gradReducePrecision =
        *parsePrecision(r.choice("grad_reduce_precision", {"fp32", "bf16", "fp16"}, "bf16"));
    w.optimizer = *parseOptimizer(r.choice("optimizer", {"adam", "sgd"}, "adam"));
    w.lowPrecisionScaling = *parseLowPrecisionScaling(
        r.choice("fp8_scaling", {"delayed", "current", "block"}, "delayed"));
    if (r.has("frozen"))
        w.frozen = parseFrozen(r.raw("frozen"), file, dlrm);
    else
        r.ignore("frozen");
    parseLora(r, file, dlrm, w);
}

void parseServingWorkload(ObjectReader& r, bool dlrm, const std::vector<std::string>& precisions,
                          Workload& w) {
    for (const char* key : {"frozen", "lora"}) {
        if (r.has(key))
            r.fail(key, "fine-tuning applies to training; serving computes no gradients: "
                        "remove it");
        r.ignore(key);
    }
    if (dlrm)
        r.fail("kind", "DLRM serving is not modelled by the native engine: use \"training\", "
                       "or evaluate the seed's DLRM inference files with --engine reference");
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
    parseServingDeployment(r, inf);
    // The generic checks see one request of the full context.
    w.seqLen = inf.inputTokens + inf.outputTokens;
    w.globalBatch = 1;
}

Workload parseWorkload(const json& j, const std::string& file, bool dlrm, std::int64_t vitTokens) {
    ObjectReader r(j, file, "workload");
    Workload w;
    const std::vector<std::string> precisions = {"fp32", "tf32", "fp16", "bf16", "fp8", "fp4"};
    const std::string kind = r.choice("kind", {"training", "inference"}, "training");
    w.attention = *parseAttentionKernel(r.choice("attention", {"flash", "unfused"}, "flash"));
    w.precision = *parsePrecision(r.choice("precision", precisions, "bf16"));
    if (kind == "training")
        parseTrainingWorkload(r, file, dlrm, vitTokens, w);
    else
        parseServingWorkload(r, dlrm, precisions, w);
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
    s.workload = parseWorkload(r.raw("workload"), file, s.model.isDlrm(),
                               s.model.vit ? s.model.vitShape.tokens() : 0);
    s.strategy = parseStrategy(r.raw("strategy"), file, s.gpus);
    if (s.workload.frozen.lora()) s.workload.frozen.layers = s.model.layers; // the whole base
    r.finish();
    if (auto why = explainInvalid(s)) throw InputError(file, "", *why);
    return s;
}


FieldCatalog describeScenarioFields(const json& resolved) {
    FieldCatalog catalog;
    {
        const FieldCatalogRecorder recording(catalog);
        try {
            parseScenario(resolved, "scenario");
        } catch (const InputError&) {
            // Describe what was reached; the editor shows the error itself elsewhere.
        }
    }
    auto matches = [](const std::string& path, const std::string& pattern) {
        std::size_t i = 0, j = 0;
        while (i < path.size() && j < pattern.size()) {
            if (pattern[j] == '*') {
                while (i < path.size() && path[i] != '.')
                    ++i;
                ++j;
            } else if (path[i++] != pattern[j++]) {
                return false;
            }
        }
        return i == path.size() && j == pattern.size();
    };
    for (auto& [path, info] : catalog)
        for (const CrossFieldRule& rule : crossFieldRules())
            if (matches(path, rule.path)) info.allowed += "; " + std::string(rule.rule);
    return catalog;
}

} // namespace madmax
