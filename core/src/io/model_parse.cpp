// Strict parsing of a model: its transformer shape with MoE, MLA, sliding windows and ViT
// patches, or a recommendation model's tables, MLPs and interaction.
#include "madmax/error.hpp"
#include "madmax/json_reader.hpp"
#include "madmax/scenario_io.hpp"

#include "io/preset_identity.hpp"

namespace madmax {

using detail::readIdentity;
using nlohmann::json;

namespace {

MoeShape parseMoe(const json& j, const std::string& file, const std::string& path) {
    ObjectReader r(j, file, path);
    MoeShape moe;
    moe.experts = int(r.integer("experts", 1, 1 << 16));
    moe.topK = int(r.integer("top_k", 1, 1 << 16));
    moe.expertFfn = r.integer("expert_ffn_hidden", 1, 1LL << 32);
    moe.sharedExperts = int(r.integer("shared_experts", 0, 1 << 16, 0));
    moe.denseLayers = int(r.integer("dense_layers", 0, 100000, 0));
    moe.layerFreq = int(r.integer("moe_layer_freq", 1, 100000, 1));
    moe.capacityFactor = r.number("capacity_factor", 0, 1e4, 0.0);
    r.record("capacity_factor", "0 (or absent) = dropless; else ≥ 1: tokens per expert × the mean");
    if (moe.capacityFactor > 0 && moe.capacityFactor < 1)
        r.fail("capacity_factor",
               "must be 0 (dropless) or at least 1, got " + std::to_string(moe.capacityFactor));
    moe.loadImbalance = r.number("load_imbalance", 1, 1e4, 1.0);
    r.record("load_imbalance",
             "≥ 1: max/mean tokens per expert (1 = force-balanced benchmark routing; learned "
             "routing 1.1-1.5)");
    moe.expertBias = r.boolean("expert_bias", false);
    moe.gluClamp = r.number("glu_clamp", 0, 1e6, 0.0);
    r.record("glu_clamp", "0 (or absent) = no clamp; else the limit c of the gated activation's "
                          "inputs (GPT-OSS: 7)");
    r.ignore("routing");
    r.ignore("notes");
    if (moe.topK > moe.experts)
        r.fail("top_k", "top_k (" + std::to_string(moe.topK) + ") cannot exceed experts (" +
                            std::to_string(moe.experts) + ")");
    r.finish();
    return moe;
}

MlaShape parseMla(const json& j, const std::string& file, const std::string& path) {
    ObjectReader r(j, file, path);
    MlaShape m;
    m.qLoraRank = r.integer("q_lora_rank", 0, 1LL << 24, 0);
    m.kvLoraRank = r.integer("kv_lora_rank", 1, 1LL << 24);
    m.qkNopeDim = r.integer("qk_nope_head_dim", 1, 1 << 20);
    m.qkRopeDim = r.integer("qk_rope_head_dim", 0, 1 << 20);
    m.vHeadDim = r.integer("v_head_dim", 1, 1 << 20);
    r.ignore("notes");
    r.finish();
    return m;
}

std::vector<std::int64_t> parseWidths(ObjectReader& r, const std::string& key, bool required) {
    r.record(key, "a list of layer widths ≥ 1, input to output");
    if (!r.has(key)) {
        if (required) r.fail(key, "required: a list of layer widths, e.g. [512, 256, 128]");
        r.ignore(key);
        return {};
    }
    const json& a = r.raw(key);
    if (!a.is_array()) r.fail(key, "expected a list of layer widths, got " + describeType(a));
    if (a.size() > 64) r.fail(key, "more than 64 layers");
    std::vector<std::int64_t> out;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const json& v = a[i];
        if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > (1LL << 24))
            throw InputError(r.file(), r.pathOf(key) + "[" + std::to_string(i) + "]",
                             "expected a whole layer width from 1 to 16777216, got " + v.dump());
        out.push_back(v.get<std::int64_t>());
    }
    return out;
}

