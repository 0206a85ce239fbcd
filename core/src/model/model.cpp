#include "madmax/model.hpp"

namespace madmax {

LayerBlocks Model::layerBlocks(int /*layer*/) const {
    LayerBlocks b;
    b.kinds[b.count++] = BlockKind::Attention;
    b.kinds[b.count++] = BlockKind::Mlp;
    return b;
}

std::vector<BlockRun> Model::blocks() const {
    std::vector<BlockRun> out;
    out.push_back({BlockKind::Embedding, 1});
    for (int i = 0; i < layers; ++i)
        for (BlockKind k : layerBlocks(i))
            out.push_back({k, 1});
    out.push_back({BlockKind::LmHead, 1});
    return out;
}

double Model::attentionParamsPerLayer() const {
    const double h = double(hidden), d = double(headDim);
    const double qkv = h * (heads * d + 2.0 * kvHeads * d);
    const double out = heads * d * h;
    return qkv + out + h; // + pre-attention norm
}

double Model::mlpParamsPerLayer() const {
    const double h = double(hidden), f = double(ffnHidden);
    return (gatedMlp ? 3.0 : 2.0) * h * f + h; // + pre-MLP norm
}

double Model::totalParams() const {
    return layers * paramsPerLayer() + embeddingParams() + lmHeadParams() + double(hidden);
}

} // namespace madmax
