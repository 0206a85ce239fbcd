// What is trained: a model described as a sequence of blocks, each of which yields ops.
#pragma once

#include "madmax/dlrm.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace madmax {

/// Dense transformer, mixture of experts (docs/developer/workloads.md "Mixture of experts"), or a
/// recommendation model (docs/developer/workloads.md "DLRM": tables, MLPs and an interaction; no layers).
enum class ModelArch : std::uint8_t { Dense, Moe, Dlrm };

/// Kinds of block a model is built from (docs/developer/model.md §7). A dense transformer uses Embedding,
/// Attention, Mlp and LmHead; an MoE layer swaps the Mlp for a Moe block (router, routed and
/// shared experts); DLRM will add EmbeddingBag and Interaction.
enum class BlockKind : std::uint8_t { Embedding, Attention, Mlp, Moe, LmHead };

/// The blocks of one transformer layer, input to output; fixed capacity (no allocation).
struct LayerBlocks {
    std::array<BlockKind, 4> kinds{};
    int count = 0;
    const BlockKind* begin() const { return kinds.data(); }
    const BlockKind* end() const { return kinds.data() + count; }
};

struct BlockRun {
    BlockKind kind;
    int repeat; ///< consecutive copies of this block
};

/// Mixture-of-experts shape (Fedus et al. 2022; DeepSeek-V3 §2.1; Megatron-Core MoE).
struct MoeShape {
    int experts = 0;                ///< routed experts E (0: dense model)
    int topK = 0;                   ///< experts each token is routed to, k
    std::int64_t expertFfn = 0;     ///< one expert's FFN width f_e (gated like the model's MLP)
    int sharedExperts = 0;          ///< always-active experts of width f_e
    int denseLayers = 0;            ///< leading layers with a dense MLP of width ffn_hidden
    int layerFreq = 1;              ///< after the dense layers, every n-th layer is MoE
    double capacityFactor = 0;      ///< tokens an expert takes, × the mean; 0 = dropless
    double loadImbalance = 1.0;     ///< max/mean tokens per expert on the critical rank
    /// The experts' up and down projections carry biases (GPT-OSS). The down projection's is
    /// scaled by the routing probability, so it cannot ride in the GEMM's epilogue.
    bool expertBias = false;
    /// The gated activation's inputs are clamped first (GPT-OSS `swiglu_limit` 7: gate ≤ c,
    /// linear within ±c); 0 = no clamp.
    double gluClamp = 0;
    /// Share of routed token copies the capacity factor drops: expert loads spread evenly
    /// between (2 − I) and I times the mean (mean 1, max I = the load imbalance); an expert over
    /// the capacity factor C drops its excess, ∫ max(0, x − C) over that spread, which is
    /// (I − C)² / (4(I − 1)) when 2 − I ≤ C < I. 0 when dropless or balanced.
    double dropShare() const {
        const double I = loadImbalance, C = capacityFactor;
        if (C <= 0 || I <= C || I <= 1.0) return 0.0;
        if (C >= 2.0 - I) return (I - C) * (I - C) / (4.0 * (I - 1.0));
        return 1.0 - C; // every expert over capacity (only when C < 1, which parsing refuses)
    }
    /// The critical rank's routed load, × the mean, over an EP group of `ep` GPUs: the
    /// imbalance, capped by the capacity factor (dropless routing caps nothing). Without EP
    /// (ep 1) every GPU holds every expert and carries the mean, less what the capacity drops:
    /// the imbalance moves copies between its experts, not between GPUs. Training, serving and
    /// memory all read this one.
    double criticalLoad(int ep) const {
        if (ep <= 1) return 1.0 - dropShare();
        return capacityFactor > 0 && capacityFactor < loadImbalance ? capacityFactor
                                                                    : loadImbalance;
    }
};

/// Multi-head latent attention (DeepSeek-V2 §2.1): queries and keys/values through low-rank
/// latents; the KV cache holds the kv latent and the shared rope key only.
struct MlaShape {
    std::int64_t qLoraRank = 0;  ///< 0: queries projected directly from the hidden state
    std::int64_t kvLoraRank = 0; ///< compressed KV width d_c
    std::int64_t qkNopeDim = 0;  ///< per-head query/key dimension without rotary embedding
    std::int64_t qkRopeDim = 0;  ///< per-head rotary dimension (key part shared by all heads)
    std::int64_t vHeadDim = 0;   ///< per-head value dimension
};

/// Vision transformer (Dosovitskiy et al. 2021): the image as (size/patch)² patch tokens plus a
/// class token, a patch-embedding GEMM instead of a vocabulary, a classifier on the class token.
struct VitShape {
    int imageSize = 0, patchSize = 0, channels = 3, classes = 0;
    std::int64_t tokens() const {
        return patchSize > 0 ? std::int64_t(imageSize / patchSize) * (imageSize / patchSize) + 1
                             : 0;
    }
};