DlrmShape parseDlrm(const json& j, const std::string& file, const std::string& path) {
    ObjectReader r(j, file, path);
    DlrmShape d;
    d.denseFeatures = int(r.integer("dense_features", 0, 1 << 20));
    d.bottomMlp = parseWidths(r, "bottom_mlp", false);
    d.topMlp = parseWidths(r, "top_mlp", true);
    const std::string inter = r.choice("interaction", {"dot", "dcnv2", "transformer"}, "dot");
    d.interaction = inter == "dot"     ? DlrmInteraction::Dot
                    : inter == "dcnv2" ? DlrmInteraction::Dcnv2
                                       : DlrmInteraction::Transformer;
    if (d.interaction == DlrmInteraction::Dcnv2) {
        d.dcnLayers = int(r.integer("dcn_layers", 1, 64));
        d.dcnLowRank = int(r.integer("dcn_low_rank", 0, 1 << 20, 0));
        r.record("dcn_low_rank", "0 = full-rank cross layers; else the rank of U·V");
    } else {
        for (const char* k : {"dcn_layers", "dcn_low_rank"})
            if (r.has(k)) r.fail(k, "applies to interaction \"dcnv2\" only");
        r.ignore("dcn_layers");
        r.ignore("dcn_low_rank");
    }
    if (d.interaction == DlrmInteraction::Transformer) {
        d.transformerLayers = int(r.integer("transformer_layers", 1, 1024));
        d.transformerHeads = int(r.integer("transformer_heads", 1, 1024));
    } else {
        for (const char* k : {"transformer_layers", "transformer_heads"})
            if (r.has(k)) r.fail(k, "applies to interaction \"transformer\" only");
        r.ignore("transformer_layers");
        r.ignore("transformer_heads");
    }
    d.topExperts = int(r.integer("top_experts", 0, 1 << 16, 0));
    r.record("top_experts", "DLRM-MoE: the top MLP as this many experts (0 = a plain MLP)");
    d.topK = int(r.integer("top_k", 0, 1 << 16, d.topExperts > 0 ? 1 : 0));
    if (d.topExperts > 0 && (d.topK < 1 || d.topK > d.topExperts))
        r.fail("top_k", "must be from 1 to top_experts (" + std::to_string(d.topExperts) + ")");
    if (d.topExperts == 0 && d.topK != 0) r.fail("top_k", "needs top_experts");
    if (!r.has("tables"))
        r.fail("tables", "required: a list of table groups {count, rows, dim, pooling, "
                         "precision}");
    const json& tabs = r.raw("tables");
    const std::string tpath = r.pathOf("tables");
    if (!tabs.is_array() || tabs.empty())
        throw InputError(file, tpath, "expected a non-empty list of table groups");
    if (tabs.size() > std::size_t(kMaxTableGroups))
        throw InputError(file, tpath,
                         std::to_string(tabs.size()) + " groups; at most " +
                             std::to_string(kMaxTableGroups) +
                             " (list identical tables as one group with a count)");
    double totalTables = 0;
    for (std::size_t i = 0; i < tabs.size(); ++i) {
        ObjectReader t(tabs[i], file, tpath + "[" + std::to_string(i) + "]");
        EmbeddingTableGroup g;
        g.name = t.string("name", "tables " + std::to_string(i));
        g.count = int(t.integer("count", 1, 1 << 20, 1));
        g.rows = t.integer("rows", 1, 1LL << 40);
        g.dim = int(t.integer("dim", 1, 1 << 16));
        g.pooling = t.number("pooling", 0, 1e5, 1.0, true);
        t.record("pooling", "> 0: lookups per table per sample (multi-hot)");
        const std::string prec =
            t.choice("precision", {"fp32", "fp16", "bf16", "fp8", "int8", "int4"}, "fp32");
        g.bytesPerElement = prec == "fp32"                     ? 4.0
                            : prec == "fp16" || prec == "bf16" ? 2.0
                            : prec == "int4"                   ? 0.5
                                                               : 1.0;
        t.ignore("notes");
        t.finish();
        totalTables += g.count;
        d.tables.push_back(std::move(g));
    }
    if (totalTables > double(1 << 20))
        throw InputError(file, tpath, "more than 1,048,576 tables in all");
    r.ignore("notes");
    r.finish();
    return d;
}

