// The seed's LLM files as a native scenario, so that our engine can predict the same run next
// to the reference computation. Every assumption the conversion makes is reported.
#include "madmax/error.hpp"
#include "madmax/report.hpp"
#include "madmax/result.hpp"
#include "madmax/scenario.hpp"
#include "madmax/scenario_io.hpp"
#include "madmax/seed.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace madmax::seed {

using nlohmann::json;

namespace {

/// The GPU preset nearest the seed system's 16-bit peak and HBM (its calibration is ours).
const Preset* nearestGpu(const System& s, const PresetLibrary& lib) {
    const Preset* best = nullptr;
    double bestScore = 1e300;
    for (const Preset* p : lib.list(PresetKind::Gpu)) {
        const json& j = p->json;
        if (p->id == "generic" || !j.contains("peak_tflops")) continue;
        const json& pk = j["peak_tflops"];
        const double f16 = pk.value("fp16", json(0)).is_number() ? pk["fp16"].get<double>() : 0.0;
        const double hbm = j.value("hbm_gb", 0.0);
        if (f16 <= 0 || hbm <= 0) continue;
        const double score = std::fabs(std::log(f16 * 1e12 / s.f16)) +
                             std::fabs(std::log(hbm * 1e9 / s.memCap));
        if (score < bestScore) {
            bestScore = score;
            best = p;
        }
    }
    return best;
}

int degreeOf(const Parallel& p, const std::string& kind) {
    for (std::size_t i = 0; i < p.kinds.size(); ++i)
        if (p.kinds[i] == kind) return p.degrees[i];
    return 1;
}

} // namespace

