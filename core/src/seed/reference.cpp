// The reference code's computation, reproduced (docs/reference/seed-format.md §1): per-component parallel
// factors, one op list per stream in issue order, and a FIFO scheduler whose dependencies are
// substrings of op names searched in the other stream only. Quirks are kept on purpose (see
// the comments marked "quirk"); the native engine is where the physics is done properly.
#include "seed/reference_ops.hpp"

namespace madmax::seed {

using namespace detail;

namespace {

/// The components a task runs, their parallel factors and sizes, shared by both passes.
struct Components {
    bool dlrm = false, hasTransformer = false, optimized = false;
    Factors fm, fe, ft;
    MlpStack bottom, top;
    TransformerShape tsh{};
    Embedding e;
};

/// What the task must give for its model, and its parallel lists on the system.
void checkTask(const Context& c, bool dlrm, bool hasTransformer) {
    const Task& t = c.t;
    const std::string& file = c.file;
    if (dlrm && t.mlp.empty())
        throw InputError(file, "mlp_parallel", "a DLRM task needs mlp_parallel");
    if (dlrm && !(t.mlpBatch > 0))
        throw InputError(file, "local_mlp_bs", "a DLRM task needs local_mlp_bs");
    if (hasTransformer && t.transformer.empty())
        throw InputError(file, "transformer_parallel", "this model needs transformer_parallel");
    if (hasTransformer && !(t.transformerBatch > 0))
        throw InputError(file, "local_transformer_bs", "this model needs local_transformer_bs");
    checkParallel(t.mlp, "mlp_parallel", c.s, file);
    checkParallel(t.emb, "emb_parallel", c.s, file);
    checkParallel(t.transformer, "transformer_parallel", c.s, file);
}

/// Global batch: local × duplicate factor, equal across components.
double globalBatchOf(const Context& c, const Components& k) {
    const Task& t = c.t;
    const double global = t.embBatch * k.fe.duplicate;
    auto sameBatch = [&](double local, const Factors& f, const char* field) {
        const double g = local * f.duplicate;
        if (g != global)
            throw InputError(c.file, field,
                             "global batch " + std::to_string((long long)g) +
                                 " differs from the embedding's " +
                                 std::to_string((long long)global) +
                                 " (local batch × ddp·fsdp degrees must agree)");
    };
    if (k.dlrm) sameBatch(t.mlpBatch, k.fm, "local_mlp_bs");
    if (k.hasTransformer) sameBatch(t.transformerBatch, k.ft, "local_transformer_bs");
    return global;
}

Components components(Context& c) {
    const Model& m = c.m;
    const Task& t = c.t;
    Components k{};
    k.dlrm = m.type == ModelType::Dlrm || m.type == ModelType::DlrmMoe ||
             m.type == ModelType::DlrmTransformer;
    k.hasTransformer = m.type != ModelType::Dlrm && m.type != ModelType::DlrmMoe;
    checkTask(c, k.dlrm, k.hasTransformer);
    k.fm = factors(t.mlp, false);
    k.fe = factors(t.emb, true);
    k.ft = factors(t.transformer, false);
    if (k.dlrm && k.fm.tpLevel >= 0 && (m.bottomLayers % 2 != 0 || m.topLayers % 2 != 0))
        throw InputError(c.file, "mlp_parallel",
                         "tp needs an even number of bottom and top MLP layers (the reference "
                         "code all-reduces after every second layer)");
    // Embedding lookup (bytes per sample): DLRM tables T·P·d; transformers 2·s·h.
    double seq = m.seqLen;
    if (m.type == ModelType::Vit) seq = std::pow(std::ceil(m.imageSize / m.patchDim), 2.0);
    if (k.dlrm) {
        k.e.params = m.tables * m.rowsPerTable * m.embDim;
        k.e.devBytes = m.tables * m.pooling * m.embDim * m.bytesEmb * t.embBatch / k.fe.shard;
    } else {
        const double vocab = m.type == ModelType::Vit ? m.patchDim * m.patchDim * 3.0 : m.vocab;
        k.e.params = vocab * m.hidden + seq * m.hidden;
        k.e.devBytes = 2.0 * seq * m.hidden * m.bytesEmb * t.embBatch / k.fe.shard;
    }
    k.e.time = k.e.devBytes / c.memBw;
    const double mlpParams = m.mlpDim * m.mlpDim;
    k.bottom = MlpStack{"MLPBot", m.bottomLayers, 2.0 * mlpParams, mlpParams, false};
    const bool moeTop = m.type == ModelType::DlrmMoe;
    k.top = MlpStack{"MLPTop", m.topLayers, 2.0 * mlpParams * (moeTop ? m.activeExperts : 1),
                     mlpParams * (moeTop ? m.experts : 1), moeTop && k.fm.tpLevel >= 0};
    if (k.hasTransformer) {
        k.tsh = transformerShape(c, seq);
        k.tsh.moe = m.type == ModelType::LlmMoe && k.ft.tpLevel >= 0;
    }
    k.optimized = m.type == ModelType::Vit;
    return k;
}

/// The forward's two streams; returns when they end.
double forwardPass(Context& c, const Components& k, ReferenceResult& r) {
    const Model& m = c.m;
    Streams fwd(0.0);
    fwd.compute("EMB_f.", Kind::Emb, k.e.time);
    embeddingComm(c, fwd, k.e, "f", {"EMB_f."}, false);
    const bool embA2a =
        std::find(c.t.emb.kinds.begin(), c.t.emb.kinds.end(), "mp") != c.t.emb.kinds.end();
    const std::string afterEmb = embA2a ? "EMB_f_c_all2all" : "";
    if (k.dlrm) {
        if (m.type == ModelType::DlrmTransformer) {
            dlrmTransformerForward(c, fwd, k.bottom, k.top, k.tsh, k.fm, k.ft, afterEmb);
        } else {
            mlpForward(c, fwd, k.bottom, k.fm, "");
            mlpForward(c, fwd, k.top, k.fm, afterEmb, layerName("MLPBot", m.bottomLayers - 1),
                       {layerName("MLPBot", m.bottomLayers - 2) + "_f.",
                        layerName("MLPBot", m.bottomLayers - 1) + "_f."});
        }
    } else {
        transformerForward(c, fwd, k.tsh, k.ft, afterEmb);
    }
    collect(fwd, r);
    return fwd.end();
}

/// The backward's two streams from `tf`, the forward's end; returns when they end.
double backwardPass(Context& c, const Components& k, double tf, ReferenceResult& r) {
    const Model& m = c.m;
    const Task& t = c.t;
    const bool ft_ = t.type == TaskType::Finetune;
    const bool topGrads = !(ft_ && t.freezeTop);
    const bool bottomTrain = !(ft_ && t.freezeBottom);
    const bool embTrain = !(ft_ && t.freezeEmb);
    const bool transformerTrain = !(ft_ && t.freezeTransformer);
    if (ft_ && !topGrads && !bottomTrain && !embTrain && !transformerTrain)
        throw InputError(c.file, "freeze_emb", "every component is frozen: nothing to train");
    Streams bwd(tf);
    std::string embDep;
    if (m.type == ModelType::DlrmTransformer) {
        dlrmTransformerBackward(c, bwd, k.bottom, k.top, k.tsh, k.fm, k.ft, topGrads, bottomTrain,
                                embTrain, transformerTrain, k.e);
    } else if (k.dlrm) {
        mlpBackward(c, bwd, k.top, k.fm, topGrads);
        embDep = "MLPTop0_b.";
        if (embTrain) embeddingComm(c, bwd, k.e, "b", {embDep}, true);
        if (bottomTrain)
            mlpBackward(c, bwd, k.bottom, k.fm, true, "MLPTop0",
                        k.top.moe ? "MoE0_b_c_act_all2all2." : "");
    } else {
        const int gradLayers = ft_ && t.minFrozenLayer >= 0 ? t.minFrozenLayer : m.transformerLayers;
        transformerBackward(c, bwd, k.tsh, k.ft, k.optimized, gradLayers,
                            !(ft_ && t.freezeTransformer));
        if (embTrain) embeddingComm(c, bwd, k.e, "b", {"Attn0_b."}, true);
    }
    if (embTrain) bwd.compute("EMB_b.", Kind::Emb, k.e.time, {"EMB_b_c"});
    collect(bwd, r);
    return bwd.end();
}

/// The iteration's totals and the weights per device.
void summarize(const Model& m, const Components& k, double T, ReferenceResult& r) {
    r.iterationS = T;
    r.throughputQps = r.globalBatch / T;
    double commTotal = r.allToAllS + r.allReduceS + r.allGatherS + r.reduceScatterS;
    r.exposedCommS = T - (r.gemmS + r.embS);
    r.overlappedCommS = commTotal - r.exposedCommS;
    r.embWeightsBytesPerDevice = k.e.params * m.bytesEmb / k.fe.shard;
    double params = k.e.params;
    if (k.dlrm) {
        const double mlp = m.bottomLayers * k.bottom.params + m.topLayers * k.top.params;
        r.mlpWeightsBytesPerDevice = mlp * m.bytesNonEmb / k.fm.shard;
        params += mlp;
    }
    if (k.hasTransformer) {
        const double tr = m.transformerLayers * (k.tsh.attnParams + k.tsh.fcParams);
        r.transformerWeightsBytesPerDevice = tr * m.bytesNonEmb / k.ft.shard;
        params += tr;
    }
    r.totalParams = params;
}

} // namespace

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
    const Components k = components(c);
    ReferenceResult r;
    r.globalBatch = globalBatchOf(c, k);
    const double tf = forwardPass(c, k, r);
    const double T = c.train ? backwardPass(c, k, tf, r) : tf;
    summarize(m, k, T, r);
    return r;
}

} // namespace madmax::seed