/// A vision transformer: patches instead of a vocabulary, a classifier head.
void readVit(ObjectReader& r, const std::string& file, Model& m) {
    if (!r.has("vit")) {
        r.ignore("vit");
        return;
    }
    ObjectReader v(r.raw("vit"), file, r.pathOf("vit"));
    m.vit = true;
    m.vitShape.imageSize = int(v.integer("image_size", 1, 1 << 20));
    m.vitShape.patchSize = int(v.integer("patch_size", 1, 1 << 16));
    m.vitShape.channels = int(v.integer("channels", 1, 1024, 3));
    m.vitShape.classes = int(v.integer("classes", 1, 1 << 24));
    if (m.vitShape.imageSize % m.vitShape.patchSize != 0)
        v.fail("patch_size", "must divide image_size (" + std::to_string(m.vitShape.imageSize) + ")");
    if (m.vitShape.tokens() > (1LL << 24))
        v.fail("image_size", "(image_size / patch_size)² + 1 = " +
                                 std::to_string(m.vitShape.tokens()) +
                                 " tokens per image is beyond 16,777,216; use larger "
                                 "patches or a smaller image");
    v.ignore("notes");
    v.finish();
}

/// The attention's heads: MLA's latent shape, or KV heads and a head dimension.
void readAttention(ObjectReader& r, const std::string& file, Model& m) {
    if (r.has("mla")) {
        m.mla = true;
        m.mlaShape = parseMla(r.raw("mla"), file, r.pathOf("mla"));
        if (r.has("kv_heads"))
            r.fail("kv_heads", "MLA attention has no separate KV heads (every head reads the "
                               "shared latent); remove kv_heads");
        r.ignore("kv_heads");
        m.kvHeads = m.heads;
        if (r.has("head_dim"))
            r.fail("head_dim", "MLA attention sets its head dimensions in mla "
                               "(qk_nope_head_dim, qk_rope_head_dim, v_head_dim); remove head_dim");
        r.ignore("head_dim");
        m.headDim = m.mlaShape.qkNopeDim + m.mlaShape.qkRopeDim;
        return;
    }
    r.ignore("mla");
    m.kvHeads = int(r.integer("kv_heads", 1, 1 << 20, m.heads));
    if (!r.has("head_dim") && m.hidden % m.heads != 0)
        r.fail("head_dim", "hidden (" + std::to_string(m.hidden) + ") is not divisible by heads (" +
                               std::to_string(m.heads) + "); give head_dim explicitly");
    m.headDim = r.integer("head_dim", 1, 1 << 20, m.hidden / m.heads);
}

/// The moe block, which arch "moe" needs and no other arch takes.
void readMoeBlock(ObjectReader& r, const std::string& file, Model& m) {
    if (m.arch != ModelArch::Moe) {
        if (r.has("moe")) r.fail("moe", "a moe block needs arch \"moe\"");
        r.ignore("moe");
        return;
    }
    if (!r.has("moe"))
        r.fail("moe", "arch \"moe\" needs a moe block: experts, top_k, expert_ffn_hidden "
                      "(and optionally shared_experts, dense_layers, moe_layer_freq, "
                      "capacity_factor, load_imbalance)");
    m.moe = parseMoe(r.raw("moe"), file, r.pathOf("moe"));
    if (m.moe.denseLayers >= m.layers)
        r.fail("moe", "moe.dense_layers (" + std::to_string(m.moe.denseLayers) +
                          ") leaves no MoE layer among the " + std::to_string(m.layers) +
                          " layers; use arch \"dense\" or fewer dense layers");
}