namespace {

/// What the native engine cannot take from the seed's files, refused with the reason and the
/// way round it.
void checkConvertible(const Model& m, const System& s, const Task& t, const std::string& file) {
    const bool vit = m.type == ModelType::Vit;
    if (vit && std::fmod(m.imageSize, m.patchDim) != 0)
        throw InputError(file, "patch_dim",
                         "image_size is not a multiple of patch_dim: the seed rounds the patch "
                         "count up, which no real ViT does; choose a patch that divides the image");
    if (m.type != ModelType::Llm && m.type != ModelType::LlmMoe && !vit)
        throw InputError(
            file, "type",
            "the seed's DLRM files define no interaction (every MLP layer is mlp_dim square and "
            "the pooled embeddings join the top MLP without a width), so they cannot become a "
            "native DLRM without inventing one; use --engine reference for them, or a native "
            "DLRM preset built from a published shape (dlrm-criteo-1tb, "
            "dlrm-dcnv2-criteo-1tb)");
    if (t.type == TaskType::Inference)
        throw InputError(file, "type",
                         "inference tasks do not convert: the seed's inference is one "
                         "prefill-only forward with no decode or KV cache, which the native "
                         "serving model (prefill and decode) does not reduce to; use --engine "
                         "reference");
    if (!(s.f16 > 0)) throw InputError(file, "f16_flops", "the native engine needs a 16-bit peak");
}

/// The system: the seed's datasheet numbers, with the calibration of the nearest preset GPU;
/// links per GPU and direction, raw (our tiers carry their own efficiency curves).
json seedSystemJson(const System& s, const PresetLibrary& lib,
                    std::vector<std::string>& assumptions) {
    const Preset* base = nearestGpu(s, lib);
    json gpu = base ? base->json : lib.find(PresetKind::Gpu, "generic")->json;
    gpu["id"] = "seed-gpu";
    gpu["name"] = s.name + " GPU";
    gpu["peak_tflops"] = {{"fp32", s.f32 > 0 ? json(s.f32 / 1e12) : json(nullptr)},
                          {"fp16", s.f16 / 1e12},
                          {"bf16", s.f16 / 1e12},
                          {"fp8", nullptr},
                          {"fp4", nullptr}};
    gpu["hbm_gb"] = s.memCap / 1e9;
    gpu["hbm_tbps"] = s.memBw / 1e12;
    gpu.erase("skus");
    assumptions.push_back("compute, HBM and link efficiencies from the " +
                          (base ? base->id : std::string("generic")) +
                          " preset's calibration (the seed's flat flops_util, mem_bw_util, "
                          "nvlink_util and ibroce_util are not used)");
    const int gpn = s.devices / s.nodes;
    json tiers = json::array();
    tiers.push_back({{"name", "NVLink (from the seed system)"},
                     {"kind", "scale_up"},
                     {"gpus", gpn},
                     {"gbps", s.nvlinks * s.bwPerNvlink / 2.0 / 1e9}});
    if (s.nodes > 1)
        tiers.push_back({{"name", "scale-out (from the seed system)"},
                         {"kind", "scale_out"},
                         {"gpus", s.devices},
                         {"gbps", s.ibPorts * s.ibBw / 2.0 / gpn / 1e9}});
    return {{"id", "seed-system"},
            {"name", s.name},
            {"gpu", gpu},
            {"gpus_per_node", gpn}, {"price_per_gpu_hour", s.pricePerGpuHour},
            {"tiers", tiers}};
}

/// The strategy: the transformer's degrees. ddp and fsdp are data parallel (fsdp: ZeRO-3);
/// the seed's tp on an MoE model means expert parallelism, carved out of DP (the seed's tp
/// group shared its local batch, EP ranks split it).
json seedStrategyJson(const Model& m, const Task& t, const std::string& file,
                      std::vector<std::string>& assumptions) {
    const Parallel& p = t.transformer;
    const bool moe = m.type == ModelType::LlmMoe;
    const int tp = moe ? 1 : degreeOf(p, "tp");
    const int ep = moe ? degreeOf(p, "tp") : 1;
    const bool fsdp = degreeOf(p, "fsdp") > 1;
    double microBatch = t.transformerBatch;
    if (moe && ep > 1) {
        if (std::fmod(t.transformerBatch, ep) != 0)
            throw InputError(file, "local_transformer_bs",
                             "the local batch does not split over the " + std::to_string(ep) +
                                 " expert-parallel ranks the seed's tp becomes natively");
        microBatch = t.transformerBatch / ep;
        assumptions.push_back("the seed's tp on an MoE model is read as expert parallelism: ep = " +
                              std::to_string(ep) + ", tp = 1, the local batch of " +
                              std::to_string((long long)t.transformerBatch) + " split over it");
    }
    if (degreeOf(t.emb, "mp") > 1)
        assumptions.push_back("the embedding's model parallelism (mp) is not modelled: the "
                              "native engine keeps a vocabulary-parallel embedding over TP");
    json strategy = {{"tp", tp},
                     {"pp", degreeOf(p, "pp")},
                     {"micro_batch", int(microBatch)},
                     {"zero_stage", fsdp ? 3 : 0},
                     {"sequence_parallel", false},
                     {"recompute", "none"}};
    if (moe) strategy["ep"] = ep;
    assumptions.push_back("no recompute, no sequence parallelism, ZeRO " +
                          std::string(fsdp ? "3 (the seed's fsdp)" : "0 (the seed's ddp)") +
                          ", bf16 GEMMs");
    return strategy;
}

/// The model: the seed's shape; a plain (non-gated) MLP, multi-head attention; the vocabulary
/// padded to a multiple of 128·TP as Megatron-LM does.
json seedModelJson(const Model& m, int tp, std::vector<std::string>& assumptions) {
    const bool vit = m.type == ModelType::Vit;
    const double pad = 128.0 * tp;
    const double vocab = vit ? 0.0 : std::ceil(m.vocab / pad) * pad;
    if (!vit && vocab != m.vocab)
        assumptions.push_back("vocabulary padded from " + std::to_string((long long)m.vocab) +
                              " to " + std::to_string((long long)vocab) +
                              " (a multiple of 128·TP, as Megatron-LM does)");
    json model = {{"id", "seed-model"},
                  {"name", m.name},
                  {"layers", m.transformerLayers},
                  {"hidden", m.hidden},
                  {"heads", m.heads},
                  {"kv_heads", m.heads},
                  {"gated_mlp", false}};
    if (vit) {
        // The seed's ViT: (image/patch)² patch tokens, 3·patch² inputs each; natively the
        // class token is added and a classifier head sits on it.
        model["vit"] = {{"image_size", m.imageSize},
                        {"patch_size", m.patchDim},
                        {"channels", 3},
                        {"classes", 1000}};
        assumptions.push_back("ViT: 3 channels and a 1000-class head (ImageNet-1k; the seed's "
                              "files state no classifier) and a class token, (image/patch)² + 1 "
                              "tokens (the seed uses (image/patch)²)");
    } else {
        model["vocab"] = vocab;
    }
    if (std::fmod(m.hidden, m.heads) != 0) {
        model["head_dim"] = std::floor(m.hidden / m.heads);
        assumptions.push_back("hidden is not divisible by the heads: head_dim rounded down to " +
                              std::to_string((long long)std::floor(m.hidden / m.heads)));
    }
    if (m.type == ModelType::LlmMoe) {
        model["arch"] = "moe";
        model["moe"] = {{"experts", m.experts},
                        {"top_k", m.activeExperts},
                        {"expert_ffn_hidden", m.fcDim}};
    } else {
        model["ffn_hidden"] = m.fcDim;
    }
    return model;
}

/// The seed's finetune: freeze_emb freezes the embedding, freeze_transformer every layer,
/// min_frozen_layer = M the layers from M up (gradients are reduced only below it). Natively a
/// frozen layer also skips its weight-gradient GEMMs, which the seed still charges.
json seedFrozenJson(const Model& m, const Task& t, const std::string& file,
                    std::vector<std::string>& assumptions) {
    json frozen = json::object();
    if (t.freezeEmb) frozen["embedding"] = true;
    const int L = m.transformerLayers;
    if (t.freezeTransformer)
        frozen["layers"] = L;
    else if (t.minFrozenLayer >= 0 && t.minFrozenLayer < L)
        frozen["layers"] = {{"first", t.minFrozenLayer}, {"count", L - t.minFrozenLayer}};
    if (frozen.empty())
        assumptions.push_back("finetune task with nothing frozen: the same as pre-training");
    else
        assumptions.push_back("finetune: frozen " + frozen.dump() +
                              "; natively frozen layers skip their weight-gradient GEMMs as well "
                              "as their gradient communication (the seed charges every backward "
                              "GEMM)");
    if (t.freezeEmb && t.freezeTransformer)
        throw InputError(file, "freeze_transformer",
                         "the embedding and every transformer layer are frozen; natively the LM "
                         "head alone would train, which the seed's files do not describe; "
                         "unfreeze one");
    return frozen;
}

} // namespace

