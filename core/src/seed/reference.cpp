// The reference code's computation, reproduced (SEED-FORMAT.md §1): per-component parallel
// factors, one op list per stream in issue order, and a FIFO scheduler whose dependencies are
// substrings of op names searched in the other stream only. Quirks are kept on purpose (see
// the comments marked "quirk"); the native engine is where the physics is done properly.
#include "madmax/error.hpp"
#include "madmax/seed.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <unordered_map>

namespace madmax::seed {

namespace {

enum class Kind { Gemm, Emb, AllToAll, AllReduce, AllGather, ReduceScatter };

struct Placed {
    std::string name;
    Kind kind;
    double start, end;
};

/// Two FIFO streams. An op starts when its own stream is free and every op of the *other*
/// stream whose name contains one of its dependency strings has ended (ops issued so far).
class Streams {
  public:
    explicit Streams(double t0) : compEnd_(t0), commEnd_(t0) {}

    void compute(const std::string& name, Kind kind, double dur,
                 const std::vector<std::string>& deps = {}) {
        place(comp_, compIndex_, compEnd_, comm_, commIndex_, name, kind, dur, deps);
    }
    void comm(const std::string& name, Kind kind, double dur,
              const std::vector<std::string>& deps = {}) {
        place(comm_, commIndex_, commEnd_, comp_, compIndex_, name, kind, dur, deps);
    }
    double end() const { return std::max(compEnd_, commEnd_); }
    const std::vector<Placed>& computeOps() const { return comp_; }
    const std::vector<Placed>& commOps() const { return comm_; }