struct Model {
    std::string id;
    std::string name;
    std::string source; ///< where the shape numbers come from
    ModelArch arch = ModelArch::Dense;

    int layers = 0;
    std::int64_t hidden = 0;
    int heads = 0;
    int kvHeads = 0;          ///< == heads for MHA, fewer for GQA
    std::int64_t headDim = 0; ///< hidden / heads unless the model says otherwise
    std::int64_t ffnHidden = 0; ///< dense MLP width (MoE: of the leading dense layers)
    bool gatedMlp = false; ///< SwiGLU: three matrices (Llama); else two (GPT)
    std::int64_t vocab = 0;
    bool tiedEmbeddings = false;
    bool causal = true;
    std::int64_t maxSeqLen = 0; ///< informational; the workload sets the trained length
    /// Sliding-window attention: keys a query sees in windowed layers (0 = none) and which
    /// layers are windowed (every n-th, counting from layer 0; GPT-OSS alternates: 2).
    std::int64_t slidingWindow = 0;
    int slidingWindowEvery = 1;
    bool mla = false; ///< attention is MLA (mlaShape), not MHA/GQA
    MlaShape mlaShape;
    MoeShape moe;
    DlrmShape dlrm; ///< arch == Dlrm: the transformer fields above are unused (0)
    bool vit = false; ///< a vision transformer (vitShape); vocab holds its classes
    VitShape vitShape;

    bool isDlrm() const { return arch == ModelArch::Dlrm; }
    bool isMoe() const { return arch == ModelArch::Moe && moe.experts > 0; }
    /// Whether layer `layer` (0-based) has a MoE block instead of a dense MLP.
    bool isMoeLayer(int layer) const {
        return isMoe() && layer >= moe.denseLayers && (layer - moe.denseLayers) % moe.layerFreq == 0;
    }
    /// MoE layers among layers [0, n): closed form, no loop.
    int moeLayersBefore(int n) const {
        if (!isMoe() || n <= moe.denseLayers) return 0;
        return (n - moe.denseLayers + moe.layerFreq - 1) / moe.layerFreq;
    }
    int moeLayerCount() const { return moeLayersBefore(layers); }
    int denseLayerCount() const { return layers - moeLayerCount(); }

    /// The model as blocks, input to output. Dense: Embedding, (Attention, Mlp) x layers, LmHead.
    std::vector<BlockRun> blocks() const;
    /// The blocks of layer `layer`: attention, then an MLP (dense layers) or a MoE block.
    LayerBlocks layerBlocks(int layer) const;

    // Per-head dimensions as the attention kernel sees them (MLA: nope + rope, v).
    std::int64_t qkHeadDim() const { return mla ? mlaShape.qkNopeDim + mlaShape.qkRopeDim : headDim; }
    std::int64_t vHeadDim() const { return mla ? mlaShape.vHeadDim : headDim; }

    // Parameter counts (exact, from the shape).
    double attentionParamsPerLayer() const; ///< QKV (or MLA projections) + output (+ norm)
    double mlpParamsPerLayer() const;       ///< dense MLP + norm
    double expertParams() const;            ///< one routed or shared expert
    /// A MoE block's parameters that every GPU of a TP group keeps a slice of: the shared
    /// experts, the router and the norm.
    double moeSharedParamsPerLayer() const;
    /// A MoE block's routed experts, all E of them (split over EP × ETP).
    double moeRoutedParamsPerLayer() const { return double(moe.experts) * expertParams(); }
    /// Parameters of a dense layer (attention + MLP); MoE layers: see the two above.
    double paramsPerLayer() const { return attentionParamsPerLayer() + mlpParamsPerLayer(); }
    double embeddingParams() const {
        // ViT: the patch projection (C·p² → h, with bias), position embeddings, class token.
        if (vit)
            return (double(vitShape.channels) * vitShape.patchSize * vitShape.patchSize + 1.0 +
                    double(vitShape.tokens()) + 1.0) *
                   double(hidden);
        return double(vocab) * double(hidden);
    }
    double lmHeadParams() const { return tiedEmbeddings ? 0.0 : double(vocab) * double(hidden); }
    double totalParams() const;
    /// Parameters one token's forward pass multiplies (MoE: k routed + shared experts per
    /// layer; the embedding is a lookup, not counted; the LM head is).
    double activeParams() const;
    /// Bytes per token of the KV cache per layer at `bytesPerElement` (MLA: latent + rope key).
    double kvCacheElementsPerTokenPerLayer() const;
};

} // namespace madmax
