// What is trained: a model described as a sequence of blocks, each of which yields ops.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace madmax {

enum class ModelArch : std::uint8_t { Dense }; // MoE and DLRM arrive with their issues.

/// Kinds of block a model is built from (MODEL.md §7). A dense transformer uses Embedding,
/// Attention, Mlp and LmHead; MoE adds Moe, DLRM adds EmbeddingBag and Interaction.
enum class BlockKind : std::uint8_t { Embedding, Attention, Mlp, LmHead };

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
    std::int64_t ffnHidden = 0;
    bool gatedMlp = false; ///< SwiGLU: three matrices (Llama); else two (GPT)
    std::int64_t vocab = 0;
    bool tiedEmbeddings = false;
    bool causal = true;
    std::int64_t maxSeqLen = 0; ///< informational; the workload sets the trained length

    /// The model as blocks, input to output. Dense: Embedding, (Attention, Mlp) x layers, LmHead.
    std::vector<BlockRun> blocks() const;
    /// The blocks of layer `layer` (dense: attention then MLP; MoE layers will swap the MLP).
    LayerBlocks layerBlocks(int layer) const;

    // Parameter counts (exact, from the shape).
    double attentionParamsPerLayer() const; ///< QKV + output projection (+ norm)
    double mlpParamsPerLayer() const;
    double paramsPerLayer() const { return attentionParamsPerLayer() + mlpParamsPerLayer(); }
    double embeddingParams() const { return double(vocab) * double(hidden); }
    double lmHeadParams() const { return tiedEmbeddings ? 0.0 : double(vocab) * double(hidden); }
    double totalParams() const;
};

} // namespace madmax
