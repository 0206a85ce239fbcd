// DLRM_Transformer: its own file (dlrm_transformer_tasks.py), whose ordering and quirks differ
// from the DLRM and LLM files it resembles, so it is reproduced on its own, op for op.
#include "seed/reference_ops.hpp"

namespace madmax::seed::detail {

// ---------------------------------------------------------------------------------------------
// DLRM_Transformer: its own file (dlrm_transformer_tasks.py), whose ordering and quirks differ
// from the DLRM and LLM files it resembles, so it is reproduced on its own, op for op.
/// The DLRM_Transformer forward: bottom MLP (as DLRM's), transformer layers (the first's
/// gathers waiting for the bottom's last two layers, its attention for the bottom's last TP
/// all-reduce), then the top MLP (its first gathers waiting for the last transformer layer;
/// its first layer for that layer's FC and its TP all-reduce, not for the embeddings).
void dlrmTransformerForward(Context& c, Streams& st, const MlpStack& bottom, const MlpStack& top,
                            const TransformerShape& sh, const Factors& fm, const Factors& ft,
                            const std::string& afterEmb) {
    const Parallel& pt = c.t.transformer;
    const int nt = int(pt.kinds.size());
    const double bytes = c.m.bytesNonEmb;
    mlpForward(c, st, bottom, fm, "");
    const std::string lastBot = layerName("MLPBot", bottom.layers - 1);
    const std::string prevBot = layerName("MLPBot", bottom.layers - 2);
    const int N = c.m.transformerLayers;
    const double b = c.t.transformerBatch;
    auto tGather = [&](double params) {
        return params / ft.shard * pt.degrees[0] * bytes / entry(c.bw.ag, 0, nt, c.file);
    };
    for (int j = 0; j < N; ++j) {
        const std::string A = layerName("Attn", j), F = layerName("TransformerFC", j);
        std::vector<std::string> ad;
        if (ft.firstIsFsdp) {
            st.comm(A + "_f_c_wgt_ag.", Kind::AllGather, tGather(sh.attnParams),
                    {j == 0 ? prevBot + "_f." : layerName("Attn", j - 1) + "_f."});
            ad.push_back(A + "_f_c_wgt_ag.");
        }
        if (j == 0) {
            if (!afterEmb.empty()) ad.push_back(afterEmb);
            if (fm.tpLevel >= 0) ad.push_back(lastBot + "_f_c_act_ar.");
        } else if (ft.tpLevel >= 0) {
            ad.push_back(layerName("TransformerFC", j - 1) + "_f_c_act_ar.");
        }
        st.compute(A + "_f.", Kind::Gemm, sh.attnFlops * b / ft.tp / c.flops, ad);
        if (ft.tpLevel >= 0)
            st.comm(A + "_f_c_act_ar.", Kind::AllReduce,
                    sh.actBytes / entry(c.bw.ar, ft.tpLevel, nt, c.file), {A + "_f."});
        std::vector<std::string> fd;
        if (ft.firstIsFsdp) {
            st.comm(F + "_f_c_wgt_ag.", Kind::AllGather, tGather(sh.fcParams),
                    {j == 0 ? lastBot + "_f." : layerName("TransformerFC", j - 1) + "_f."});
            fd.push_back(F + "_f_c_wgt_ag.");
        }
        if (ft.tpLevel >= 0) fd.push_back(A + "_f_c_act_ar.");
        st.compute(F + "_f.", Kind::Gemm, sh.fcFlops * b / ft.tp / c.flops, fd);
        if (ft.tpLevel >= 0)
            st.comm(F + "_f_c_act_ar.", Kind::AllReduce,
                    sh.actBytes / entry(c.bw.ar, ft.tpLevel, nt, c.file), {F + "_f."});
    }
    const std::string lastA = layerName("Attn", N - 1), lastF = layerName("TransformerFC", N - 1);
    // The top MLP: DLRM's, entered from the transformer (its first layer waits for the last
    // FC's TP all-reduce, not for the embeddings; its first gathers for the last layer).
    mlpForward(c, st, top, fm, ft.tpLevel >= 0 ? lastF + "_f_c_act_ar." : "", "",
               {lastA + "_f.", lastF + "_f."});
}

/// The DLRM_Transformer backward. Its quirks, kept: the top MLP's TP all-reduces and the
/// attention's index the bandwidth list by the other component's level count; a transformer
/// layer's attention waits for the FC of the layer above (not its own); transformer gradients
/// follow freeze_transformer for every layer; the bottom's gathers wait for TransformerFC0,
/// then for what the layer before waited on (the file reuses its dependency set).
namespace {

/// Seconds per parameter byte of the MLPs' FSDP weight all-gather.
double mlpGatherPerParam(const Context& c, const Factors& fm) {
    const int nm = int(c.t.mlp.kinds.size());
    return 1.0 / fm.shard * fm.fsdpDegree * c.m.bytesNonEmb / entry(c.bw.ag, 0, nm, c.file);
}

/// The top MLP's backward, last layer first.
void topMlpBackward(Context& c, Streams& st, const MlpStack& top, const Factors& fm,
                    bool topGrads) {
    const Parallel& pm = c.t.mlp;
    const int nt = int(c.t.transformer.kinds.size());
    const double bm = c.t.mlpBatch;
    const double mlpAct = bm * c.m.mlpDim * c.m.bytesNonEmb;
    const double mAg = mlpGatherPerParam(c, fm);
    const double tLtop = top.flopsPerSample * bm / fm.tp / c.flops;
    for (int i = top.layers - 1; i >= 0; --i) {
        const std::string L = layerName("MLPTop", i);
        std::vector<std::string> deps;
        if (fm.firstIsFsdp) {
            st.comm(L + "_b_c_wgt_ag.", Kind::AllGather, top.params * mAg,
                    {layerName("MLPTop", i + 2) + "_b."});
            deps.push_back(L + "_b_c_wgt_ag.");
        }
        if (i + 1 < top.layers && fm.tpLevel >= 0 && (i + 1) % 2 == 0)
            deps.push_back(layerName("MLPTop", i + 1) + "_b_c_act_ar.");
        st.compute(L + "_b.", Kind::Gemm, 2.0 * tLtop, deps);
        gradientComm(c, st, pm, fm, L, top.params, mlpAct, i % 2 == 0, topGrads, nullptr, nt);
    }
}

/// The transformer layers' backward, FC then attention, last layer first.
void transformerStackBackward(Context& c, Streams& st, const TransformerShape& sh,
                              const Factors& fm, const Factors& ft, bool transformerTrain) {
    const Parallel& pt = c.t.transformer;
    const int nm = int(c.t.mlp.kinds.size()), nt = int(pt.kinds.size());
    const double bytes = c.m.bytesNonEmb;
    const double bt = c.t.transformerBatch;
    const int N = c.m.transformerLayers;
    auto tAg = [&](double params) {
        return params / ft.shard * pt.degrees[0] * bytes / entry(c.bw.ag, 0, nt, c.file);
    };
    for (int j = N - 1; j >= 0; --j) {
        const std::string A = layerName("Attn", j), F = layerName("TransformerFC", j);
        std::vector<std::string> fd;
        if (ft.firstIsFsdp) {
            st.comm(F + "_b_c_wgt_ag.", Kind::AllGather, tAg(sh.fcParams),
                    {j == N - 1 ? std::string("MLPTop1_b.")
                                : layerName("TransformerFC", j + 1) + "_b."});
            fd.push_back(F + "_b_c_wgt_ag.");
        }
        if (j == N - 1) {
            if (fm.tpLevel >= 0) fd.push_back("MLPTop0_b_c_act_ar.");
        } else if (ft.tpLevel >= 0) {
            fd.push_back(layerName("Attn", j + 1) + "_b_c_act_ar.");
        }
        st.compute(F + "_b.", Kind::Gemm, 2.0 * sh.fcFlops * bt / ft.tp / c.flops, fd);
        gradientComm(c, st, pt, ft, F, sh.fcParams, sh.actBytes, true, transformerTrain, nullptr,
                     nt);
        std::vector<std::string> ad;
        if (ft.firstIsFsdp) {
            st.comm(A + "_b_c_wgt_ag.", Kind::AllGather, tAg(sh.attnParams),
                    {j == N - 1 ? std::string("MLPTop0_b.") : layerName("Attn", j + 1) + "_b."});
            ad.push_back(A + "_b_c_wgt_ag.");
        }
        if (j + 1 < N && ft.tpLevel >= 0)
            ad.push_back(layerName("TransformerFC", j + 1) + "_b_c_act_ar.");
        st.compute(A + "_b.", Kind::Gemm, 2.0 * sh.attnFlops * bt / ft.tp / c.flops, ad);
        gradientComm(c, st, pt, ft, A, sh.attnParams, sh.actBytes, true, transformerTrain, nullptr,
                     nm);
    }
}

/// The bottom MLP's backward, last layer first (the file's dependency names kept as it
/// reuses them).
void bottomMlpBackward(Context& c, Streams& st, const MlpStack& bottom, const Factors& fm) {
    const Parallel& pm = c.t.mlp;
    const int nm = int(pm.kinds.size());
    const double bm = c.t.mlpBatch;
    const double mlpAct = bm * c.m.mlpDim * c.m.bytesNonEmb;
    const double mAg = mlpGatherPerParam(c, fm);
    const double tL = bottom.flopsPerSample * bm / fm.tp / c.flops;
    std::string gatherAfter; // the dependency set the file reuses, as its one real name
    for (int i = bottom.layers - 1; i >= 0; --i) {
        const std::string L = layerName("MLPBot", i);
        std::vector<std::string> deps;
        if (fm.firstIsFsdp) {
            if (i == bottom.layers - 1)
                gatherAfter = "TransformerFC0_b.";
            else if (bottom.layers == 2)
                gatherAfter = "Attn0_b.";
            st.comm(L + "_b_c_wgt_ag.", Kind::AllGather, bottom.params * mAg, {gatherAfter});
            deps.push_back(L + "_b_c_wgt_ag.");
        }
        if (i == bottom.layers - 1) {
            if (fm.tpLevel >= 0) deps.push_back("MLPTop0_b_c_act_ar.");
            gatherAfter = "MLPTop0_b.";
        } else {
            if (fm.tpLevel >= 0 && (i + 1) % 2 == 0)
                deps.push_back(layerName("MLPBot", i + 1) + "_b_c_act_ar.");
            gatherAfter = layerName("MLPBot", i + 1) + "_b.";
        }
        st.compute(L + "_b.", Kind::Gemm, 2.0 * tL, deps);
        gradientComm(c, st, pm, fm, L, bottom.params, mlpAct, i % 2 == 0, true, nullptr, nm);
    }
}

} // namespace

void dlrmTransformerBackward(Context& c, Streams& st, const MlpStack& bottom, const MlpStack& top,
                             const TransformerShape& sh, const Factors& fm, const Factors& ft,
                             bool topGrads, bool bottomTrain, bool embTrain, bool transformerTrain,
                             const Embedding& e) {
    topMlpBackward(c, st, top, fm, topGrads);
    if (bottomTrain || embTrain || transformerTrain)
        transformerStackBackward(c, st, sh, fm, ft, transformerTrain);
    if (embTrain) embeddingComm(c, st, e, "b", {"Attn0_b.", "Attn0_b_c_act_ar."}, true);
    if (bottomTrain) bottomMlpBackward(c, st, bottom, fm);
}

} // namespace madmax::seed::detail