  private:
    using Index = std::unordered_map<std::string, double>; // full name → latest end
    /// Substring semantics. A dependency naming a whole op (every name is unique in its
    /// stream and none is a substring of another) is looked up directly; a prefix (such as
    /// "EMB_b_c") scans the stream, whose ends only grow, from the latest op back.
    static double latestEnd(const std::vector<Placed>& ops, const Index& index,
                            const std::string& dep) {
        if (auto it = index.find(dep); it != index.end()) return it->second;
        for (auto o = ops.rbegin(); o != ops.rend(); ++o)
            if (o->name.find(dep) != std::string::npos) return o->end;
        return -1.0;
    }
    static void place(std::vector<Placed>& own, Index& ownIndex, double& ownEnd,
                      const std::vector<Placed>& other, const Index& otherIndex,
                      const std::string& name, Kind kind, double dur,
                      const std::vector<std::string>& deps) {
        double start = ownEnd;
        for (const auto& d : deps)
            if (!d.empty()) start = std::max(start, latestEnd(other, otherIndex, d));
        own.push_back({name, kind, start, start + dur});
        ownIndex[name] = start + dur;
        ownEnd = start + dur;
    }
    double compEnd_, commEnd_;
    std::vector<Placed> comp_, comm_;
    Index compIndex_, commIndex_;
};

/// Effective bandwidths (SEED-FORMAT.md §1.0): lists indexed by strategy level.
struct Bandwidths {
    std::vector<double> a2a, ar, ag, rs;
};

Bandwidths bandwidths(const System& s) {
    const double gpn = double(s.devices) / s.nodes;
    const double intra = s.nvlinks * s.bwPerNvlink / 2.0 * s.nvlinkUtil;
    const double inter = s.ibPorts * s.ibBw / 2.0 * s.ibUtil / gpn;
    const double blend = s.arPercIntra * intra + (1.0 - s.arPercIntra) * inter;
    Bandwidths b;
    if (s.nodes == 1) {
        b.a2a = b.ar = {blend};
    } else {
        b.a2a = {intra, inter};
        b.ar = {intra, blend};
    }
    for (double v : b.ar)
        b.ag.push_back(2.0 * v), b.rs.push_back(2.0 * v);
    return b;
}

/// Python's list[level − n]: the last entry for 1-D strategies, intra then inter for 2-D.
double entry(const std::vector<double>& list, int level, int n, const std::string& file) {
    const int idx = int(list.size()) + level - n;
    if (idx < 0 || idx >= int(list.size()))
        throw InputError(file, "parallel",
                         "a " + std::to_string(n) + "-level strategy on a system with " +
                             std::to_string(list.size()) +
                             " bandwidth level(s): the reference code indexes past its list");
    return list[std::size_t(idx)];
}

/// Python's list[level − n] when level and n come from different components (the
/// DLRM_Transformer file's quirk): a non-negative index counts from the front.
double pyEntry(const std::vector<double>& list, int level, int n, const std::string& file) {
    int idx = level - n;
    if (idx < 0) idx += int(list.size());
    if (idx < 0 || idx >= int(list.size()))
        throw InputError(file, "parallel",
                         "the reference code indexes its bandwidth list at " +
                             std::to_string(level - n) + " of " + std::to_string(list.size()) +
                             " (a Python IndexError)");
    return list[std::size_t(idx)];
}

/// A component's parallel factors: duplicate (ddp·fsdp), shard (tp·pp·fsdp, or mp), TP.
struct Factors {
    double duplicate = 1, shard = 1, tp = 1;
    int tpLevel = -1, fsdpDegree = 1;
    bool firstIsFsdp = false;
};

Factors factors(const Parallel& p, bool embedding) {
    Factors f;
    for (std::size_t i = 0; i < p.kinds.size(); ++i) {
        const std::string& k = p.kinds[i];
        const double d = p.degrees[i];
        if (k == "ddp" || k == "fsdp") f.duplicate *= d;
        if (embedding ? k == "mp" : (k == "tp" || k == "pp" || k == "fsdp")) f.shard *= d;
        if (k == "tp") {
            f.tp = d;
            f.tpLevel = int(i);
        }
        if (k == "fsdp") f.fsdpDegree = int(d);
    }
    f.firstIsFsdp = !p.kinds.empty() && p.kinds[0] == "fsdp";
    return f;
}

/// The reference code's assertions, as errors naming the task field.
void checkParallel(const Parallel& p, const std::string& field, const System& s,
                   const std::string& file) {
    if (p.empty()) return;
    if (p.kinds.size() > 2)
        throw InputError(file, field, "at most 2 levels (the reference code's restrict2d)");
    long long product = 1; // two degrees of at most 2^24: no overflow
    for (int d : p.degrees)
        product *= d;
    if (product != s.devices)
        throw InputError(file, field + "_degree",
                         "the degrees multiply to " + std::to_string(product) +
                             ", but the system has " + std::to_string(s.devices) +
                             " devices; they must be equal");
    for (std::size_t i = 1; i < p.kinds.size(); ++i)
        if (p.kinds[i] == "fsdp") throw InputError(file, field, "fsdp may only be the first level");
    const int gpn = s.devices / s.nodes;
    if (p.kinds.size() == 2 && p.degrees[0] != gpn && p.degrees[0] != s.devices)
        throw InputError(file, field + "_degree",
                         "with 2 levels the first degree must be the GPUs per node (" +
                             std::to_string(gpn) + ") or all " + std::to_string(s.devices) +
                             " devices");
}

struct Context {
    const Model& m;
    const System& s;
    const Task& t;
    std::string file;
    Bandwidths bw;
    double flops = 0, memBw = 0;
    bool train = true;
};

std::string layerName(const std::string& prefix, int i) {
    return prefix + std::to_string(i);
}

// ---------------------------------------------------------------------------------------------
// MLP stacks of the DLRM family.

struct MlpStack {
    std::string prefix; ///< MLPBot / MLPTop
    int layers;
    double flopsPerSample; ///< per layer
    double params;         ///< per layer (×E for MoE tops)
    bool moe;              ///< DLRM_MoE top with tp: two all-to-alls per layer
};

/// `gatherAfter`: what the first two layers' FSDP all-gathers wait for (the files name the
/// bottom MLP's last two layers for the top's; empty: none).
void mlpForward(Context& c, Streams& st, const MlpStack& k, const Factors& f,
                const std::string& firstDep, const std::string& prevLast = "",
                const std::array<std::string, 2>& gatherAfter = {}) {
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

/// A MoE layer's second backward all-to-all (combine's gradient), which the LLM_MoE and
/// DLRM_MoE files issue right after the TP activation all-reduce, inside the level loop.
struct MoeA2a {
    std::string name;
    double seconds = 0;
};

/// Gradient communication of one layer (or sub-layer) of `params`: per strategy level in list
/// order, with a running shard count divided after tp and fsdp levels (quirk: [tp, ddp]
/// all-reduces the full layer, [ddp, tp] a shard); `moeA2a` follows the TP all-reduce;
/// `actN` ≥ 0: the level count the TP all-reduce indexes the list with (DLRM_Transformer's
/// quirk of another component's count), else this component's.
void gradientComm(Context& c, Streams& st, const Parallel& p, const Factors& f,
                  const std::string& L, double params, double actBytes, bool actThisLayer,
                  bool weightGrads, const MoeA2a* moeA2a = nullptr, int actN = -1) {
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
                 const std::string& prevLast = "", const std::string& alsoFirst = "") {
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

// ---------------------------------------------------------------------------------------------
// Transformer layers (DLRM_Transformer, LLM, LLM_MoE, ViT).

struct TransformerShape {
    double attnFlops, fcFlops; ///< per sample
    double attnParams, fcParams;
    double actBytes; ///< b·s·h·bytes
    bool moe;        ///< LLM_MoE with tp: two all-to-alls per layer
    double a2aBytes;
};

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

// ---------------------------------------------------------------------------------------------

/// Embedding lookup bytes of one device (and the lookup time).
struct Embedding {
    double devBytes = 0, time = 0, params = 0;
};

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
void dlrmTransformerBackward(Context& c, Streams& st, const MlpStack& bottom, const MlpStack& top,
                             const TransformerShape& sh, const Factors& fm, const Factors& ft,
                             bool topGrads, bool bottomTrain, bool embTrain, bool transformerTrain,
                             const Embedding& e) {
    const Parallel& pm = c.t.mlp;
    const Parallel& pt = c.t.transformer;
    const int nm = int(pm.kinds.size()), nt = int(pt.kinds.size());
    const double bytes = c.m.bytesNonEmb;
    const double bm = c.t.mlpBatch, bt = c.t.transformerBatch;
    const double mlpAct = bm * c.m.mlpDim * bytes;
    const double mAg = 1.0 / fm.shard * fm.fsdpDegree * bytes / entry(c.bw.ag, 0, nm, c.file);
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
    const int N = c.m.transformerLayers;
    if (bottomTrain || embTrain || transformerTrain) {
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
            gradientComm(c, st, pt, ft, F, sh.fcParams, sh.actBytes, true, transformerTrain,
                         nullptr, nt);
            std::vector<std::string> ad;
            if (ft.firstIsFsdp) {
                st.comm(
                    A + "_b_c_wgt_ag.", Kind::AllGather, tAg(sh.attnParams),
                    {j == N - 1 ? std::string("MLPTop0_b.") : layerName("Attn", j + 1) + "_b."});
                ad.push_back(A + "_b_c_wgt_ag.");
            }
            if (j + 1 < N && ft.tpLevel >= 0)
                ad.push_back(layerName("TransformerFC", j + 1) + "_b_c_act_ar.");
            st.compute(A + "_b.", Kind::Gemm, 2.0 * sh.attnFlops * bt / ft.tp / c.flops, ad);
            gradientComm(c, st, pt, ft, A, sh.attnParams, sh.actBytes, true, transformerTrain,
                         nullptr, nm);
        }
    }
    if (embTrain) embeddingComm(c, st, e, "b", {"Attn0_b.", "Attn0_b_c_act_ar."}, true);
    if (bottomTrain) {
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
}

void collect(const Streams& st, ReferenceResult& r) {
    for (const auto& o : st.computeOps()) {
        (o.kind == Kind::Emb ? r.embS : r.gemmS) += o.end - o.start;
        r.compute.push_back({o.name, o.start, o.end});
    }
    for (const auto& o : st.commOps()) {
        const double d = o.end - o.start;
        switch (o.kind) {
        case Kind::AllToAll:
            r.allToAllS += d;
            break;
        case Kind::AllReduce:
            r.allReduceS += d;
            break;
        case Kind::AllGather:
            r.allGatherS += d;
            break;
        case Kind::ReduceScatter:
            r.reduceScatterS += d;
            break;
        default:
            break;
        }
        r.comm.push_back({o.name, o.start, o.end});
    }
}

double peakFor(const System& s, double bytes) {
    return bytes >= 8 ? s.f64 : bytes >= 4 ? s.f32 : bytes >= 2 ? s.f16 : s.i8;
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

namespace madmax::seed {

nlohmann::json toJson(const ReferenceResult& r, bool traces) {
    nlohmann::json j = {
        {"schema", "madmax-reference-result/1"},
        {"engine", "reference (MAD-Max seed code, reproduced)"},
        {"iteration_time_ms", r.iterationS * 1e3},
        {"throughput_qps", r.throughputQps},
        {"global_batch", r.globalBatch},
        {"gemm_ms", r.gemmS * 1e3},
        {"emb_ms", r.embS * 1e3},
        {"all2all_ms", r.allToAllS * 1e3},
        {"allreduce_ms", r.allReduceS * 1e3},
        {"allgather_ms", r.allGatherS * 1e3},
        {"reducescatter_ms", r.reduceScatterS * 1e3},
        {"exposed_comm_ms", r.exposedCommS * 1e3},
        {"overlapped_comm_ms", r.overlappedCommS * 1e3},
        {"mlp_weights_gb_per_device", r.mlpWeightsBytesPerDevice / 1e9},
        {"emb_weights_gb_per_device", r.embWeightsBytesPerDevice / 1e9},
        {"transformer_weights_gb_per_device", r.transformerWeightsBytesPerDevice / 1e9},
        {"model_total_params_b", r.totalParams / 1e9}};
    if (traces) {
        auto list = [](const std::vector<TraceOp>& ops) {
            nlohmann::json a = nlohmann::json::array();
            for (const auto& o : ops)
                a.push_back({o.name, o.startS * 1e3, o.endS * 1e3});
            return a;
        };
        j["traces"] = {{"comp", list(r.compute)}, {"comm", list(r.comm)}};
    }
    return j;
}

std::string formatReport(const Model& m, const System& s, const Task& t, const ReferenceResult& r) {
    char buf[256];
    std::string o;
    auto line = [&](const char* name, double ms) {
        std::snprintf(buf, sizeof buf, "  %-22s %12.3f ms\n", name, ms);
        o += buf;
    };
    o += "Reference-compatible mode: the MAD-Max seed code's computation, reproduced\n";
    o += "(no latency term, no memory check; see SEED-FORMAT.md for its conventions)\n\n";
    o += "Model      " + m.name + "\nSystem     " + s.name + " (" + std::to_string(s.devices) +
         " devices, " + std::to_string(s.nodes) + " nodes)\nTask       " + t.name + "\n\n";
    std::snprintf(buf, sizeof buf, "Iteration time       %.3f ms\n", r.iterationS * 1e3);
    o += buf;
    std::snprintf(buf, sizeof buf, "Throughput           %.1f per second (global batch %.0f)\n\n",
                  r.throughputQps, r.globalBatch);
    o += buf;
    o += "Compute\n";
    line("GEMM", r.gemmS * 1e3);
    line("embedding lookups", r.embS * 1e3);
    o += "Communication (serialized)\n";
    line("all-to-all", r.allToAllS * 1e3);
    line("all-reduce", r.allReduceS * 1e3);
    line("all-gather", r.allGatherS * 1e3);
    line("reduce-scatter", r.reduceScatterS * 1e3);
    line("exposed", r.exposedCommS * 1e3);
    line("overlapped", r.overlappedCommS * 1e3);
    o += "Weights per device\n";
    auto gb = [&](const char* name, double bytes) {
        if (bytes <= 0) return;
        std::snprintf(buf, sizeof buf, "  %-22s %12.3f GB\n", name, bytes / 1e9);
        o += buf;
    };
    gb("MLPs", r.mlpWeightsBytesPerDevice);
    gb("embeddings", r.embWeightsBytesPerDevice);
    gb("transformer", r.transformerWeightsBytesPerDevice);
    std::snprintf(buf, sizeof buf, "Parameters           %.3f billion\n", r.totalParams / 1e9);
    o += buf;
    return o;
}

} // namespace madmax::seed
