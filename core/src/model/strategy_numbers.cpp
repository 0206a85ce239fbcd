#include "madmax/strategy_numbers.hpp"

#include <array>

namespace madmax {

namespace {
using G = StrategyNumber::Group;
constexpr double kDegreeMax = 1 << 20;

/// An integer field.
constexpr StrategyNumber whole(std::string_view key, std::string_view alias, int Strategy::*m,
                               double min, double max, double byDefault, G group,
                               std::string_view label, std::string_view help,
                               std::string_view allowed = {}) {
    return {key, alias, m, nullptr, min, max, byDefault, 1.0, group, label, help, allowed};
}
/// A real field stored as file value × scale.
constexpr StrategyNumber real(std::string_view key, double Strategy::*m, double min, double max,
                              double byDefault, double scale, G group, std::string_view label,
                              std::string_view help) {
    return {key, {}, nullptr, m, min, max, byDefault, scale, group, label, help, {}};
}

constexpr StrategyNumber dataParallel() {
    StrategyNumber n = whole("dp", {}, &Strategy::dp, 1, 1 << 30, 1, G::Degrees, "DP",
                             "Data-parallel replicas; changing DP changes the GPU count. A file "
                             "that omits it gets GPUs ÷ (TP × PP × CP).");
    n.derivedDefault = true;
    return n;
}

constexpr std::array kNumbers{
    whole("tp", {}, &Strategy::tp, 1, kDegreeMax, 1, G::Degrees, "TP",
          "Tensor parallel degree: splits every layer's GEMMs and heads (Shoeybi et al. 2019). "
          "Must divide the heads, KV heads, FFN width and vocabulary."),
    whole("pp", {}, &Strategy::pp, 1, kDegreeMax, 1, G::Degrees, "PP",
          "Pipeline stages: splits the layers (Narayanan et al. SC21). Must divide the layers (or "
          "use an uneven split in the file)."),
    whole("vp", {}, &Strategy::vp, 1, kDegreeMax, 1, G::Degrees, "Virtual stages",
          "Model chunks per GPU with the interleaved schedule: bubble ÷ v at v × the "
          "point-to-point traffic."),
    whole("cp", {}, &Strategy::cp, 1, kDegreeMax, 1, G::Degrees, "CP",
          "Context parallel: splits the sequence; K and V blocks circulate while attention "
          "computes."),
    dataParallel(),
    whole("micro_batch", "mb", &Strategy::microBatch, 1, kDegreeMax, 1, G::Degrees,
          "Micro-batch",
          "Sequences per micro-batch per GPU; gradient accumulation = global batch / (DP × "
          "micro-batch)."),
    whole("zero_stage", "zero", &Strategy::zeroStage, 0, 3, 0, G::Memory, "ZeRO stage",
          "What data-parallel ranks shard (Rajbhandari et al. SC20): 1 the optimizer state, 2 "
          "also the gradients, 3 also the weights (FSDP)."),
    whole("shard_group", {}, &Strategy::shardGroup, 0, 1 << 30, 0, G::Memory, "Shard group",
          "Hybrid sharding (FSDP HYBRID_SHARD, ZeRO++ hpZ): ZeRO shards over groups of this many "
          "DP ranks and replicates across groups; 0 = all DP ranks."),
    real("bucket_mb", &Strategy::bucketBytes, 1e-3, 1e6, 40.0, 1e6, G::Memory,
         "Gradient bucket (MB)",
         "Gradient-reduction bucket size in MB (PyTorch DDP bucket_cap_mb; Megatron's default "
         "40 MB): each bucket is one collective, launched when its gradients are ready."),
    whole("recompute_layers", "rl", &Strategy::recomputeLayers, 0, kDegreeMax, 0, G::Memory,
          "Layers recomputed per chunk",
          "With full recompute: recompute only the first n layers of each model chunk and keep "
          "the others' activations (Megatron-Core recompute_method \"block\", "
          "recompute_num_layers); 0 recomputes every layer. Fewer layers recomputed: less extra "
          "forward work, more activation memory."),
    whole("offload_layers", {}, &Strategy::offloadLayers, 0, kDegreeMax, 0, G::Memory,
          "Layers offloaded to host",
          "Activation offloading (Megatron-Core cpu_offloading_num_layers): the first n layers' "
          "activations go to host memory in the forward pass and come back in the backward, "
          "over the system's host link (host_link_gbps), overlapping the following layers. "
          "Megatron-Core allows it with PP 1, no recompute and no CUDA graphs; 0 = off."),
    whole("fsdp_prefetch", {}, &Strategy::fsdpPrefetch, 0, 1, 1, G::Memory, "FSDP prefetch",
          "ZeRO-3 / FSDP: 1 gathers the next layer's weights while this one computes (FSDP's "
          "default forward prefetch), 0 gathers each layer just before it runs.",
          "ZeRO-3: 1 = gather the next layer during this one, 0 = just before it"),
    whole("first_stage_layers", "first", &Strategy::firstStageLayers, 0, 100000, 0,
          G::Pipeline, "First stage layers",
          "Uneven pipeline split: the layers on the first stage (it also holds the embedding); "
          "0 = an even split."),
    whole("last_stage_layers", "last", &Strategy::lastStageLayers, 0, 100000, 0, G::Pipeline,
          "Last stage layers",
          "Uneven pipeline split: the layers on the last stage (it also holds the LM head and "
          "the loss); 0 = an even split."),
    whole("ep", {}, &Strategy::ep, 1, kDegreeMax, 1, G::MixtureOfExperts, "EP",
          "MoE expert parallel: the routed experts split over EP ranks carved out of DP × CP "
          "(Megatron-Core parallel folding). EP divides only the experts, not attention; it "
          "must divide the expert count, and EP × ETP must divide TP × CP × DP."),
    whole("etp", {}, &Strategy::etp, 1, kDegreeMax, 1, G::MixtureOfExperts, "ETP",
          "MoE expert tensor parallel: each expert's FFN split over ETP ranks (independent of "
          "the attention's TP); must divide the expert width."),
    whole("moe_node_limit", {}, &Strategy::moeNodeLimit, 0, kDegreeMax, 0, G::MixtureOfExperts,
          "Node limit",
          "Node-limited routing (DeepSeek-V3: 4): each token reaches at most this many nodes, "
          "cutting the all-to-all's network bytes; 0 = off."),
    real("moe_comm_sm_fraction", &Strategy::moeCommSmFraction, 0, 0.9, 0.15, 1.0,
         G::MixtureOfExperts, "SMs held by communication",
         "Share of the SMs the all-to-all kernels hold while they overlap compute (DeepEP "
         "normal kernels: 20 of 132 on H800 ≈ 0.15): a compute slowdown during the overlap."),
    whole("redundant_experts", {}, &Strategy::redundantExperts, 0, 1 << 16, 0,
          G::MixtureOfExperts, "Redundant experts",
          "Serving: extra copies of the hottest experts beyond the routed ones (EPLB, "
          "DeepSeek-V3 report §3.4); the EP group holds experts + this many, evenly."),
};
} // namespace

std::span<const StrategyNumber> strategyNumbers() { return kNumbers; }

const StrategyNumber* findStrategyNumber(std::string_view name) {
    for (const StrategyNumber& n : kNumbers)
        if (n.named(name)) return &n;
    return nullptr;
}

} // namespace madmax