/// The vocabulary and sequence fields of a language model; a ViT sets them from its vit
/// block and refuses them.
void readVocabulary(ObjectReader& r, Model& m) {
    static constexpr const char* kTextKeys[] = {"vocab", "tied_embeddings", "causal",
                                                "max_seq_len"};
    if (!m.vit) {
        m.vocab = r.integer("vocab", 1, 1LL << 32);
        m.tiedEmbeddings = r.boolean("tied_embeddings", false);
        m.causal = r.boolean("causal", true);
        m.maxSeqLen = r.integer("max_seq_len", 0, 1LL << 32, 0);
        return;
    }
    for (const char* k : kTextKeys)
        if (r.has(k))
            r.fail(k, "a vision transformer sets it from its vit block (classes, "
                      "bidirectional attention over the patch tokens); remove it");
    for (const char* k : kTextKeys)
        r.ignore(k);
    m.vocab = m.vitShape.classes;
    m.causal = false;
    m.maxSeqLen = m.vitShape.tokens();
}

} // namespace

Model parseModel(const json& j, const std::string& file, const std::string& path) {
    ObjectReader r(j, file, path);
    Model m;
    readIdentity(r, m);
    for (const char* key : {"params_billion", "active_params_billion"}) // informational, numbers
        if (r.has(key)) r.number(key, 1e-6, 1e5);
    const std::string arch = r.choice("arch", {"dense", "moe", "dlrm"}, "dense");
    if (arch == "dlrm") {
        // A recommendation model: tables, MLPs and an interaction, no transformer fields.
        m.arch = ModelArch::Dlrm;
        if (!r.has("dlrm"))
            r.fail("dlrm", "arch \"dlrm\" needs a dlrm block: dense_features, bottom_mlp, "
                           "top_mlp, interaction, tables");
        m.dlrm = parseDlrm(r.raw("dlrm"), file, r.pathOf("dlrm"));
        r.finish();
        return m;
    }
    if (r.has("dlrm")) r.fail("dlrm", "a dlrm block needs arch \"dlrm\"");
    r.ignore("dlrm");
    m.arch = arch == "moe" ? ModelArch::Moe : ModelArch::Dense;
    readVit(r, file, m);
    m.layers = int(r.integer("layers", 1, 100000));
    m.hidden = r.integer("hidden", 1, 1LL << 30);
    m.heads = int(r.integer("heads", 1, 1 << 20));
    readAttention(r, file, m);
    readMoeBlock(r, file, m);
    // A dense MLP exists unless every layer is MoE; only then may ffn_hidden be absent.
    const bool denseMlp = !m.isMoe() || m.moeLayerCount() < m.layers;
    if (denseMlp || r.has("ffn_hidden"))
        m.ffnHidden = r.integer("ffn_hidden", 1, 1LL << 32);
    else
        r.ignore("ffn_hidden");
    m.gatedMlp = r.boolean("gated_mlp", false);
    // The clamp limits a gated activation's two halves; an ungated one has nothing to clamp,
    // and ignoring the field would drop it silently.
    if (m.isMoe() && m.moe.gluClamp > 0 && !m.gatedMlp)
        r.fail("moe", "moe.glu_clamp clamps a gated activation's inputs, but gated_mlp is "
                      "false; set gated_mlp true or remove glu_clamp");
    readVocabulary(r, m);
    m.slidingWindow = r.integer("sliding_window", 0, 1LL << 32, 0);
    r.record("sliding_window", "0 = none; else keys a query sees in windowed layers");
    m.slidingWindowEvery = int(r.integer("sliding_window_every", 1, 100000, 1));
    if (m.kvHeads > m.heads)
        r.fail("kv_heads", "cannot exceed heads (" + std::to_string(m.heads) + ")");
    r.finish();
    return m;
}

} // namespace madmax
