// The reference code's MLP stacks and transformer layers (DLRM, LLM, LLM_MoE, ViT tasks), and
// the embedding collectives, op for op in its issue order.
#include "seed/reference_ops.hpp"

namespace madmax::seed::detail {

/// `gatherAfter`: what the first two layers' FSDP all-gathers wait for (the files name the
/// bottom MLP's last two layers for the top's; empty: none).
void mlpForward(Context& c, Streams& st, const MlpStack& k, const Factors& f,
                const std::string& firstDep, const std::string& prevLast,
                const std::array<std::string, 2>& gatherAfter) {
    const Parallel& p = c.t.mlp;
    const int n = int(p.kinds.size());
    const double b = c.t.mlpBatch;
    const double tL = k.flopsPerSample * b / f.tp / c.flops;
    const double bytes = c.m.bytesNonEmb;
    for (int i = 0; i < k.layers; ++i) {
        const std::string L = layerName(k.prefix, i);
        std::vector<std::string> deps;
        if (f.firstIsFsdp) {
            const double ag = k.params / f.shard * f.fsdpDegree * bytes;
            st.comm(L + "_f_c_wgt_ag.", Kind::AllGather, ag / entry(c.bw.ag, 0, n, c.file),
                    i >= 2 ? std::vector<std::string>{layerName(k.prefix, i - 2) + "_f."}
                           : std::vector<std::string>{gatherAfter[std::size_t(i)]});
            deps.push_back(L + "_f_c_wgt_ag.");
        }
        if (i > 0 && f.tpLevel >= 0 && (i - 1) % 2 == 1)
            deps.push_back(layerName(k.prefix, i - 1) + "_f_c_act_ar.");
        if (i == 0 && !firstDep.empty()) deps.push_back(firstDep);
        // The previous layer's TP all-reduce, across stacks too (the top's first layer waits
        // for the bottom's last all-reduce).
        if (i == 0 && !prevLast.empty() && f.tpLevel >= 0)
            deps.push_back(prevLast + "_f_c_act_ar.");
        // DLRM_MoE (experts split by tp): the file names these all-to-alls MoE<layer>; the
        // first's dependency names a comm op, never searched on its own stream.
        const std::string E = layerName("MoE", i);
        if (k.moe) {
            const double a2a = b * c.m.mlpDim * bytes / c.m.experts;
            st.comm(E + "_f_c_act_all2all1.", Kind::AllToAll,
                    a2a / entry(c.bw.a2a, f.tpLevel, n, c.file));
            deps.push_back(E + "_f_c_act_all2all1.");
        }
        st.compute(L + "_f.", Kind::Gemm, tL, deps);
        const bool ar = f.tpLevel >= 0 && i % 2 == 1;
        if (ar)
            st.comm(L + "_f_c_act_ar.", Kind::AllReduce,
                    b * c.m.mlpDim * bytes / entry(c.bw.ar, f.tpLevel, n, c.file), {L + "_f."});
        if (k.moe) {
            std::vector<std::string> d2 = {L + "_f."};
            if (ar) d2.push_back(L + "_f_c_act_ar.");
            const double a2a = b * c.m.mlpDim * bytes / c.m.experts;
            st.comm(E + "_f_c_act_all2all2.", Kind::AllToAll,
                    a2a / entry(c.bw.a2a, f.tpLevel, n, c.file), d2);
        }
    }
}

/// Gradient communication of one layer (or sub-layer) of `params`: per strategy level in list
/// order, with a running shard count divided after tp and fsdp levels (quirk: [tp, ddp]
/// all-reduces the full layer, [ddp, tp] a shard); `moeA2a` follows the TP all-reduce;
/// `actN` ≥ 0: the level count the TP all-reduce indexes the list with (DLRM_Transformer's
/// quirk of another component's count), else this component's.
void gradientComm(Context& c, Streams& st, const Parallel& p, const Factors& f,
                  const std::string& L, double params, double actBytes, bool actThisLayer,
                  bool weightGrads, const MoeA2a* moeA2a, int actN) {
    const int n = int(p.kinds.size());
    const double bytes = c.m.bytesNonEmb;
    double s = f.shard;
    for (int lvl = 0; lvl < n; ++lvl) {
        const std::string& kind = p.kinds[std::size_t(lvl)];
        if (kind == "ddp") {
            if (weightGrads)
                st.comm(L + "_b_c_wg_ar", Kind::AllReduce,
                        params * bytes / s / entry(c.bw.ar, lvl, n, c.file), {L + "_b."});
        } else if (kind == "fsdp") {
            s /= p.degrees[std::size_t(lvl)];
            if (weightGrads)
                st.comm(L + "_b_c_wg_rs", Kind::ReduceScatter,
                        params * bytes / s / entry(c.bw.rs, 0, n, c.file), {L + "_b."});
        } else if (kind == "tp") {
            s /= p.degrees[std::size_t(lvl)];
            if (actThisLayer)
                st.comm(L + "_b_c_act_ar.", Kind::AllReduce,
                        actBytes / (actN < 0 ? entry(c.bw.ar, lvl, n, c.file)
                                             : pyEntry(c.bw.ar, lvl, actN, c.file)),
                        {L + "_b."});
            if (moeA2a) st.comm(moeA2a->name, Kind::AllToAll, moeA2a->seconds, {L + "_b."});
        }
    }
}

/// `alsoFirst`: one more dependency of the first layer's backward (the bottom's waits for the
/// MoE top's last combine all-to-all).
void mlpBackward(Context& c, Streams& st, const MlpStack& k, const Factors& f, bool weightGrads,
                 const std::string& prevLast, const std::string& alsoFirst) {
    const Parallel& p = c.t.mlp;
    const int n = int(p.kinds.size());
    const double b = c.t.mlpBatch;
    const double tL = k.flopsPerSample * b / f.tp / c.flops;
    const double bytes = c.m.bytesNonEmb;
    for (int i = k.layers - 1; i >= 0; --i) {
        const std::string L = layerName(k.prefix, i);
        std::vector<std::string> deps;
        if (f.firstIsFsdp) {
            const double ag = k.params / f.shard * f.fsdpDegree * bytes;
            st.comm(L + "_b_c_wgt_ag.", Kind::AllGather, ag / entry(c.bw.ag, 0, n, c.file),
                    i + 2 < k.layers ? std::vector<std::string>{layerName(k.prefix, i + 2) + "_b."}
                                     : std::vector<std::string>{});
            deps.push_back(L + "_b_c_wgt_ag.");
        }
        if (i + 1 < k.layers && f.tpLevel >= 0 && (i + 1) % 2 == 0)
            deps.push_back(layerName(k.prefix, i + 1) + "_b_c_act_ar.");
        if (i + 1 == k.layers && !prevLast.empty() && f.tpLevel >= 0)
            deps.push_back(prevLast + "_b_c_act_ar."); // across stacks, as in the forward
        if (i + 1 == k.layers && !alsoFirst.empty()) deps.push_back(alsoFirst);
        // DLRM_MoE: the first all-to-all before the layer's backward, the second right after
        // its TP all-reduce, inside the strategy levels (as the file issues them).
        const std::string E = layerName("MoE", i);
        const double a2a =
            k.moe ? b * c.m.mlpDim * bytes / c.m.experts / entry(c.bw.a2a, f.tpLevel, n, c.file)
                  : 0.0;
        if (k.moe) {
            st.comm(E + "_b_c_act_all2all1.", Kind::AllToAll, a2a);
            deps.push_back(E + "_b_c_act_all2all1.");
        }
        st.compute(L + "_b.", Kind::Gemm, 2.0 * tL, deps);
        const MoeA2a combine{E + "_b_c_act_all2all2.", a2a};
        gradientComm(c, st, p, f, L, k.params, b * c.m.mlpDim * bytes, i % 2 == 0, weightGrads,
                     k.moe ? &combine : nullptr);
    }
}

TransformerShape transformerShape(const Context& c, double seq) {
    const Model& m = c.m;
    TransformerShape sh;
    const double h = m.hidden, fc = m.fcDim;
    const double k = m.type == ModelType::LlmMoe ? m.activeExperts : 1.0;
    const double e = m.type == ModelType::LlmMoe ? m.experts : 1.0;
    sh.attnFlops = 2.0 * 4.0 * h * h * seq;
    sh.fcFlops = 2.0 * 2.0 * h * fc * seq * k;
    sh.attnParams = 4.0 * h * h;
    sh.fcParams = 2.0 * h * fc * e;
    sh.actBytes = c.t.transformerBatch * seq * h * m.bytesNonEmb;
    sh.a2aBytes = sh.actBytes / e;
    return sh;
}

/// FSDP: the forward all-gather of sub-layer `prefix``j` (its weights, `params`), issued when
/// the same sub-layer of the layer before has computed; returns its name.
std::string fsdpGather(Context& c, Streams& st, const Factors& f, const std::string& prefix, int j,
                       double params) {
    const std::string name = layerName(prefix, j) + "_f_c_wgt_ag.";
    const int n = int(c.t.transformer.kinds.size());
    st.comm(name, Kind::AllGather,
            params / f.shard * f.fsdpDegree * c.m.bytesNonEmb / entry(c.bw.ag, 0, n, c.file),
            j > 0 ? std::vector<std::string>{layerName(prefix, j - 1) + "_f."}
                  : std::vector<std::string>{});
    return name;
}

void transformerForward(Context& c, Streams& st, const TransformerShape& sh, const Factors& f,
                        const std::string& firstDep) {
    const Parallel& p = c.t.transformer;
    const int n = int(p.kinds.size());
    const double b = c.t.transformerBatch;
    const bool moe = sh.moe;
    for (int j = 0; j < c.m.transformerLayers; ++j) {
        const std::string A = layerName("Attn", j), F = layerName("TransformerFC", j);
        const std::string M = layerName("MoE", j);
        std::vector<std::string> ad;
        if (f.firstIsFsdp) ad.push_back(fsdpGather(c, st, f, "Attn", j, sh.attnParams));
        if (j == 0 && !firstDep.empty()) ad.push_back(firstDep);
        if (j > 0 && moe) ad.push_back(layerName("MoE", j - 1) + "_f_c_act_all2all2.");
        if (j > 0 && f.tpLevel >= 0)
            ad.push_back(layerName("TransformerFC", j - 1) + "_f_c_act_ar.");
        st.compute(A + "_f.", Kind::Gemm, sh.attnFlops * b / f.tp / c.flops, ad);
        if (f.tpLevel >= 0)
            st.comm(A + "_f_c_act_ar.", Kind::AllReduce,
                    sh.actBytes / entry(c.bw.ar, f.tpLevel, n, c.file), {A + "_f."});
        // quirk: all2all1's dependency names a comm op, which is never searched on its own
        // stream: it chains only through the comm FIFO.
        if (moe)
            st.comm(M + "_f_c_act_all2all1.", Kind::AllToAll,
                    sh.a2aBytes / entry(c.bw.a2a, f.tpLevel, n, c.file), {A + "_f_c_act_ar."});
        std::vector<std::string> fd;
        if (f.firstIsFsdp) fd.push_back(fsdpGather(c, st, f, "TransformerFC", j, sh.fcParams));
        if (f.tpLevel >= 0) fd.push_back(A + "_f_c_act_ar.");
        if (moe) fd.push_back(M + "_f_c_act_all2all1.");
        st.compute(F + "_f.", Kind::Gemm, sh.fcFlops * b / f.tp / c.flops, fd);
        if (f.tpLevel >= 0)
            st.comm(F + "_f_c_act_ar.", Kind::AllReduce,
                    sh.actBytes / entry(c.bw.ar, f.tpLevel, n, c.file), {F + "_f."});
        if (moe) {
            std::vector<std::string> d2 = {F + "_f."};
            if (f.tpLevel >= 0) d2.push_back(F + "_f_c_act_ar.");
            st.comm(M + "_f_c_act_all2all2.", Kind::AllToAll,
                    sh.a2aBytes / entry(c.bw.a2a, f.tpLevel, n, c.file), d2);
        }
    }
}

/// Backward of the transformer layers. `optimized`: the ViT ordering, which prefetches the
/// all-gathers without dependencies; else the pre-optimized LLM ordering, whose all-gathers
/// queue behind the reduce-scatters (and are exposed). `gradLayers`: layers below this index
/// communicate their gradients (finetune); `grads` false: none do.
void transformerBackward(Context& c, Streams& st, const TransformerShape& sh, const Factors& f,
                         bool optimized, int gradLayers, bool grads) {
    const Parallel& p = c.t.transformer;
    const int n = int(p.kinds.size());
    const double b = c.t.transformerBatch;
    const int N = c.m.transformerLayers;
    const double bytes = c.m.bytesNonEmb;
    // A gathered layer's bytes: its shard times the first level's degree, whatever that level
    // is (the reference code's formula, applied to FSDP's gathers and to the spurious one).
    const double first = p.degrees.empty() ? 1.0 : double(p.degrees[0]);
    const double agAttn = sh.attnParams / f.shard * first * bytes / entry(c.bw.ag, 0, n, c.file);
    const double agFc = sh.fcParams / f.shard * first * bytes / entry(c.bw.ag, 0, n, c.file);
    const bool gather = f.firstIsFsdp;
    // The optimized file prefetches the last FC layer's weights whatever the strategy (quirk:
    // without FSDP a spurious all-gather of the full layer times the first degree).
    if (optimized)
        st.comm(layerName("TransformerFC", N - 1) + "_b_c_wgt_ag.", Kind::AllGather, agFc);
    for (int j = N - 1; j >= 0; --j) {
        const std::string A = layerName("Attn", j), F = layerName("TransformerFC", j);
        const std::string M = layerName("MoE", j);
        const bool g = grads && j < gradLayers;
        std::vector<std::string> fd;
        if (gather) {
            if (optimized) {
                st.comm(A + "_b_c_wgt_ag.", Kind::AllGather, agAttn);
            } else {
                st.comm(F + "_b_c_wgt_ag.", Kind::AllGather, agFc,
                        j + 1 < N
                            ? std::vector<std::string>{layerName("TransformerFC", j + 1) + "_b."}
                            : std::vector<std::string>{});
            }
        }
        if (gather || (optimized && j == N - 1)) fd.push_back(F + "_b_c_wgt_ag.");
        // Each layer's backward waits for the previous one's TP activation all-reduce (the
        // files name it among the compute's dependencies, as in the forward).
        if (j + 1 < N && f.tpLevel >= 0) fd.push_back(layerName("Attn", j + 1) + "_b_c_act_ar.");
        // LLM_MoE (experts split by tp): the dispatch's gradient before the FC backward, the
        // combine's right after its TP all-reduce, which the attention backward waits for.
        // (The first's dependency names a comm op, never searched on its own stream.)
        const double a2a = sh.moe ? sh.a2aBytes / entry(c.bw.a2a, f.tpLevel, n, c.file) : 0.0;
        if (sh.moe) {
            st.comm(M + "_b_c_act_all2all1.", Kind::AllToAll, a2a);
            fd.push_back(M + "_b_c_act_all2all1.");
        }
        st.compute(F + "_b.", Kind::Gemm, 2.0 * sh.fcFlops * b / f.tp / c.flops, fd);
        const MoeA2a combine{M + "_b_c_act_all2all2.", a2a};
        gradientComm(c, st, p, f, F, sh.fcParams, sh.actBytes, true, g,
                     sh.moe ? &combine : nullptr);
        std::vector<std::string> ad;
        if (gather) {
            if (optimized) {
                if (j > 0)
                    st.comm(layerName("TransformerFC", j - 1) + "_b_c_wgt_ag.", Kind::AllGather,
                            agFc);
            } else {
                st.comm(A + "_b_c_wgt_ag.", Kind::AllGather, agAttn,
                        j + 1 < N ? std::vector<std::string>{layerName("Attn", j + 1) + "_b."}
                                  : std::vector<std::string>{});
            }
            ad.push_back(A + "_b_c_wgt_ag.");
        }
        if (f.tpLevel >= 0) ad.push_back(F + "_b_c_act_ar.");
        if (sh.moe) ad.push_back(M + "_b_c_act_all2all2.");
        st.compute(A + "_b.", Kind::Gemm, 2.0 * sh.attnFlops * b / f.tp / c.flops, ad);
        gradientComm(c, st, p, f, A, sh.attnParams, sh.actBytes, true, g);
    }
}

void embeddingComm(Context& c, Streams& st, const Embedding& e, const std::string& phase,
                   const std::vector<std::string>& deps, bool backward) {
    const Parallel& p = c.t.emb;
    const int n = int(p.kinds.size());
    for (int lvl = 0; lvl < n; ++lvl)
        if (p.kinds[std::size_t(lvl)] == "mp")
            st.comm("EMB_" + phase + "_c_all2all.", Kind::AllToAll,
                    2.0 * e.devBytes / p.degrees[std::size_t(lvl)] /
                        entry(c.bw.a2a, lvl, n, c.file),
                    deps);
    // quirk: the test is on the first level only, so [mp, ddp] never all-reduces.
    if (backward && p.kinds[0] == "ddp")
        st.comm("EMB_" + phase + "_c_wg_ar", Kind::AllReduce,
                e.devBytes / entry(c.bw.ar, 0, n, c.file), deps);
}

} // namespace madmax::seed::detail
