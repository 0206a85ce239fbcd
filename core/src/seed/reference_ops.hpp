// The reference code's machinery, shared by its reproduced op lists (reference*.cpp): the two
// FIFO streams with substring dependencies, per-level bandwidths, per-component parallel
// factors, the op lists' context, and the MLP, transformer and embedding shapes they cost.
#pragma once

#include "madmax/error.hpp"
#include "madmax/seed.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <unordered_map>

namespace madmax::seed::detail {

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

/// Effective bandwidths (docs/reference/seed-format.md §1.0): lists indexed by strategy level.
struct Bandwidths {
    std::vector<double> a2a, ar, ag, rs;
};

/// A component's parallel factors: duplicate (ddp·fsdp), shard (tp·pp·fsdp, or mp), TP.
struct Factors {
    double duplicate = 1, shard = 1, tp = 1;
    int tpLevel = -1, fsdpDegree = 1;
    bool firstIsFsdp = false;
};

struct Context {
    const Model& m;
    const System& s;
    const Task& t;
    std::string file;
    Bandwidths bw;
    double flops = 0, memBw = 0;
    bool train = true;
};

// ---------------------------------------------------------------------------------------------
// MLP stacks of the DLRM family.
struct MlpStack {
    std::string prefix; ///< MLPBot / MLPTop
    int layers;
    double flopsPerSample; ///< per layer
    double params;         ///< per layer (×E for MoE tops)
    bool moe;              ///< DLRM_MoE top with tp: two all-to-alls per layer
};

/// A MoE layer's second backward all-to-all (combine's gradient), which the LLM_MoE and
/// DLRM_MoE files issue right after the TP activation all-reduce, inside the level loop.
struct MoeA2a {
    std::string name;
    double seconds = 0;
};

// ---------------------------------------------------------------------------------------------
// Transformer layers (DLRM_Transformer, LLM, LLM_MoE, ViT).
struct TransformerShape {
    double attnFlops, fcFlops; ///< per sample
    double attnParams, fcParams;
    double actBytes; ///< b·s·h·bytes
    bool moe;        ///< LLM_MoE with tp: two all-to-alls per layer
    double a2aBytes;
};

// ---------------------------------------------------------------------------------------------
/// Embedding lookup bytes of one device (and the lookup time).
struct Embedding {
    double devBytes = 0, time = 0, params = 0;
};

Bandwidths bandwidths(const System& s);

/// Python's list[level − n]: the last entry for 1-D strategies, intra then inter for 2-D.
double entry(const std::vector<double>& list, int level, int n, const std::string& file);

/// Python's list[level − n] when level and n come from different components (the
/// DLRM_Transformer file's quirk): a non-negative index counts from the front.
double pyEntry(const std::vector<double>& list, int level, int n, const std::string& file);

Factors factors(const Parallel& p, bool embedding);

/// The reference code's assertions, as errors naming the task field.
void checkParallel(const Parallel& p, const std::string& field, const System& s,
                   const std::string& file);

std::string layerName(const std::string& prefix, int i);

/// `gatherAfter`: what the first two layers' FSDP all-gathers wait for (the files name the
/// bottom MLP's last two layers for the top's; empty: none).
void mlpForward(Context& c, Streams& st, const MlpStack& k, const Factors& f,
                const std::string& firstDep, const std::string& prevLast = "",
                const std::array<std::string, 2>& gatherAfter = {});

/// Gradient communication of one layer (or sub-layer) of `params`: per strategy level in list
/// order, with a running shard count divided after tp and fsdp levels (quirk: [tp, ddp]
/// all-reduces the full layer, [ddp, tp] a shard); `moeA2a` follows the TP all-reduce;
/// `actN` ≥ 0: the level count the TP all-reduce indexes the list with (DLRM_Transformer's
/// quirk of another component's count), else this component's.
void gradientComm(Context& c, Streams& st, const Parallel& p, const Factors& f,
                  const std::string& L, double params, double actBytes, bool actThisLayer,
                  bool weightGrads, const MoeA2a* moeA2a = nullptr, int actN = -1);

/// `alsoFirst`: one more dependency of the first layer's backward (the bottom's waits for the
/// MoE top's last combine all-to-all).
void mlpBackward(Context& c, Streams& st, const MlpStack& k, const Factors& f, bool weightGrads,
                 const std::string& prevLast = "", const std::string& alsoFirst = "");

TransformerShape transformerShape(const Context& c, double seq);

/// FSDP: the forward all-gather of sub-layer `prefix``j` (its weights, `params`), issued when
/// the same sub-layer of the layer before has computed; returns its name.
std::string fsdpGather(Context& c, Streams& st, const Factors& f, const std::string& prefix, int j,
                       double params);

void transformerForward(Context& c, Streams& st, const TransformerShape& sh, const Factors& f,
                        const std::string& firstDep);

/// Backward of the transformer layers. `optimized`: the ViT ordering, which prefetches the
/// all-gathers without dependencies; else the pre-optimized LLM ordering, whose all-gathers
/// queue behind the reduce-scatters (and are exposed). `gradLayers`: layers below this index
/// communicate their gradients (finetune); `grads` false: none do.
void transformerBackward(Context& c, Streams& st, const TransformerShape& sh, const Factors& f,
                         bool optimized, int gradLayers, bool grads);

void embeddingComm(Context& c, Streams& st, const Embedding& e, const std::string& phase,
                   const std::vector<std::string>& deps, bool backward);

// ---------------------------------------------------------------------------------------------
// DLRM_Transformer: its own file (dlrm_transformer_tasks.py), whose ordering and quirks differ
// from the DLRM and LLM files it resembles, so it is reproduced on its own, op for op.
/// The DLRM_Transformer forward: bottom MLP (as DLRM's), transformer layers (the first's
/// gathers waiting for the bottom's last two layers, its attention for the bottom's last TP
/// all-reduce), then the top MLP (its first gathers waiting for the last transformer layer;
/// its first layer for that layer's FC and its TP all-reduce, not for the embeddings).
void dlrmTransformerForward(Context& c, Streams& st, const MlpStack& bottom, const MlpStack& top,
                            const TransformerShape& sh, const Factors& fm, const Factors& ft,
                            const std::string& afterEmb);

/// The DLRM_Transformer backward. Its quirks, kept: the top MLP's TP all-reduces and the
/// attention's index the bandwidth list by the other component's level count; a transformer
/// layer's attention waits for the FC of the layer above (not its own); transformer gradients
/// follow freeze_transformer for every layer; the bottom's gathers wait for TransformerFC0,
/// then for what the layer before waited on (the file reuses its dependency set).
void dlrmTransformerBackward(Context& c, Streams& st, const MlpStack& bottom, const MlpStack& top,
                             const TransformerShape& sh, const Factors& fm, const Factors& ft,
                             bool topGrads, bool bottomTrain, bool embTrain, bool transformerTrain,
                             const Embedding& e);

void collect(const Streams& st, ReferenceResult& r);

double peakFor(const System& s, double bytes);

} // namespace madmax::seed::detail
