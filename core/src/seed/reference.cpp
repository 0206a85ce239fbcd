// The reference code's computation, reproduced (docs/reference/seed-format.md §1): per-component parallel
// factors, one op list per stream in issue order, and a FIFO scheduler whose dependencies are
// substrings of op names searched in the other stream only. Quirks are kept on purpose (see
// the comments marked "quirk"); the native engine is where the physics is done properly.
#include "seed/reference_ops.hpp"

namespace madmax::seed {

using namespace detail;

ReferenceResult runReference(const Model& m, const System& s, const Task& t,
                             const std::string& file) {
    Context c{m, s, t, file, bandwidths(s)};
    c.flops = peakFor(s, m.bytesNonEmb) * s.flopsUtil;
    c.memBw = s.memBw * s.memBwUtil;
    c.train = t.type != TaskType::Inference;
    if (!(c.flops > 0))
        throw InputError(file, "system",
                         "no peak for " + std::to_string(int(m.bytesNonEmb)) +
                             "-byte parameters (f64/f32/f16/i8 flops)");

    const bool dlrm = m.type == ModelType::Dlrm || m.type == ModelType::DlrmMoe ||
                      m.type == ModelType::DlrmTransformer;
    const bool hasTransformer = m.type != ModelType::Dlrm && m.type != ModelType::DlrmMoe;
    if (dlrm && t.mlp.empty())
        throw InputError(file, "mlp_parallel", "a DLRM task needs mlp_parallel");
    if (dlrm && !(t.mlpBatch > 0))
        throw InputError(file, "local_mlp_bs", "a DLRM task needs local_mlp_bs");
    if (hasTransformer && t.transformer.empty())
        throw InputError(file, "transformer_parallel", "this model needs transformer_parallel");
    if (hasTransformer && !(t.transformerBatch > 0))
        throw InputError(file, "local_transformer_bs", "this model needs local_transformer_bs");
    checkParallel(t.mlp, "mlp_parallel", s, file);
    checkParallel(t.emb, "emb_parallel", s, file);
    checkParallel(t.transformer, "transformer_parallel", s, file);

    const Factors fm = factors(t.mlp, false), fe = factors(t.emb, true),
                  ft = factors(t.transformer, false);
    if (dlrm && fm.tpLevel >= 0 && (m.bottomLayers % 2 != 0 || m.topLayers % 2 != 0))
        throw InputError(file, "mlp_parallel",
                         "tp needs an even number of bottom and top MLP layers (the reference "
                         "code all-reduces after every second layer)");

    ReferenceResult r;
    // Global batch: local × duplicate factor, equal across components.
    r.globalBatch = t.embBatch * fe.duplicate;
    auto sameBatch = [&](double local, const Factors& f, const char* field) {
        const double g = local * f.duplicate;
        if (g != r.globalBatch)
            throw InputError(file, field,
                             "global batch " + std::to_string((long long)g) +
                                 " differs from the embedding's " +
                                 std::to_string((long long)r.globalBatch) +
                                 " (local batch × ddp·fsdp degrees must agree)");
    };
    if (dlrm) sameBatch(t.mlpBatch, fm, "local_mlp_bs");
    if (hasTransformer) sameBatch(t.transformerBatch, ft, "local_transformer_bs");

    // Embedding lookup (bytes per sample): DLRM tables T·P·d; transformers 2·s·h.
    double seq = m.seqLen;
    if (m.type == ModelType::Vit) seq = std::pow(std::ceil(m.imageSize / m.patchDim), 2.0);
    Embedding e;
    if (dlrm) {
        e.params = m.tables * m.rowsPerTable * m.embDim;
        e.devBytes = m.tables * m.pooling * m.embDim * m.bytesEmb * t.embBatch / fe.shard;
    } else {
        const double vocab = m.type == ModelType::Vit ? m.patchDim * m.patchDim * 3.0 : m.vocab;
        e.params = vocab * m.hidden + seq * m.hidden;
        e.devBytes = 2.0 * seq * m.hidden * m.bytesEmb * t.embBatch / fe.shard;
    }
    e.time = e.devBytes / c.memBw;

    const double mlpParams = m.mlpDim * m.mlpDim;
    const MlpStack bottom{"MLPBot", m.bottomLayers, 2.0 * mlpParams, mlpParams, false};
    const bool moeTop = m.type == ModelType::DlrmMoe;
    const MlpStack top{"MLPTop", m.topLayers, 2.0 * mlpParams * (moeTop ? m.activeExperts : 1),
                       mlpParams * (moeTop ? m.experts : 1), moeTop && fm.tpLevel >= 0};
    TransformerShape tsh{};
    if (hasTransformer) {
        tsh = transformerShape(c, seq);
        tsh.moe = m.type == ModelType::LlmMoe && ft.tpLevel >= 0;
    }
    const bool optimized = m.type == ModelType::Vit;

    // Forward.
    Streams fwd(0.0);
    fwd.compute("EMB_f.", Kind::Emb, e.time);
    embeddingComm(c, fwd, e, "f", {"EMB_f."}, false);
    const bool embA2a =
        std::find(t.emb.kinds.begin(), t.emb.kinds.end(), "mp") != t.emb.kinds.end();
    const std::string afterEmb = embA2a ? "EMB_f_c_all2all" : "";
    if (dlrm) {
        if (m.type == ModelType::DlrmTransformer) {
            dlrmTransformerForward(c, fwd, bottom, top, tsh, fm, ft, afterEmb);
        } else {
            mlpForward(c, fwd, bottom, fm, "");
            mlpForward(c, fwd, top, fm, afterEmb, layerName("MLPBot", m.bottomLayers - 1),
                       {layerName("MLPBot", m.bottomLayers - 2) + "_f.",
                        layerName("MLPBot", m.bottomLayers - 1) + "_f."});
        }
    } else {
        transformerForward(c, fwd, tsh, ft, afterEmb);
    }
    collect(fwd, r);
    const double tf = fwd.end();

    double T = tf;
    if (c.train) {
        const bool ft_ = t.type == TaskType::Finetune;
        const bool topGrads = !(ft_ && t.freezeTop);
        const bool bottomTrain = !(ft_ && t.freezeBottom);
        const bool embTrain = !(ft_ && t.freezeEmb);
        const bool transformerTrain = !(ft_ && t.freezeTransformer);
        if (ft_ && !topGrads && !bottomTrain && !embTrain && !transformerTrain)
            throw InputError(file, "freeze_emb", "every component is frozen: nothing to train");
        Streams bwd(tf);
        std::string embDep;
        if (m.type == ModelType::DlrmTransformer) {
            dlrmTransformerBackward(c, bwd, bottom, top, tsh, fm, ft, topGrads, bottomTrain,
                                    embTrain, transformerTrain, e);
        } else if (dlrm) {
            mlpBackward(c, bwd, top, fm, topGrads);
            embDep = "MLPTop0_b.";
            if (m.type == ModelType::DlrmTransformer &&
                (bottomTrain || embTrain || transformerTrain)) {
                transformerBackward(c, bwd, tsh, ft, false, m.transformerLayers, transformerTrain);
                embDep = "Attn0_b.";
            }
            if (embTrain) embeddingComm(c, bwd, e, "b", {embDep}, true);
            if (bottomTrain)
                mlpBackward(c, bwd, bottom, fm, true, "MLPTop0",
                            top.moe ? "MoE0_b_c_act_all2all2." : "");
        } else {
            const int gradLayers =
                ft_ && t.minFrozenLayer >= 0 ? t.minFrozenLayer : m.transformerLayers;
            transformerBackward(c, bwd, tsh, ft, optimized, gradLayers,
                                !(ft_ && t.freezeTransformer));
            if (embTrain) embeddingComm(c, bwd, e, "b", {"Attn0_b."}, true);
        }
        if (embTrain) bwd.compute("EMB_b.", Kind::Emb, e.time, {"EMB_b_c"});
        collect(bwd, r);
        T = bwd.end();
    }

    r.iterationS = T;
    r.throughputQps = r.globalBatch / T;
    double commTotal = r.allToAllS + r.allReduceS + r.allGatherS + r.reduceScatterS;
    r.exposedCommS = T - (r.gemmS + r.embS);
    r.overlappedCommS = commTotal - r.exposedCommS;
    r.embWeightsBytesPerDevice = e.params * m.bytesEmb / fe.shard;
    double params = e.params;
    if (dlrm) {
        const double mlp = m.bottomLayers * bottom.params + m.topLayers * top.params;
        r.mlpWeightsBytesPerDevice = mlp * m.bytesNonEmb / fm.shard;
        params += mlp;
    }
    if (hasTransformer) {
        const double tr = m.transformerLayers * (tsh.attnParams + tsh.fcParams);
        r.transformerWeightsBytesPerDevice = tr * m.bytesNonEmb / ft.shard;
        params += tr;
    }
    r.totalParams = params;
    return r;
}

} // namespace madmax::seed
