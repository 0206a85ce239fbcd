// Scenarios and their parts written back as JSON; parseScenario(toJson(s)) reproduces s.
#include "madmax/scenario_io.hpp"
#include "madmax/strategy_numbers.hpp"
#include "madmax/strategy_switches.hpp"

#include <algorithm>
#include <cmath>

namespace madmax {

using nlohmann::json;

namespace {

json curveJson(const LogCurve& c) {
    json a = json::array();
    for (const auto& [x, y] : c.points())
        a.push_back({x, y});
    return a;
}

json linkJson(const LinkCalibration& l) {
    return {{"latency_us", l.latencyS * 1e6},
            {"efficiency", curveJson(l.efficiency)},
            {"all_reduce_speedup", l.allReduceSpeedup},
            {"all_to_all_efficiency", l.allToAllEfficiency}};
}

} // namespace

/// A DLRM model's block: its dense part, interaction and table groups.
static json dlrmJson(const DlrmShape& d) {
    json tables = json::array();
    for (const auto& t : d.tables) {
        const char* prec = t.bytesPerElement == 4   ? "fp32"
                           : t.bytesPerElement == 2 ? "fp16"
                           : t.bytesPerElement == 1 ? "int8"
                                                    : "int4";
        tables.push_back({{"name", t.name},
                          {"count", t.count},
                          {"rows", t.rows},
                          {"dim", t.dim},
                          {"pooling", t.pooling},
                          {"precision", prec}});
    }
    json dj = {{"dense_features", d.denseFeatures},
               {"bottom_mlp", d.bottomMlp},
               {"top_mlp", d.topMlp},
               {"interaction", std::string(toString(d.interaction))},
               {"tables", tables}};
    if (d.interaction == DlrmInteraction::Dcnv2) {
        dj["dcn_layers"] = d.dcnLayers;
        dj["dcn_low_rank"] = d.dcnLowRank;
    }
    if (d.interaction == DlrmInteraction::Transformer) {
        dj["transformer_layers"] = d.transformerLayers;
        dj["transformer_heads"] = d.transformerHeads;
    }
    if (d.topExperts > 0) {
        dj["top_experts"] = d.topExperts;
        dj["top_k"] = d.topK;
    }
    return dj;
}

json toJson(const Model& m) {
    if (m.isDlrm())
        return {{"id", m.id}, {"name", m.name}, {"source", m.source}, {"arch", "dlrm"},
                {"dlrm", dlrmJson(m.dlrm)}};
    json j = {{"id", m.id},
              {"name", m.name},
              {"source", m.source},
              {"arch", m.arch == ModelArch::Moe ? "moe" : "dense"},
              {"layers", m.layers},
              {"hidden", m.hidden},
              {"heads", m.heads},
              {"gated_mlp", m.gatedMlp},
              {"vocab", m.vocab},
              {"tied_embeddings", m.tiedEmbeddings},
              {"causal", m.causal},
              {"max_seq_len", m.maxSeqLen},
              {"sliding_window", m.slidingWindow},
              {"sliding_window_every", m.slidingWindowEvery}};
    if (m.ffnHidden > 0) j["ffn_hidden"] = m.ffnHidden;
    if (m.vit) {
        for (const char* k : {"vocab", "tied_embeddings", "causal", "max_seq_len"})
            j.erase(k);
        j["vit"] = {{"image_size", m.vitShape.imageSize},
                    {"patch_size", m.vitShape.patchSize},
                    {"channels", m.vitShape.channels},
                    {"classes", m.vitShape.classes}};
    }
    if (m.mla) {
        const MlaShape& a = m.mlaShape;
        j["mla"] = {{"q_lora_rank", a.qLoraRank},
                    {"kv_lora_rank", a.kvLoraRank},
                    {"qk_nope_head_dim", a.qkNopeDim},
                    {"qk_rope_head_dim", a.qkRopeDim},
                    {"v_head_dim", a.vHeadDim}};
    } else {
        j["kv_heads"] = m.kvHeads;
        j["head_dim"] = m.headDim;
    }
    if (m.arch == ModelArch::Moe) {
        const MoeShape& e = m.moe;
        j["moe"] = {{"experts", e.experts},
                    {"top_k", e.topK},
                    {"expert_ffn_hidden", e.expertFfn},
                    {"shared_experts", e.sharedExperts},
                    {"dense_layers", e.denseLayers},
                    {"moe_layer_freq", e.layerFreq},
                    {"capacity_factor", e.capacityFactor},
                    {"load_imbalance", e.loadImbalance},
                    {"expert_bias", e.expertBias},
                    {"glu_clamp", e.gluClamp}};
    }
    return j;
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
        {"peak_exp_tera_per_s", g.expPerS > 0 ? json(g.expPerS / 1e12) : json(nullptr)},
        {"calibration",
         {{"gemm_efficiency", curveJson(c.gemmEfficiency)},
          {"attention_efficiency", c.attentionEfficiency},
          {"memory_efficiency", c.memoryEfficiency},
          {"kernel_launch_us", c.kernelLaunchS * 1e6},
          {"low_precision_gemm_scale", c.lowPrecisionGemmScale},
          {"decode_memory_efficiency", c.decodeMemoryEfficiency},
          {"mla_decode_efficiency", c.mlaDecodeEfficiency},
          {"mla_decode_memory_efficiency", c.mlaDecodeMemoryEfficiency},
          {"decode_kernel_overhead_us", c.decodeKernelOverheadS * 1e6},
          {"kv_cache_fraction", c.kvCacheFraction},
          {"host_op_us", std::round(c.hostOpS * 1e12) / 1e6},
          {"all_to_all_overhead_us", std::round(c.allToAllOverheadS * 1e12) / 1e6}, // to 1 ps
          {"deepep_nvlink_efficiency", c.deepEpScaleUpEfficiency},
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
                         {"all_reduce_speedup", t.allReduceSpeedup},
                         {"all_to_all_efficiency", t.allToAllEfficiency}});
    return {{"id", s.id},
            {"name", s.name},
            {"source", s.source},
            {"gpu", toJson(s.gpu)},
            {"gpus_per_node", s.gpusPerNode},
            {"reserve_gb", s.reserveBytes / 1e9},
            {"price_per_gpu_hour", s.pricePerGpuHour},
            {"host_link_gbps", s.hostLinkBytesPerS / 1e9},
            {"gather_algorithm", s.flatRingGathers ? "flat_ring" : "hierarchical"},
            {"all_reduce_algorithm", s.allReduceAlgorithm == AllReduceAlgorithm::Ring   ? "ring"
                                     : s.allReduceAlgorithm == AllReduceAlgorithm::Tree ? "tree"
                                                                                        : "auto"},
            {"tiers", tiers}};
}

json toJson(const Strategy& st) {
    json placement = json::array();
    for (ParallelDim d : st.placement)
        placement.push_back(std::string(toString(d)));
    json out = {{"recompute", std::string(toString(st.recompute))},
            {"schedule", std::string(toString(st.schedule))},
            {"moe_dispatcher", st.dispatcher == MoeDispatcher::DeepEp ? "deepep" : "all_to_all"},
            {"fsdp_unit", st.fsdpPerTensor ? "tensor" : "layer"},
            {"fsdp_style", std::string(toString(st.fsdpStyle))},
            {"placement", placement}};
    for (const StrategyNumber& n : strategyNumbers()) {
        if (n.integer())
            out[std::string(n.key)] = st.*n.intMember;
        else
            out[std::string(n.key)] = n.get(st);
    }
    for (const StrategySwitch& sw : strategySwitches()) out[std::string(sw.key)] = st.*sw.member;
    return out;
}

json toJson(const Workload& w) {
    if (w.kind == WorkloadKind::Inference) {
        const InferenceWorkload& i = w.inference;
        json out = {{"kind", "inference"},
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
                {"phase", std::string(toString(i.phase))},
                {"prefix_cache_hit", i.prefixCacheHit},
                {"attention", std::string(toString(w.attention))}};
        if (i.requests > 0) out["requests"] = i.requests;
        if (i.meanLoad != 1) out["mean_load"] = i.meanLoad;
        if (i.mlaDecode != MlaDecode::Absorbed)
            out["mla_decode"] = std::string(toString(i.mlaDecode));
        if (i.prefixCacheTier != PrefixCacheTier::Gpu) {
            out["prefix_cache_tier"] = std::string(toString(i.prefixCacheTier));
            out["prefix_cache_load_gbps"] = i.prefixCacheLoadBytesPerS / 1e9;
        }
        if (i.draftTokens > 0 || i.acceptanceRate != 0.85 || i.draftLayers != 1) {
            out["draft_tokens"] = i.draftTokens;
            out["acceptance_rate"] = i.acceptanceRate;
            out["draft_layers"] = i.draftLayers;
        }
        return out;
    }
    json out = {{"kind", "training"},
            {"global_batch", w.globalBatch},
            {"seq_len", w.seqLen},
            {"precision", std::string(toString(w.precision))},
            {"grad_reduce_precision", std::string(toString(w.gradReducePrecision))},
            {"optimizer", std::string(toString(w.optimizer))},
            {"step_overhead_ms", w.stepOverheadS * 1e3},
            {"micro_batch_overhead_ms", w.microBatchOverheadS * 1e3},
            {"input_read_gbps", w.inputReadBytesPerS / 1e9},
            {"fp8_scaling", std::string(toString(w.lowPrecisionScaling))},
            {"attention", std::string(toString(w.attention))}};
    const Frozen& f = w.frozen;
    if (f.lora()) {
        out["lora"] = {{"rank", f.loraRank}, {"targets", std::string(toString(f.loraTargets))}};
        if (f.loraBaseBytes < 2.0)
            out["lora"]["base_precision"] = f.loraBaseBytes < 1.0 ? "nf4" : "fp8";
    } else if (f.any()) { // only what is frozen: every key defaults to not frozen
        json fr = json::object();
        if (f.embedding) fr["embedding"] = true;
        if (f.head) fr["head"] = true;
        if (f.bottomMlp) fr["bottom_mlp"] = true;
        if (f.topMlp) fr["top_mlp"] = true;
        if (f.layers > 0) {
            if (f.firstLayer == 0)
                fr["layers"] = f.layers;
            else
                fr["layers"] = {{"first", f.firstLayer}, {"count", f.layers}};
        }
        out["frozen"] = std::move(fr);
    }
    return out;
}

json toJson(const Scenario& s) {
    json out = {{"schema", kScenarioSchema},  {"name", s.name}, {"model", toJson(s.model)},
                {"system", toJson(s.system)}, {"gpus", s.gpus}, {"strategy", toJson(s.strategy)},
                {"workload", toJson(s.workload)}};
    if (s.model.isDlrm()) {
        // Samples, not sequences; the embedding plan and optimizer.
        json& w = out["workload"];
        w.erase("seq_len");
        w["emb_optimizer"] = std::string(toString(s.workload.embOptimizer));
        writeDlrmPlan(out["strategy"], s.strategy.dlrm, int(s.model.dlrm.tables.size()), true);
    }
    return out;
}

void writeDlrmPlan(json& st, const DlrmPlan& p, int groups, bool compact) {
    groups = std::clamp(groups, 1, kMaxTableGroups);
    bool same = true;
    for (int i = 1; i < groups; ++i)
        same = same && p.sharding[i] == p.sharding[0];
    if (compact && same && p.listed == 0) {
        st["emb_sharding"] = std::string(toString(p.sharding[0]));
    } else {
        json a = json::array();
        for (int i = 0; i < groups; ++i)
            a.push_back(std::string(toString(p.sharding[i])));
        st["emb_sharding"] = a;
    }
    st["emb_group_size"] = p.groupSize;
    st["sparse_pipeline"] = p.pipelineSparse;
    st["emb_kernels"] = p.perTableKernels ? "per_table" : "fused";
}

} // namespace madmax
