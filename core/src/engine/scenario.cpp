#include "engine/scenario_rules.hpp"

#include "madmax/pipeline.hpp"
#include "madmax/pipeline_schedule.hpp"

#include <algorithm>
#include <climits>
#include <string>

namespace madmax {

namespace {
std::string str(long long v) {
    return std::to_string(v);
}
} // namespace

OffloadBlock offloadBlock(const Scenario& s, int layers) {
    // Megatron-Core's own rules for cpu_offloading (TransformerConfig.__post_init__), then the
    // engine's.
    const Strategy& st = s.strategy;
    if (layers <= 0) return OffloadBlock::None;
    if (s.workload.kind == WorkloadKind::Inference) return OffloadBlock::Inference;
    if (layers >= s.model.layers) return OffloadBlock::TooMany;
    if (st.pp > 1) return OffloadBlock::Pipeline;
    if (st.recompute != Recompute::None) return OffloadBlock::Recompute;
    if (st.cudaGraphs) return OffloadBlock::CudaGraphs;
    if (s.workload.frozen.layers > 0) return OffloadBlock::Frozen;
    if (s.system.hostLinkBytesPerS <= 0) return OffloadBlock::NoHostLink;
    return OffloadBlock::None;
}

std::span<const CrossFieldRule> crossFieldRules() {
    // Each line restates one check of explainInvalid() below, for the editor's "allowed" column.
    static constexpr CrossFieldRule rules[] = {
        {"model.kv_heads", "divides heads; TP divides it (training)"},
        {"model.heads", "divisible by TP"},
        {"model.ffn_hidden", "divisible by TP"},
        {"model.moe.experts", "divisible by EP; ≥ top_k"},
        {"model.moe.expert_ffn_hidden", "divisible by ETP"},
        {"strategy.ep", "divides experts; EP × ETP divides TP × CP × DP; 1 for dense models"},
        {"strategy.etp", "divides expert_ffn_hidden; 1 for dense models"},
        {"model.vocab", "divisible by TP"},
        {"model.layers", "divisible by PP × VP (or set first/last stage layers)"},
        {"strategy.offload_layers",
         "< the model's layers; PP 1, no recompute, no CUDA graphs, system.host_link_gbps set"},
        {"strategy.recompute_layers",
         "0 (every layer) or ≤ the layers of a model chunk; needs recompute full, nothing frozen"},
        {"system.tiers.*.gpus", "≥ the tier inside; the last ≥ the scenario's GPUs"},
        {"workload.precision", "the GPU needs a peak for it"},
        {"workload.seq_len", "divisible by CP"},
        {"workload.global_batch", "divisible by DP × micro-batch"},
        {"workload.output_tokens", "input + output ≤ the model's max_seq_len"},
        {"workload.input_tokens", "input + output ≤ the model's max_seq_len"},
        {"workload.prefix_cache_tier", "host: a rate, prefix_cache_load_gbps or system.host_link_gbps"},
        {"workload.requests", "> 0 only offline, aggregated, fixed-length"},
    };
    return rules;
}

namespace {

/// Expert parallelism folds onto the attention grid (Megatron-Core parallel folding): EP × ETP
/// must divide the TP·CP·DP ranks of a stage, EP the routed experts, ETP the expert width.
std::optional<std::string> explainInvalidMoe(const Scenario& s) {
    const Model& m = s.model;
    const Strategy& st = s.strategy;
    if (st.ep < 1 || st.etp < 1) return "strategy.ep and strategy.etp must be at least 1";
    if (!m.isMoe()) {
        if (st.redundantExperts != 0)
            return "strategy.redundant_experts applies to mixture-of-experts models only; " +
                   m.name + " is dense: remove it";
        if (st.ep != 1 || st.etp != 1)
            return "strategy.ep = " + str(st.ep) + " and strategy.etp = " + str(st.etp) +
                   " apply to mixture-of-experts models only; " + m.name +
                   " is dense: set both to 1";
        return std::nullopt;
    }
    const MoeShape& moe = m.moe;
    if (moe.topK > moe.experts)
        return "model.moe.top_k (" + str(moe.topK) + ") cannot exceed model.moe.experts (" +
               str(moe.experts) + ")";
    if (st.redundantExperts > 0 && s.workload.kind != WorkloadKind::Inference)
        return "strategy.redundant_experts applies to serving (EPLB's expert copies); training "
               "routes to the model's experts: remove it";
    const long long slots = 1LL * moe.experts + st.redundantExperts;
    if (slots % st.ep != 0)
        return "EP=" + str(st.ep) + " does not divide the " + str(moe.experts) +
               " routed experts (model.moe.experts)" +
               (st.redundantExperts > 0 ? " + " + str(st.redundantExperts) + " redundant = " +
                                              str(slots)
                                        : std::string()) +
               "; choose an EP that divides them" +
               (st.redundantExperts > 0 ? std::string()
                                        : ", or add strategy.redundant_experts (serving)");
    if (moe.expertFfn % st.etp != 0)
        return "ETP=" + str(st.etp) + " does not divide expert_ffn_hidden " +
               str(moe.expertFfn) + "; choose an ETP that divides it";
    if (st.expertDataParallel() == 0) {
        const long long ranks = 1LL * st.tp * st.cp * st.dp;
        return "EP × ETP = " + str(st.ep) + "×" + str(st.etp) + " = " +
               str(1LL * st.ep * st.etp) + " does not divide the TP×CP×DP = " + str(ranks) +
               " GPUs of a pipeline stage (parallel folding: EP is carved out of DP×CP and "
               "ETP out of TP); choose EP×ETP dividing " + str(ranks);
    }
    if (st.moeNodeLimit < 0) return "strategy.moe_node_limit must be 0 (off) or at least 1";
    if (!(st.moeCommSmFraction >= 0 && st.moeCommSmFraction < 1))
        return "strategy.moe_comm_sm_fraction must be in [0, 1)";
    return std::nullopt;
}

} // namespace

/// The system's tiers and the precision's peak: shared by every model kind.
std::optional<std::string> detail::explainInvalidSystem(const Scenario& s) {
    const System& sys = s.system;
    const Workload& w = s.workload;
    if (sys.tiers.empty()) return "system.tiers must list at least one network tier";
    if (sys.gpu.hbmBytes <= 0 || sys.gpu.hbmBytesPerS <= 0)
        return "system.gpu: hbm_gb and hbm_tbps must be positive";
    for (std::size_t k = 0; k < sys.tiers.size(); ++k) {
        const auto& t = sys.tiers[k];
        // (Named only on failure: the check runs for every configuration a search tries.)
        auto at = [k] { return "system.tiers[" + std::to_string(k) + "]"; };
        if (t.gpus < 1 || t.bytesPerS <= 0 || t.latencyS < 0 || t.oversubscription < 1 ||
            t.allReduceSpeedup <= 0 || !(t.allToAllEfficiency > 0 && t.allToAllEfficiency <= 1))
            return at() + ": gpus ≥ 1, gbps > 0, latency_us ≥ 0, oversubscription ≥ 1, "
                        "all_reduce_speedup > 0 and 0 < all_to_all_efficiency ≤ 1 are required";
        if (k > 0 && t.gpus < sys.tiers[k - 1].gpus)
            return at() + ".gpus (" + str(t.gpus) + ") is smaller than the tier inside it (" +
                   str(sys.tiers[k - 1].gpus) +
                   "): list tiers innermost first, each containing the last";
        // (The outermost tier is the cluster, or the job's share of it: 256 GPUs over NVL72
        // racks take three whole domains and part of a fourth.)
        if (k > 0 && k + 1 < sys.tiers.size() && t.gpus % sys.tiers[k - 1].gpus != 0)
            return at() + ".gpus (" + str(t.gpus) + ") is not a whole number of the tier inside "
                   "it (" + str(sys.tiers[k - 1].gpus) + " GPUs): each domain of a tier must "
                   "hold whole domains of the one inside";
    }
    // A node and the scale-up domain nest one way or the other: NVLink inside a node (8 of 8,
    // or pairs in a node of 8) or across whole nodes (NVL72: 18 nodes of 4), never straddling.
    const int domain = sys.tiers.front().gpus, node = sys.gpusPerNode;
    if (domain % node != 0 && node % domain != 0)
        return "system.gpus_per_node (" + str(node) + ") and system.tiers[0].gpus (" +
               str(domain) + ") disagree: the scale-up domain must divide the node or span "
               "whole nodes; set one to match the other";
    if (sys.gpu.peak(w.precision) <= 0)
        return "workload.precision is " + std::string(toString(w.precision)) + ", which the GPU " +
               sys.gpu.name + " has no peak for: choose a precision listed in its peak_tflops";

    return std::nullopt;
}

/// workload.frozen: a range inside the model, components the model has, something to train.
std::optional<std::string> detail::explainInvalidFrozen(const Scenario& s) {
    const Frozen& f = s.workload.frozen;
    const Model& m = s.model;
    if (!f.any()) return std::nullopt;
    if (s.workload.kind == WorkloadKind::Inference)
        return "workload.frozen applies to training (fine-tuning); serving computes no gradients";
    if (m.isDlrm()) {
        if (f.layers != 0 || f.firstLayer != 0 || f.head)
            return "workload.frozen: a DLRM has no transformer layers or LM head; freeze "
                   "embedding (the tables), bottom_mlp or top_mlp";
        if (f.embedding && f.bottomMlp && f.topMlp)
            return "workload.frozen freezes the tables and both MLPs: nothing is left to train; "
                   "unfreeze one";
        return std::nullopt;
    }
    if (f.bottomMlp || f.topMlp)
        return "workload.frozen.bottom_mlp and top_mlp apply to DLRM models only";
    if (f.lora()) {
        if (f.firstLayer != 0 || f.layers != m.layers || !f.embedding || !f.head)
            return "workload.lora freezes the whole base model: the embedding, all " +
                   str(m.layers) + " layers and the head";
        return std::nullopt;
    }
    if (f.firstLayer < 0 || f.layers < 0)
        return "workload.frozen.layers: first and count must be ≥ 0";
    if (1LL * f.firstLayer + f.layers > m.layers)
        return "workload.frozen.layers: layers " + str(f.firstLayer) + " to " +
               str(1LL * f.firstLayer + f.layers - 1) + " are frozen, but the model has " +
               str(m.layers) + " (0 to " + str(m.layers - 1) + "); shorten the range";
    if (f.embedding && f.head && f.layers == m.layers)
        return "workload.frozen freezes the embedding, every layer and the head: nothing is left "
               "to train; unfreeze one";
    if (s.strategy.schedule == PipelineSchedule::DualPipe)
        return "strategy.schedule \"dualpipe\" with frozen layers is not modelled (its two "
               "stages per GPU freeze differently): use 1f1b or zero_bubble";
    return std::nullopt;
}

/// A training sequence longer than the model's context (a contradiction, issue #30).
std::optional<std::string> detail::explainInvalidContext(const Scenario& s) {
    const Model& m = s.model;
    const Workload& w = s.workload;
    if (w.kind != WorkloadKind::Training || m.vit || m.maxSeqLen <= 0 || w.seqLen <= m.maxSeqLen)
        return std::nullopt;
    return "workload.seq_len " + str(w.seqLen) + " exceeds the model's context of " +
           str(m.maxSeqLen) + " tokens (model.max_seq_len); shorten it, or raise max_seq_len "
           "for a context-extension run";
}

namespace {

/// The model's own shape: sizes positive, KV heads grouping the query heads.
std::optional<std::string> explainInvalidShape(const Model& m) {
    if (m.layers < 1) return "model.layers must be at least 1";
    const bool denseMlp = m.denseLayerCount() > 0;
    if (m.hidden < 1 || m.heads < 1 || m.kvHeads < 1 || (denseMlp && m.ffnHidden < 1) ||
        m.vocab < 1 || m.headDim < 1)
        return "model: hidden, heads, kv_heads, head_dim, ffn_hidden and vocab must all be "
               "positive";
    if (m.heads % m.kvHeads != 0)
        return "model.kv_heads (" + str(m.kvHeads) + ") must divide model.heads (" + str(m.heads) +
               "): each KV head serves a whole group of query heads";
    return std::nullopt;
}

/// The GPU count and the parallel degrees: their product, and what each must divide.
std::optional<std::string> explainInvalidDegrees(const Scenario& s) {
    const Model& m = s.model;
    const Strategy& st = s.strategy;
    const Workload& w = s.workload;
    const System& sys = s.system;
    const bool denseMlp = m.denseLayerCount() > 0;
    if (w.seqLen < 1) return "workload.seq_len must be at least 1";
    if (w.globalBatch < 1) return "workload.global_batch must be at least 1";

    // GPU count and degrees.
    if (s.gpus < 1) return "gpus must be at least 1";
    if (s.gpus > sys.maxGpus())
        return "gpus (" + str(s.gpus) + ") exceeds the " + str((long long)sys.maxGpus()) +
               " GPUs of the system's outermost tier; raise system.tiers[last].gpus or use fewer "
               "GPUs";
    for (auto [name, v] : {std::pair{"tp", st.tp},
                           {"pp", st.pp},
                           {"cp", st.cp},
                           {"dp", st.dp},
                           {"vp", st.vp},
                           {"micro_batch", st.microBatch}})
        if (v < 1)
            return "strategy." + std::string(name) + " must be at least 1 (got " + str(v) + ")";
    if (dataParallelDegree(s.gpus, st) != st.dp) {
        const long long inner = replicaGpus(st);
        const long long product =
            inner > LLONG_MAX / st.dp ? LLONG_MAX : inner * st.dp; // saturate, never wrap
        const int fits = dataParallelDegree(s.gpus, st);
        return "tp × pp × cp × dp = " + str(st.tp) + "×" + str(st.pp) + "×" + str(st.cp) + "×" +
               str(st.dp) + " = " + (product == LLONG_MAX ? "more than 9.2e18" : str(product)) +
               ", but the scenario has " + str(s.gpus) +
               " GPUs; the product must equal the GPU count" +
               (fits > 0 ? " (dp = " + str(fits) + " would fit)" : "");
    }
    if (m.heads % st.tp != 0)
        return "TP=" + str(st.tp) + " does not divide " + str(m.heads) +
               " attention heads; choose a TP that divides the head count";
    const bool inference = w.kind == WorkloadKind::Inference;
    // Serving engines replicate KV heads when TP exceeds them (TP a multiple of the KV heads).
    if (m.kvHeads % st.tp != 0 && !(inference && st.tp % m.kvHeads == 0))
        return "TP=" + str(st.tp) + " does not divide " + str(m.kvHeads) +
               " KV heads; choose a TP that divides the KV-head count";
    if (denseMlp && m.ffnHidden % st.tp != 0)
        return "TP=" + str(st.tp) + " does not divide ffn_hidden " + str(m.ffnHidden);
    if (m.vit && w.kind == WorkloadKind::Inference)
        return "ViT serving is not modelled by the native engine (its inference is one forward "
               "pass per image; the seed's ViT files run on the reference engine)";
    if (!m.vit && m.vocab % st.tp != 0)
        return "TP=" + str(st.tp) + " does not divide the vocabulary of " + str(m.vocab) +
               " (pad the vocabulary to a multiple of TP)";
    if (w.seqLen % st.cp != 0)
        return "CP=" + str(st.cp) + " does not divide seq_len " + str(w.seqLen);
    if (auto why = explainInvalidMoe(s)) return why;
    if (!(st.dlrm == DlrmPlan{}))
        return "strategy.emb_sharding, emb_group_size and sparse_pipeline apply to DLRM models "
               "only; " + m.name + " is a transformer: remove them";
    return std::nullopt;
}

/// How the layers split over pipeline stages and model chunks.
std::optional<std::string> explainInvalidStageSplit(const Scenario& s) {
    const Model& m = s.model;
    const Strategy& st = s.strategy;
    if (st.vp > 1 && st.schedule != PipelineSchedule::Interleaved)
        return "strategy.vp = " + str(st.vp) + " needs strategy.schedule = \"interleaved\"";
    if (st.vp > 1 && st.pp == 1) return "strategy.vp > 1 needs a pipeline (pp > 1)";
    const bool uneven = st.firstStageLayers > 0 || st.lastStageLayers > 0;
    if (uneven) {
        if (st.pp < 2) return "first_stage_layers / last_stage_layers need pp ≥ 2";
        const int setStages = (st.firstStageLayers > 0) + (st.lastStageLayers > 0);
        const int rest = m.layers - st.firstStageLayers - st.lastStageLayers;
        const int others = st.pp - setStages;
        if (rest < 0)
            return "strategy.first_stage_layers + last_stage_layers = " +
                   str(st.firstStageLayers) + " + " + str(st.lastStageLayers) +
                   " exceeds the model's " + str(m.layers) +
                   " layers; give the end stages fewer layers";
        if (others == 0 && rest != 0)
            return "with pp = " + str(st.pp) + " every stage is an end stage: first_stage_layers"
                   " + last_stage_layers (" + str(st.firstStageLayers) + " + " +
                   str(st.lastStageLayers) + ") must equal the model's " + str(m.layers) +
                   " layers";
        if (others > 0 && (rest < others || rest % others != 0))
            return "with first_stage_layers = " + str(st.firstStageLayers) +
                   " and last_stage_layers = " + str(st.lastStageLayers) + ", the remaining " +
                   str(rest) + " of " + str(m.layers) +
                   " layers do not split evenly over the other " + str(others) +
                   " stages; choose end-stage sizes that leave a multiple of " + str(others);
    } else if (m.layers % (1LL * st.pp * st.vp) != 0) { // wide: each may be up to 2^20
        return str(m.layers) + " layers do not divide into pp × vp = " + str(st.pp) + "×" +
               str(st.vp) + " = " + str(1LL * st.pp * st.vp) +
               " equal chunks; choose pp and vp whose product divides the layer count, or set "
               "first_stage_layers / last_stage_layers";
    }
    return std::nullopt;
}

/// Partial recompute and activation offloading, and what each combines with.
std::optional<std::string> explainInvalidRecomputeOffload(const Scenario& s) {
    const Model& m = s.model;
    const Strategy& st = s.strategy;
    const Workload& w = s.workload;
    if (st.recomputeLayers < 0)
        return "strategy.recompute_layers must be 0 (recompute every layer) or a layer count "
               "(got " + str(st.recomputeLayers) + ")";
    if (st.recomputeLayers > 0) {
        if (st.recompute != Recompute::Full)
            return "strategy.recompute_layers = " + str(st.recomputeLayers) +
                   " recomputes the first layers of each model chunk in full and applies to "
                   "strategy.recompute = \"full\" only (it is \"" +
                   std::string(toString(st.recompute)) +
                   "\"); set recompute to \"full\" or remove recompute_layers";
        if (w.frozen.layers > 0)
            return "strategy.recompute_layers with frozen layers (workload.frozen) is not "
                   "modelled; set recompute_layers to 0 (recompute every layer) or choose "
                   "recompute none or selective";
        const int chunk = largestChunkLayers(s);
        if (st.recomputeLayers > chunk)
            return "strategy.recompute_layers = " + str(st.recomputeLayers) + " exceeds the " +
                   str(chunk) + " layers of a model chunk (" + str(m.layers) +
                   " layers over pp × vp = " + str(st.pp) + "×" + str(st.vp) +
                   "); use at most " + str(chunk) + ", or 0 to recompute every layer";
    }
    if (st.offloadLayers < 0)
        return "strategy.offload_layers must be 0 (off) or a layer count (got " +
               str(st.offloadLayers) + ")";
    if (st.offloadLayers > 0) {
        const std::string n = "strategy.offload_layers = " + str(st.offloadLayers);
        switch (offloadBlock(s, st.offloadLayers)) {
        case OffloadBlock::None:
            break;
        case OffloadBlock::Inference:
            return n + ": activation offloading applies to training; set it to 0 for serving";
        case OffloadBlock::TooMany:
            return n + " must be below the model's " + str(m.layers) +
                   " layers (the last layer's activations stay on the GPU); use at most " +
                   str(m.layers - 1);
        case OffloadBlock::Pipeline:
            return n + " with pp = " + str(st.pp) +
                   ": Megatron-Core offloads activations without pipeline parallelism only; set "
                   "pp = 1 or offload_layers = 0";
        case OffloadBlock::Recompute:
            return n + " with recompute \"" + std::string(toString(st.recompute)) +
                   "\": Megatron-Core does not offload with activation recompute; set recompute "
                   "to none or offload_layers = 0";
        case OffloadBlock::CudaGraphs:
            return n + " with cuda_graphs: Megatron-Core does not capture offloading in CUDA "
                       "graphs; set cuda_graphs to false or offload_layers = 0";
        case OffloadBlock::Frozen:
            return n + " with frozen layers (workload.frozen) is not modelled; set one of them "
                       "to 0";
        case OffloadBlock::NoHostLink:
            return n + " needs system.host_link_gbps, each GPU's link to host memory per "
                       "direction (PCIe Gen5 x16: 64; a GB200 GPU's share of NVLink-C2C: 225)";
        }
    }
    return std::nullopt;
}

/// A serving request within the context; no training-only parallelism.
std::optional<std::string> explainInvalidServing(const Scenario& s) {
    const Model& m = s.model;
    const Strategy& st = s.strategy;
    const Workload& w = s.workload;
    const auto& in = w.inference;
    if (m.maxSeqLen > 0 && 1LL * in.inputTokens + in.outputTokens > m.maxSeqLen)
        return "workload: input_tokens + output_tokens = " + str(in.inputTokens) + " + " +
               str(in.outputTokens) + " = " + str(1LL * in.inputTokens + in.outputTokens) +
               " exceeds the model's context of " + str(m.maxSeqLen) +
               " tokens (model.max_seq_len); shorten the request or raise max_seq_len";
    if (st.cp != 1)
        return "context parallelism is not modelled for inference: set strategy.cp = 1";
    if (st.vp != 1) return "virtual pipeline stages apply to training: set strategy.vp = 1";
    if (in.requests > 0 && (in.mode != ServingMode::Offline || in.phase != ServingPhase::Aggregated ||
                            in.outputDistribution != LengthDistribution::Fixed))
        return std::string("workload.requests (a finite benchmark of fixed-length requests, all "
                           "queued at the start) needs mode \"offline\", phase \"aggregated\" "
                           "and output_distribution \"fixed\"; set requests to 0 (an endless "
                           "stream) otherwise");
    if (in.mlaDecode != MlaDecode::Absorbed && !m.mla)
        return "workload.mla_decode applies to MLA attention (a model with an mla block, as "
               "DeepSeek-V3's); " + m.name + " has none: remove mla_decode";
    if (in.prefixCacheTier == PrefixCacheTier::Host && in.prefixCacheLoadBytesPerS <= 0 &&
        s.system.hostLinkBytesPerS <= 0)
        return std::string("workload.prefix_cache_tier \"host\" loads each hit's KV cache into "
                           "the GPU, but no rate is given: set workload.prefix_cache_load_gbps "
                           "(the tier's read rate per GPU) or system.host_link_gbps (the GPU's "
                           "link to host memory)");
    return std::nullopt;
}

/// Training micro-batches: whole ones per replica, and the schedule's own rules.
std::optional<std::string> explainInvalidMicroBatches(const Scenario& s) {
    const Strategy& st = s.strategy;
    const Workload& w = s.workload;
    if (w.globalBatch % (1LL * st.dp * st.microBatch) != 0) // wide: dp ≤ 2^30, mb ≤ 2^20
        return "global_batch " + str(w.globalBatch) +
               " is not divisible by dp × micro_batch = " + str(st.dp) + "×" + str(st.microBatch) +
               " = " + str(1LL * st.dp * st.microBatch) +
               "; each replica needs a whole number of micro-batches";
    const int mbs = microBatchesPerStep(s);
    if (auto why = scheduleModel(st.schedule).explainInvalid(st, mbs)) return why;
    return std::nullopt;
}

/// ZeRO sharding, its group, the gradient buckets and the placement order.
std::optional<std::string> explainInvalidSharding(const Strategy& st) {
    if (st.zeroStage < 0 || st.zeroStage > 3) return "strategy.zero_stage must be 0, 1, 2 or 3";
    if (st.shardGroup < 0 || (st.shardGroup > 0 && st.dp % st.shardGroup != 0))
        return "strategy.shard_group (" + str(st.shardGroup) + ") must divide dp (" + str(st.dp) +
               ")";
    if (st.bucketBytes <= 0) return "strategy.bucket_mb must be positive";
    for (int i = 0; i < kParallelDimCount; ++i)
        for (int j = i + 1; j < kParallelDimCount; ++j)
            if (st.placement[i] == st.placement[j])
                return "strategy.placement names " + std::string(toString(st.placement[i])) +
                       " twice; list each of tp, cp, ep, dp, pp once, innermost first";
    return std::nullopt;
}

/// DeepSpeed's legacy ZeRO-3 coordinator: a style of sharded training of dense layers.
std::optional<std::string> explainInvalidFsdpStyle(const Scenario& s) {
    if (s.strategy.fsdpStyle != FsdpStyle::DeepSpeedLegacy) return std::nullopt;
    if (s.workload.kind == WorkloadKind::Inference)
        return std::string("strategy.fsdp_style \"deepspeed-legacy\" describes ZeRO-3 training; "
                           "serving shards nothing: set it to \"overlapped\"");
    if (s.strategy.zeroStage < 3)
        return "strategy.fsdp_style \"deepspeed-legacy\" is how DeepSpeed's ZeRO stage 3 gathers "
               "parameters, but strategy.zero_stage is " + str(s.strategy.zeroStage) +
               ": set zero_stage to 3, or fsdp_style to \"overlapped\"";
    if (s.model.isMoe())
        return std::string("strategy.fsdp_style \"deepspeed-legacy\" is modelled for dense "
                           "layers only; a mixture-of-experts model needs \"overlapped\"");
    return std::nullopt;
}

} // namespace

std::optional<std::string> detail::explainInvalidLayered(const Scenario& s) {
    if (auto why = explainInvalidShape(s.model)) return why;
    if (auto why = detail::explainInvalidSystem(s)) return why;
    if (auto why = explainInvalidDegrees(s)) return why;
    if (auto why = explainInvalidStageSplit(s)) return why;
    if (auto why = explainInvalidRecomputeOffload(s)) return why;
    if (auto why = explainInvalidFsdpStyle(s)) return why;
    if (s.workload.kind == WorkloadKind::Inference) return explainInvalidServing(s);
    if (auto why = explainInvalidMicroBatches(s)) return why;
    return explainInvalidSharding(s.strategy);
}
} // namespace madmax
