#include "madmax/flops.hpp"

namespace madmax {

double layerGemmFlopsPerToken(const Model& m) {
    const double h = double(m.hidden), d = double(m.headDim), f = double(m.ffnHidden);
    const double qkv = 2.0 * h * (m.heads * d + 2.0 * m.kvHeads * d);
    const double out = 2.0 * m.heads * d * h;
    const double mlp = (m.gatedMlp ? 6.0 : 4.0) * h * f;
    return qkv + out + mlp;
}

double attentionFlopsPerToken(const Model& m, double context) {
    return 4.0 * context * m.heads * double(m.headDim);
}

double lmHeadFlopsPerToken(const Model& m) {
    return 2.0 * double(m.hidden) * double(m.vocab);
}

namespace {
double forwardFlopsPerToken(const Model& m, double seqLen) {
    return m.layers * (layerGemmFlopsPerToken(m) + attentionFlopsPerToken(m, seqLen)) +
           lmHeadFlopsPerToken(m);
}
} // namespace

double modelFlopsPerStep(const Model& m, double globalBatch, double seqLen) {
    return 3.0 * globalBatch * seqLen * forwardFlopsPerToken(m, seqLen);
}

double hardwareFlopsPerStep(const Model& m, double globalBatch, double seqLen, Recompute r) {
    const double tokens = globalBatch * seqLen;
    double extra = 0;
    if (r == Recompute::Full)
        extra = m.layers * (layerGemmFlopsPerToken(m) + attentionFlopsPerToken(m, seqLen));
    else if (r == Recompute::Selective)
        extra = m.layers * attentionFlopsPerToken(m, seqLen);
    return modelFlopsPerStep(m, globalBatch, seqLen) + tokens * extra;
}

double megatronSc21FlopsPerStep(const Model& m, double B, double s) {
    const double l = m.layers, h = double(m.hidden), V = double(m.vocab);
    return 96.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h));
}

} // namespace madmax
