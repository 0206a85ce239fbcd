// Strict reading of the seed's model, system and task files (docs/reference/seed-format.md §1 and §1.8).
#include "files/embedded_presets.hpp"
#include "madmax/error.hpp"
#include "madmax/file_io.hpp"
#include "madmax/json_reader.hpp"
#include "madmax/seed.hpp"

#include <algorithm>
#include <filesystem>
#include <utility>

namespace madmax::seed {

using nlohmann::json;

namespace {

constexpr double kBig = 1e18;

ModelType modelType(const std::string& t) {
    if (t == "DLRM") return ModelType::Dlrm;
    if (t == "DLRM_MoE") return ModelType::DlrmMoe;
    if (t == "DLRM_Transformer") return ModelType::DlrmTransformer;
    if (t == "LLM") return ModelType::Llm;
    if (t == "LLM_MoE") return ModelType::LlmMoe;
    return ModelType::Vit;
}

/// A parallel strategy: a list of names and a list of degrees of the same length.
Parallel parallel(ObjectReader& r, const std::string& key, const std::vector<std::string>& allowed,
                  bool required) {
    Parallel p;
    const std::string degreesKey = key + "_degree";
    if (!r.has(key) && !required) {
        r.ignore(key);
        r.ignore(degreesKey);
        return p;
    }
    const json& kinds = r.raw(key);
    const json& degrees = r.raw(degreesKey);
    std::string list;
    for (const auto& a : allowed)
        list += (list.empty() ? "" : ", ") + a;
    if (!kinds.is_array() || kinds.empty())
        r.fail(key, "expected a non-empty list of strategies (" + list + ")");
    if (!degrees.is_array() || degrees.size() != kinds.size())
        r.fail(degreesKey, "expected a list of " + std::to_string(kinds.size()) +
                               " degrees, one per entry of " + key);
    for (std::size_t i = 0; i < kinds.size(); ++i) {
        if (!kinds[i].is_string() ||
            std::find(allowed.begin(), allowed.end(), kinds[i].get<std::string>()) ==
                allowed.end())
            r.fail(key, kinds[i].dump() + " is not a strategy here; use " + list);
        const std::string k = kinds[i].get<std::string>();
        if (std::find(p.kinds.begin(), p.kinds.end(), k) != p.kinds.end())
            r.fail(key, "\"" + k + "\" appears twice (the reference code asserts each once)");
        const json& d = degrees[i];
        if (!d.is_number_integer() || d.get<long long>() < 2 || d.get<long long>() > (1 << 24))
            r.fail(degreesKey, "degree " + d.dump() + " of " + k +
                                   " must be a whole number from 2 to 16777216 (the reference "
                                   "code asserts every degree > 1)");
        p.kinds.push_back(k);
        p.degrees.push_back(int(d.get<long long>()));
    }
    return p;
}

/// The name, and the descriptive keys the shipped copies add (where they come from).
std::string readName(ObjectReader& r) {
    r.ignore("source");
    r.ignore("notes");
    return r.string("name", "");
}

} // namespace

std::vector<std::string> builtinIds(const std::string& kind) {
    std::vector<std::string> out;
    const std::string prefix = "seed/" + kind + "/";
    for (int i = 0; i < detail::kEmbeddedPresetCount; ++i) {
        const std::string path = detail::kEmbeddedPresets[i].path;
        if (path.rfind(prefix, 0) == 0)
            out.push_back(path.substr(prefix.size(), path.size() - prefix.size() - 5));
    }
    return out;
}

json loadFile(const std::string& kind, const std::string& pathOrId) {
    std::error_code ec;
    if (std::filesystem::exists(pathOrId, ec)) return readJsonFile(pathOrId);
    const std::string want = "seed/" + kind + "/" + pathOrId + ".json";
    if (const char* text = detail::embeddedPresetText(want))
        return parseJsonText(text, "presets/" + want);
    const auto ids = builtinIds(kind);
    const auto near = didYouMean(pathOrId, ids);
    throw InputError(pathOrId, "",
                     "no such file, nor a shipped seed " + kind.substr(0, kind.size() - 1) +
                         " by that id" + (near ? " (did you mean \"" + *near + "\"?)" : "") +
                         "; `madmax presets list` lists them");
}

Model parseModel(const json& j, const std::string& file) {
    ObjectReader r(j, file, "");
    Model m;
    m.name = readName(r);
    const std::string type = r.choice(
        "type", {"DLRM", "DLRM_MoE", "DLRM_Transformer", "LLM", "LLM_MoE", "ViT"}, "DLRM");
    if (!r.has("type")) r.fail("type", "required: DLRM, DLRM_MoE, DLRM_Transformer, LLM, LLM_MoE or ViT");
    m.type = modelType(type);
    for (auto [key, out] : {std::pair{"bytes_per_nonemb_param", &m.bytesNonEmb},
                            {"bytes_per_emb_param", &m.bytesEmb}}) {
        *out = double(r.integer(key, 1, 8));
        if (*out != 1 && *out != 2 && *out != 4 && *out != 8)
            r.fail(key, "must be 1, 2, 4 or 8 bytes (it picks the i8, f16, f32 or f64 peak)");
    }
    const bool dlrm = m.type == ModelType::Dlrm || m.type == ModelType::DlrmMoe ||
                      m.type == ModelType::DlrmTransformer;
    const bool transformer = m.type != ModelType::Dlrm && m.type != ModelType::DlrmMoe;
    if (dlrm) {
        m.bottomLayers = int(r.integer("num_bot_mlp_layers", 1, 10000));
        m.topLayers = int(r.integer("num_top_mlp_layers", 1, 10000));
        m.mlpDim = double(r.integer("mlp_dim", 1, 1LL << 24));
        m.tables = double(r.integer("num_tables", 1, 1LL << 30));
        m.rowsPerTable = double(r.integer("entries_per_table", 1, 1LL << 40));
        m.embDim = double(r.integer("emb_dim", 1, 1LL << 20));
        m.pooling = r.number("pooling_size", 0, 1e9, true);
    } else {
        for (const char* k : {"num_bot_mlp_layers", "num_top_mlp_layers", "mlp_dim", "num_tables",
                              "emb_dim", "pooling_size"})
            if (r.has(k))
                r.fail(k, "belongs to DLRM models; a " + type + " model does not take it");
    }
    if (m.type == ModelType::DlrmMoe || m.type == ModelType::LlmMoe) {
        m.experts = int(r.integer("num_experts", 1, 1 << 20));
        m.activeExperts = int(r.integer("num_active_experts", 1, 1 << 20));
        if (m.activeExperts > m.experts)
            r.fail("num_active_experts", "cannot exceed num_experts (" +
                                             std::to_string(m.experts) + ")");
    }
    if (transformer) {
        m.transformerLayers = int(r.integer("num_transformer_layers", 1, 10000));
        m.heads = int(r.integer("num_transformer_heads", 1, 1 << 20));
        m.hidden = double(r.integer("attention_dim", 1, 1LL << 24));
        m.fcDim = double(r.integer("transformer_fc_dim", 1, 1LL << 26));
        if (m.type == ModelType::Vit) {
            m.imageSize = double(r.integer("image_size", 1, 1 << 20));
            m.patchDim = double(r.integer("patch_dim", 1, 1 << 20));
            if (m.patchDim > m.imageSize)
                r.fail("patch_dim", "is larger than image_size");
        } else {
            m.seqLen = double(r.integer("transformer_seq_len", 1, 1LL << 30));
        }
        if (m.type == ModelType::Llm || m.type == ModelType::LlmMoe)
            m.vocab = double(r.integer("entries_per_table", 1, 1LL << 32));
    }
    r.finish();
    return m;
}

System parseSystem(const json& j, const std::string& file) {
    ObjectReader r(j, file, "");
    System s;
    s.name = readName(r);
    r.choice("type", {"GPU"}, "GPU");
    s.devices = int(r.integer("num_devices", 1, 1 << 24));
    s.nodes = int(r.integer("num_nodes", 1, 1 << 24));
    if (s.devices % s.nodes != 0)
        r.fail("num_nodes", std::to_string(s.nodes) + " nodes do not divide " +
                                std::to_string(s.devices) + " devices evenly");
    s.f64 = r.number("f64_flops", 0, kBig);
    s.f32 = r.number("f32_flops", 0, kBig);
    s.f16 = r.number("f16_flops", 0, kBig);
    s.i8 = r.number("i8_ops", 0, kBig);
    s.flopsUtil = r.number("flops_util", 0, 1, true);
    s.memCap = r.number("mem_cap", 0, kBig, true);
    s.memBw = r.number("mem_bw", 0, kBig, true);
    s.memBwUtil = r.number("mem_bw_util", 0, 1, true);
    s.nvlinks = r.number("num_nvlinks", 0, 1e6, true);
    s.bwPerNvlink = r.number("bw_per_nvlink", 0, kBig, true);
    s.nvlinkUtil = r.number("nvlink_util", 0, 1, true);
    s.ibPorts = r.number("num_ibroce_ports", 0, 1e6);
    s.ibBw = r.number("ibroce_bw", 0, kBig);
    s.ibUtil = r.number("ibroce_util", 0, 1);
    s.arPercIntra = r.number("ar_perc_intra", 0, 1);
    // This project's additions from the artifact's cloud workbook (the shipped cloud files carry
    // them): what a GPU-hour costs and the node's power per GPU. The reference code reads
    // neither; cost and energy tables do.
    s.pricePerGpuHour = r.number("price_per_gpu_hour", 0, 1e4, 0.0);
    s.powerPerGpuW = r.number("power_per_gpu_w", 0, 1e5, 0.0);
    // Across nodes every collective's last tier is the network: each of its three numbers
    // must be positive (the reference code would divide by zero). Name the one that is not.
    if (s.nodes > 1)
        for (const auto& [key, value] : {std::pair{"num_ibroce_ports", s.ibPorts},
                                         std::pair{"ibroce_bw", s.ibBw},
                                         std::pair{"ibroce_util", s.ibUtil}})
            if (!(value > 0))
                r.fail(key, "is 0, but a multi-node system (" + std::to_string(s.nodes) +
                                " nodes) needs num_ibroce_ports, ibroce_bw and ibroce_util "
                                "above 0: its collectives cross the network");
    if (s.nodes == 1 && s.arPercIntra != 1.0)
        r.fail("ar_perc_intra", "must be 1 on a single node (the reference code asserts it)");
    r.finish();
    return s;
}

Task parseTask(const json& j, const std::string& file) {
    ObjectReader r(j, file, "");
    Task t;
    t.name = readName(r);
    const std::string type = r.choice("type", {"pretrain", "inference", "finetune"}, "pretrain");
    if (!r.has("type")) r.fail("type", "required: pretrain, inference or finetune");
    t.type = type == "pretrain"    ? TaskType::Pretrain
             : type == "inference" ? TaskType::Inference
                                   : TaskType::Finetune;
    t.mlp = parallel(r, "mlp_parallel", {"ddp", "fsdp", "tp", "pp"}, false);
    t.emb = parallel(r, "emb_parallel", {"mp", "ddp"}, true);
    t.transformer = parallel(r, "transformer_parallel", {"ddp", "fsdp", "tp", "pp"}, false);
    t.mlpBatch = r.has("local_mlp_bs") ? double(r.integer("local_mlp_bs", 1, 1LL << 30)) : 0;
    if (!r.has("local_mlp_bs")) r.ignore("local_mlp_bs");
    t.embBatch = double(r.integer("local_emb_bs", 1, 1LL << 30));
    t.transformerBatch =
        r.has("local_transformer_bs") ? double(r.integer("local_transformer_bs", 1, 1LL << 30)) : 0;
    if (!r.has("local_transformer_bs")) r.ignore("local_transformer_bs");
    t.freezeTop = r.boolean("freeze_top_mlp", false);
    t.freezeBottom = r.boolean("freeze_bot_mlp", false);
    t.freezeEmb = r.boolean("freeze_emb", false);
    t.freezeTransformer = r.boolean("freeze_transformer", false);
    t.minFrozenLayer = int(r.integer("min_frozen_layer", -1, 1 << 20, -1));
    r.finish();
    return t;
}

} // namespace madmax::seed