json toScenarioJson(const Model& m, const System& s, const Task& t, const PresetLibrary& lib,
                    std::vector<std::string>& assumptions, const std::string& file) {
    checkConvertible(m, s, t, file);
    const bool vit = m.type == ModelType::Vit;
    const json system = seedSystemJson(s, lib, assumptions);
    const json strategy = seedStrategyJson(m, t, file, assumptions);
    const json model = seedModelJson(m, strategy["tp"].get<int>(), assumptions);
    const Parallel& p = t.transformer;
    double dupT = 1;
    for (std::size_t i = 0; i < p.kinds.size(); ++i)
        if (p.kinds[i] == "ddp" || p.kinds[i] == "fsdp") dupT *= p.degrees[i];
    const double global = t.transformerBatch * dupT;
    json workload = {{"kind", "training"},
                     {"global_batch", global},
                     {"precision", m.bytesNonEmb >= 4 ? "fp32" : "bf16"}};
    if (!vit) workload["seq_len"] = m.seqLen; // a ViT's follows from its image and patch
    if (t.type == TaskType::Finetune) {
        const json frozen = seedFrozenJson(m, t, file, assumptions);
        if (!frozen.empty()) workload["frozen"] = frozen;
    }
    return {{"schema", kScenarioSchema},
            {"name", m.name + " on " + s.name + " (" + t.name + ", from the seed's files)"},
            {"model", model},
            {"system", system},
            {"gpus", s.devices},
            {"strategy", strategy},
            {"workload", workload}};
}

namespace {
std::string line(const char* what, const std::string& ref, const std::string& nat) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "  %-28s %16s %16s\n", what, ref.c_str(), nat.c_str());
    return buf;
}
/// `text` as a bullet wrapped at 100 columns, continuation lines under its first word.
std::string bullet(const std::string& text) {
    std::string out = "  - ", word;
    std::size_t col = 4;
    auto flush = [&] {
        if (word.empty()) return;
        if (col > 4 && col + 1 + word.size() > 100) {
            out += "\n    ";
            col = 4;
        } else if (col > 4) {
            out += ' ';
            ++col;
        }
        out += word;
        col += word.size();
        word.clear();
    };
    for (char c : text) {
        if (c == ' ')
            flush();
        else
            word += c;
    }
    flush();
    return out + "\n";
}
/// Two times compared: "native 2.30x the reference", or both stated when one is zero.
std::string ratio(double native, double ref) {
    if (!(ref > 0) || !(native > 0))
        return "reference " + formatSeconds(ref) + ", native " + formatSeconds(native);
    char buf[48];
    std::snprintf(buf, sizeof buf, "native %.2fx the reference", native / ref);
    return buf;
}
bool uses(const Parallel& p, const char* kind) {
    return std::find(p.kinds.begin(), p.kinds.end(), kind) != p.kinds.end();
}
} // namespace

