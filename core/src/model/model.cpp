#include "madmax/model.hpp"

namespace madmax {

LayerBlocks Model::layerBlocks(int layer) const {
    LayerBlocks b;
    b.kinds[b.count++] = BlockKind::Attention;
    b.kinds[b.count++] = isMoeLayer(layer) ? BlockKind::Moe : BlockKind::Mlp;
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
    const double h = double(hidden);
    if (mla) {
        // DeepSeek-V2 §2.1: W_DQ (h×d_q) + q norm + W_UQ (d_q × a·(nope+rope)); W_DKV + W_KR
        // (h × (d_c + rope)) + kv norm + W_UK, W_UV (d_c × a·(nope + v)); W_O (a·v × h).
        const MlaShape& s = mlaShape;
        const double a = heads, qk = double(s.qkNopeDim + s.qkRopeDim);
        const double q = s.qLoraRank > 0 ? h * s.qLoraRank + s.qLoraRank + s.qLoraRank * a * qk
                                         : h * a * qk;
        const double kv = h * double(s.kvLoraRank + s.qkRopeDim) + s.kvLoraRank +
                          s.kvLoraRank * a * double(s.qkNopeDim + s.vHeadDim);
        return q + kv + a * s.vHeadDim * h + h; // + pre-attention norm
    }
    const double d = double(headDim);
    const double qkv = h * (heads * d + 2.0 * kvHeads * d);
    const double out = heads * d * h;
    return qkv + out + h; // + pre-attention norm
}

double Model::mlpParamsPerLayer() const {
    const double h = double(hidden), f = double(ffnHidden);
    return (gatedMlp ? 3.0 : 2.0) * h * f + h; // + pre-MLP norm
}

double Model::expertParams() const {
    return (gatedMlp ? 3.0 : 2.0) * double(hidden) * double(moe.expertFfn);
}

double Model::moeSharedParamsPerLayer() const {
    const double h = double(hidden);
    // A single expert needs no router.
    const double router = moe.experts > 1 ? h * moe.experts : 0.0;
    return moe.sharedExperts * expertParams() + router + h; // + pre-MLP norm
}

double Model::totalParams() const {
    if (isDlrm()) return dlrm.tableParams() + dlrm.denseParams();
    const int moeL = moeLayerCount();
    return layers * attentionParamsPerLayer() + (layers - moeL) * mlpParamsPerLayer() +
           moeL * (moeSharedParamsPerLayer() + moeRoutedParamsPerLayer()) + embeddingParams() +
           lmHeadParams() + double(hidden);
}

double Model::activeParams() const {
    if (isDlrm()) return dlrm.denseParams();
    const int moeL = moeLayerCount();
    return layers * attentionParamsPerLayer() + (layers - moeL) * mlpParamsPerLayer() +
           moeL * (moeSharedParamsPerLayer() + moe.topK * expertParams()) +
           (tiedEmbeddings ? embeddingParams() : lmHeadParams()) + double(hidden);
}

double Model::kvCacheElementsPerTokenPerLayer() const {
    if (mla) return double(mlaShape.kvLoraRank + mlaShape.qkRopeDim);
    return 2.0 * kvHeads * double(headDim);
}

} // namespace madmax