std::string formatComparison(const Model& m, const System& s, const Task& t,
                             const ReferenceResult& ref, const Result& r) {
    const double refCompute = ref.gemmS + ref.embS;
    const double refComm = ref.allToAllS + ref.allReduceS + ref.allGatherS + ref.reduceScatterS;
    const double natCompute = r.compute.totalS();
    const double natComm = r.serializedCommS();
    const double perS = r.samplesPerS;
    std::string o = "\nSide by side";
    o += std::string(29 - 12, ' ') + "       reference           native\n";
    o += line("step time", formatSeconds(ref.iterationS), formatSeconds(r.stepTimeS));
    o += line("compute (busy)", formatSeconds(refCompute), formatSeconds(natCompute));
    o += line("communication, serialized", formatSeconds(refComm), formatSeconds(natComm));
    o += line("exposed communication", formatSeconds(ref.exposedCommS),
              formatSeconds(r.exposedCommS));
    char q[2][40];
    std::snprintf(q[0], sizeof q[0], "%.4g /s", ref.throughputQps);
    std::snprintf(q[1], sizeof q[1], "%.4g /s", perS);
    o += line("samples per second", q[0], q[1]);
    o += line("memory per GPU", "not checked",
              formatBytes(r.memory.totalBytes()) + (r.memory.fits() ? " (fits)" : " (too big)"));

    o += "\nWhat differs, and why\n";
    o += bullet("compute: " + ratio(natCompute, refCompute) +
                ". The reference counts no attention-score FLOPs, no optimizer step and no "
                "pipeline bubble, and divides FLOPs by the peak times one flat flops_util (" +
                std::to_string(int(std::lround(s.flopsUtil * 100))) +
                "%) and HBM bytes by mem_bw_util; natively each GEMM gets the efficiency of its "
                "size from the nearest GPU preset's calibration (\"assumed\" above), attention "
                "its fused kernel, and the element-wise passes (norms, activations, optimizer) "
                "their HBM traffic.");
    std::string comm = "communication: " + ratio(natComm, refComm) +
                       ". The reference has no latency term and no (n-1)/n factor, and moves an "
                       "all-gather or reduce-scatter at twice the all-reduce bandwidth";
    if (s.nodes > 1) {
        // docs/reference/seed-format.md §1.2: per GPU, intra = links·(bw/2)·util, inter = ports·(bw/2)·util /
        // GPUs per node, AR across nodes = p·intra + (1-p)·inter.
        const double intra = s.nvlinks * s.bwPerNvlink / 2 * s.nvlinkUtil;
        const double inter = s.ibPorts * s.ibBw / 2 * s.ibUtil / (double(s.devices) / s.nodes);
        const double blend = s.arPercIntra * intra + (1 - s.arPercIntra) * inter;
        char buf[260];
        std::snprintf(buf, sizeof buf,
                      "; a collective across the %d nodes runs at the arithmetic blend "
                      "%.0f%% NVLink + %.0f%% network (ar_perc_intra) = %.3g GB/s per GPU, where "
                      "the network alone gives %.3g GB/s",
                      s.nodes, s.arPercIntra * 100, (1 - s.arPercIntra) * 100, blend / 1e9,
                      inter / 1e9);
        comm += buf;
    }
    const bool fsdp2d = (uses(t.mlp, "fsdp") && t.mlp.kinds.size() >= 2) ||
                        (uses(t.transformer, "fsdp") && t.transformer.kinds.size() >= 2);
    if (fsdp2d)
        comm += "; its FSDP collectives take the first level (NVLink) whatever the group spans";
    o += bullet(comm + ". Natively each collective crosses the tiers its group spans, the "
                       "slowest bounding it, each at its latency and calibrated bandwidth.");
    const double natA2a = r.collectiveTotal(Collective::AllToAll).serializedS;
    if (m.type == ModelType::LlmMoe && (ref.allToAllS > 0 || natA2a > 0))
        o += bullet("all-to-all: " + ratio(natA2a, ref.allToAllS) +
                    ". The reference moves b·s·h·bytes/E per dispatch or combine (1/" +
                    std::to_string(m.experts) +
                    " of one copy of the batch, docs/reference/seed-format.md §1.5); natively each token's " +
                    std::to_string(m.activeExperts) +
                    " routed copies travel to the GPUs holding their experts, the share of "
                    "destinations off the GPU over NVLink or the network.");
    o += bullet("exposed: " + ratio(r.exposedCommS, ref.exposedCommS) +
                ". The reference's overlap follows its files' issue order (a FIFO of "
                "collectives, each waiting on named compute); natively a collective hides "
                "behind the compute its two-stream schedule can run beside it.");
    if (!r.memory.fits())
        o += bullet("memory: the reference checks none; natively this needs " +
                    formatBytes(r.memory.totalBytes()) + " per GPU of " +
                    formatBytes(r.memory.capacityBytes) + ": it does not fit (" +
                    formatBytes(-r.memory.marginBytes()) + " over), so no such run exists.");
    else
        o += bullet("memory: the reference checks none; natively it fits (" +
                    formatBytes(r.memory.marginBytes()) + " to spare).");
    return o;
}

} // namespace madmax::seed
