// The DLRM engine (WORKLOADS.md "DLRM"): embedding lookups on the HBM roofline at cache-line
// granularity, each sharding type's collectives on the tiers its group spans, the most loaded
// rank of a table placement, the data-parallel dense part, and the schedule that overlaps the
// sparse communication with the bottom MLP (or, pipelined, with the whole dense step).
#include "dlrm/dlrm_engine.hpp"

#include "engine/op_cost.hpp"
#include "madmax/collectives.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace madmax {

std::string_view toString(DlrmInteraction k) {
    switch (k) {
    case DlrmInteraction::Dot: return "dot";
    case DlrmInteraction::Dcnv2: return "dcnv2";
    case DlrmInteraction::Transformer: return "transformer";
    }
    return "dot";
}

std::string_view toString(EmbSharding k) {
    switch (k) {
    case EmbSharding::TableWise: return "tw";
    case EmbSharding::RowWise: return "rw";
    case EmbSharding::ColumnWise: return "cw";
    case EmbSharding::TableRowWise: return "twrw";
    case EmbSharding::DataParallel: return "dp";
    }
    return "tw";
}

std::optional<EmbSharding> parseEmbSharding(std::string_view s) {
    if (s == "tw") return EmbSharding::TableWise;
    if (s == "rw") return EmbSharding::RowWise;
    if (s == "cw") return EmbSharding::ColumnWise;
    if (s == "twrw") return EmbSharding::TableRowWise;
    if (s == "dp") return EmbSharding::DataParallel;
    return std::nullopt;
}

std::string_view toString(EmbOptimizer k) {
    switch (k) {
    case EmbOptimizer::RowwiseAdagrad: return "rowwise_adagrad";
    case EmbOptimizer::Adam: return "adam";
    case EmbOptimizer::Sgd: return "sgd";
    }
    return "rowwise_adagrad";
}

int DlrmShape::tableCount() const {
    int n = 0;
    for (const auto& t : tables)
        n += t.count;
    return n;
}

double DlrmShape::tableParams() const {
    double p = 0;
    for (const auto& t : tables)
        p += double(t.count) * double(t.rows) * t.dim;
    return p;
}

namespace {

double bottomOut(const DlrmShape& d) {
    return d.bottomMlp.empty() ? double(d.denseFeatures) : double(d.bottomMlp.back());
}

double concatWidth(const DlrmShape& d) {
    double w = bottomOut(d);
    for (const auto& t : d.tables)
        w += double(t.count) * t.dim;
    return w;
}

/// Σ 2·in·out (FLOPs) or Σ in·out + out (parameters) of an MLP from `in`.
double mlpSum(double in, const std::vector<std::int64_t>& widths, bool flops) {
    double s = 0;
    for (std::int64_t w : widths) {
        s += flops ? 2.0 * in * double(w) : in * double(w) + double(w);
        in = double(w);
    }
    return s;
}

} // namespace

double DlrmShape::interactionOutput() const {
    const double F = featureCount();
    switch (interaction) {
    case DlrmInteraction::Dot:
        // Naumov et al. 2019: the bottom output next to the F(F−1)/2 distinct dot products.
        return bottomOut(*this) + F * (F - 1) / 2.0;
    case DlrmInteraction::Dcnv2: return concatWidth(*this);
    case DlrmInteraction::Transformer: return F * bottomOut(*this);
    }
    return 0;
}

double DlrmShape::denseParams() const {
    double p = mlpSum(double(denseFeatures), bottomMlp, false);
    const double D = concatWidth(*this), d = bottomOut(*this);
    if (interaction == DlrmInteraction::Dcnv2)
        p += dcnLayers * (dcnLowRank > 0 ? 2.0 * D * dcnLowRank + D : D * D + D);
    if (interaction == DlrmInteraction::Transformer)
        p += transformerLayers * (12.0 * d * d + 13.0 * d); // QKV, out, 4× MLP; biases, norms
    const double top = mlpSum(interactionOutput(), topMlp, false);
    if (topExperts > 0) return p + topExperts * top + interactionOutput() * topExperts;
    return p + top;
}

double DlrmShape::denseForwardFlopsPerSample() const {
    double f = mlpSum(double(denseFeatures), bottomMlp, true);
    const double F = featureCount(), D = concatWidth(*this), d = bottomOut(*this);
    switch (interaction) {
    case DlrmInteraction::Dot: f += 2.0 * F * F * d; break; // batched (F×d)·(d×F)
    case DlrmInteraction::Dcnv2:
        f += dcnLayers * (dcnLowRank > 0 ? 4.0 * D * dcnLowRank : 2.0 * D * D);
        break;
    case DlrmInteraction::Transformer:
        f += transformerLayers * (2.0 * F * 12.0 * d * d + 4.0 * F * F * d);
        break;
    }
    const double top = mlpSum(interactionOutput(), topMlp, true);
    if (topExperts > 0) return f + topK * top + 2.0 * interactionOutput() * topExperts;
    return f + top;
}

namespace detail {

namespace {

constexpr double kLine = 64.0;        ///< HBM access granularity of a random row read (bytes)
constexpr double kIdBytes = 8.0;      ///< int64 indices
constexpr double kSortBytes = 64.0;   ///< radix sort of (index, position) pairs per lookup

/// Bytes one random row read moves: whole 64-byte lines (a 16-byte row costs 64).
double rowBytes(double dim, double elemBytes) {
    return std::ceil(dim * elemBytes / kLine) * kLine;
}

/// Optimizer state read and written per updated row.
double optimizerBytesPerLookup(EmbOptimizer o, double dim) {
    switch (o) {
    case EmbOptimizer::RowwiseAdagrad: return 2.0 * kLine; // one fp32 per row, a line each way
    case EmbOptimizer::Adam: return 2.0 * 2.0 * rowBytes(dim, 4.0); // m and v, fp32
    case EmbOptimizer::Sgd: return 0.0;
    }
    return 0.0;
}

/// Bytes an eager per-table step (nn.Embedding(sparse=True) and torch.optim) moves per lookup
/// beyond the fused backward-update's: the gradient slice the interaction's backward hands each
/// table is made contiguous to become the sparse gradient's values (read and written), and
/// SGD's add_ of a sparse gradient scales those values by −lr into a new tensor (read and
/// written) before index_add_ applies them — that last pass and the rows it updates are the
/// fused update's own bytes. Other optimizers' per-state passes are not priced (no source).
double eagerGradientBytesPerLookup(EmbOptimizer o, double dim, double elemBytes) {
    const double values = dim * elemBytes;
    return 2.0 * values + (o == EmbOptimizer::Sgd ? 2.0 * values : 0.0);
}

/// Optimizer state stored per row.
double optimizerBytesPerRow(EmbOptimizer o, double dim) {
    switch (o) {
    case EmbOptimizer::RowwiseAdagrad: return 4.0;
    case EmbOptimizer::Adam: return 2.0 * 4.0 * dim;
    case EmbOptimizer::Sgd: return 0.0;
    }
    return 0.0;
}

/// Column shards of a CW table: shards of at least 32 columns, at most one per group rank,
/// a power of two that divides the dimension.
int columnShards(int dim, int group) {
    int k = 1;
    while (2 * k <= group && dim % (2 * k) == 0 && dim / (2 * k) >= 32)
        k *= 2;
    return k;
}

/// One table-wise placed shard (a TW table or a CW column shard).
struct Shard {
    double costS = 0;   ///< lookups forward + backward + its all-to-all, for placement
    double lookupB = 0; ///< forward lookup bytes
    double bwdB = 0;    ///< backward + optimizer bytes
    double sendB = 0;   ///< pooled outputs it produces (full all-to-all send buffer share)
    double memB = 0;    ///< rows + optimizer state
    double optB = 0;    ///< of memB, the optimizer state
    double eagerB = 0;  ///< of bwdB, eager per-table modules' own gradient passes
};

using RankLoad = DlrmRankLoad;
void addShard(RankLoad& l, const Shard& s) {
    l.costS += s.costS;
    l.lookupB += s.lookupB;
    l.bwdB += s.bwdB;
    l.sendB += s.sendB;
    l.memB += s.memB;
    l.optB += s.optB;
    l.eagerB += s.eagerB;
}

thread_local std::vector<Shard> tShards;
thread_local std::vector<RankLoad> tLoads;

/// Longest-processing-time placement of the shards on `ranks` bins (what TorchRec's greedy
/// partitioner does by its perf estimate): largest first onto the least loaded that still has
/// room for it in `budgetB` bytes of tables (the least loaded of all when none has).
void placeShards(std::vector<Shard>& shards, std::vector<RankLoad>& loads, int ranks,
                 double budgetB) {
    loads.assign(std::size_t(ranks), RankLoad{});
    // Equal costs (one-hot tables of one width cost the same whatever their rows): the larger
    // first, so the biggest tables land on different GPUs rather than wherever ties fall.
    std::sort(shards.begin(), shards.end(), [](const Shard& a, const Shard& b) {
        return a.costS > b.costS || (a.costS == b.costS && a.memB > b.memB);
    });
    if (shards.empty()) return;
    // Identical shards are common (presets list tables in groups): a min-heap keeps it
    // O(S log G) while the least loaded GPU has room.
    auto cmp = [&](int a, int b) { return loads[a].costS > loads[b].costS; };
    thread_local std::vector<int> heap, full;
    heap.resize(std::size_t(ranks));
    std::iota(heap.begin(), heap.end(), 0);
    std::make_heap(heap.begin(), heap.end(), cmp);
    for (const Shard& s : shards) {
        full.clear();
        int chosen = -1;
        while (!heap.empty()) {
            std::pop_heap(heap.begin(), heap.end(), cmp);
            const int r = heap.back();
            heap.pop_back();
            if (loads[r].memB + s.memB <= budgetB) {
                chosen = r;
                break;
            }
            full.push_back(r); // in order of load: full.front() is the least loaded
        }
        if (chosen < 0) { // no GPU has room: the least loaded, and the memory check says so
            chosen = full.front();
            full.erase(full.begin());
        }
        addShard(loads[chosen], s);
        full.push_back(chosen);
        for (int r : full) {
            heap.push_back(r);
            std::push_heap(heap.begin(), heap.end(), cmp);
        }
    }
}

struct DenseCosts {
    double bottomFwd = 0, interFwd = 0, topFwd = 0;
    double bottomBwd = 0, interBwd = 0, topBwd = 0;
};

/// GEMM passes of each dense part's backward under workload.frozen: the weight gradient where
/// the part trains, the input gradient where something below it trains. (Model-FLOP
/// convention: a trained MLP counts both; its first layer's input gradient is costed apart.)
struct DenseBackwardPasses {
    double bottom = 2, inter = 2, top = 2;
    bool topInputGrad = true; ///< the top MLP's first layer passes gradients down
};

bool interactionHasWeights(const DlrmShape& d) { return d.interaction != DlrmInteraction::Dot; }

DenseBackwardPasses denseBackwardPasses(const DlrmShape& d, const Frozen& f) {
    DenseBackwardPasses p;
    // Tables and bottom MLP feed the interaction; the interaction's weights (DCNv2, transformer)
    // freeze with the top MLP.
    const bool inputsTrain = !f.embedding || !f.bottomMlp;
    const bool interTrains = interactionHasWeights(d) && !f.topMlp;
    p.bottom = f.bottomMlp ? 0.0 : 2.0;
    p.inter = (interTrains ? 1.0 : 0.0) + (inputsTrain ? 1.0 : 0.0);
    p.topInputGrad = inputsTrain || interTrains;
    p.top = (f.topMlp ? 0.0 : 1.0) + (p.topInputGrad ? 1.0 : 0.0);
    return p;
}

DenseCosts denseCosts(const DlrmShape& d, double b, const OpCoster& oc, double pB,
                      const Frozen& frozen) {
    DenseCosts c;
    const DenseBackwardPasses passes = denseBackwardPasses(d, frozen);
    // `trains`: the MLP's weight gradients; `inputGrad`: its first layer's input gradient (the
    // later layers pass gradients to the earlier ones whenever anything trains).
    auto mlp = [&](double in, const std::vector<std::int64_t>& widths, double rows, int groups,
                   bool trains, bool inputGrad, double& fwd, double& bwd) {
        bool firstLayer = true;
        for (std::int64_t w : widths) {
            const double g = groups > 1 ? oc.groupedGemm(rows, double(w), in, groups)
                                        : oc.gemm(rows, double(w), in);
            const double act = oc.elementwise(2.0 * rows * double(w) * pB); // bias + ReLU
            fwd += g + act;
            const bool dgrad = firstLayer ? inputGrad : (trains || inputGrad);
            const double bwdPasses = (trains ? 1.0 : 0.0) + (dgrad ? 1.0 : 0.0);
            if (bwdPasses > 0) bwd += bwdPasses * g + 2.0 * act;
            in = double(w);
            firstLayer = false;
        }
    };
    // The bottom MLP's inputs are the dense features: they need no gradient.
    mlp(double(d.denseFeatures), d.bottomMlp, b, 1, !frozen.bottomMlp, false, c.bottomFwd,
        c.bottomBwd);
    const double F = d.featureCount(), D = concatWidth(d), h = bottomOut(d);
    switch (d.interaction) {
    case DlrmInteraction::Dot: {
        // Batched (F×h)·(h×F) per sample, then the strictly lower triangle gathered next to
        // the bottom output: the features are read, the F² scores written and gathered.
        const double flops = 2.0 * b * F * F * h;
        const double bytes = b * (F * h + 2.0 * F * F + d.interactionOutput()) * pB;
        c.interFwd = std::max(flops / (oc.peak * oc.gpu.calibration.gemmEfficiency(
                                                     flops / b * oc.efficiencyKey)),
                              oc.memoryTime(bytes)) +
                     2.0 * oc.gpu.calibration.kernelLaunchS;
        c.interBwd = passes.inter > 0 ? 2.0 * c.interFwd : 0.0; // input gradients only
        break;
    }
    case DlrmInteraction::Dcnv2:
        for (int l = 0; l < d.dcnLayers; ++l) {
            const double g = d.dcnLowRank > 0 ? oc.gemm(b, double(d.dcnLowRank), D) +
                                                    oc.gemm(b, D, double(d.dcnLowRank))
                                              : oc.gemm(b, D, D);
            const double ew = oc.elementwise(4.0 * b * D * pB); // x0 ⊙ (·) + bias + x_l
            c.interFwd += g + ew;
            if (passes.inter > 0) c.interBwd += passes.inter * g + 2.0 * ew;
        }
        break;
    case DlrmInteraction::Transformer:
        for (int l = 0; l < d.transformerLayers; ++l) {
            const double rows = b * F;
            const double g = oc.gemm(rows, 3.0 * h, h) + oc.gemm(rows, h, h) +
                             oc.gemm(rows, 4.0 * h, h) + oc.gemm(rows, h, 4.0 * h);
            // One head of width h over the F feature tokens: F² scores per sample.
            const double attn = oc.flashAttention(4.0 * b * F * F * h, b * F * F);
            const double attnBwd = oc.flashAttention(2.5 * 4.0 * b * F * F * h, b * F * F);
            const double ew = oc.elementwise(12.0 * rows * h * pB);
            c.interFwd += g + attn + ew;
            if (passes.inter > 0) c.interBwd += passes.inter * g + attnBwd + 2.0 * ew;
        }
        break;
    }
    if (d.topExperts > 0) {
        const double in = d.interactionOutput();
        const double router = oc.gemm(b, double(d.topExperts), in);
        c.topFwd += router;
        c.topBwd += passes.top * router;
        mlp(in, d.topMlp, b * d.topK, d.topExperts, !frozen.topMlp, passes.topInputGrad,
            c.topFwd, c.topBwd);
    } else {
        mlp(d.interactionOutput(), d.topMlp, b, 1, !frozen.topMlp, passes.topInputGrad, c.topFwd,
            c.topBwd);
    }
    // Sigmoid + binary cross-entropy over the outputs.
    const double loss = oc.elementwise(4.0 * b * double(d.topMlp.empty() ? 1 : d.topMlp.back()) *
                                       pB);
    c.topFwd += loss;
    c.topBwd += loss;
    return c;
}

/// Kernels an eager step issues, counted from the code the DLRM examples run (README "The host
/// launch bound"): a PyTorch nn.Linear is a bias broadcast, a GEMM and its activation forward;
/// data- and weight-gradient GEMMs, the bias-gradient reduction, the activation's backward and
/// two gradient accumulations backward; an update and a gradient zeroing per weight and bias.
/// A per-table nn.Embedding(sparse=True) gathers (1), makes its gradient slice contiguous and
/// stores the sparse gradient's indices and values (3), and torch.optim.SGD's add_ of a sparse
/// gradient flattens the indices, scales by −lr and index_add_s (3), plus a gather, an update
/// and a scatter per optimizer state tensor. A fused table kernel (FBGEMM TBE, HugeCTR) is one
/// gather forward and a sort plus one fused backward-update for every table.
struct HostKernels {
    int inputs = 4;  ///< dense features, ids and labels to the GPU; ids widened
    int bottomFwd = 0, lookups = 0, interFwd = 0, topFwd = 0;
    int topBwd = 0, interBwd = 0, bottomBwd = 0, embBwd = 0, update = 0;
    int readBack = 1; ///< the loss read back: the host waits for the GPU every step
};

constexpr int kLinearFwd = 3, kLinearBwd = 6, kLinearUpdate = 4;

HostKernels hostKernels(const DlrmShape& d, const DlrmPlan& plan, const Workload& w,
                        const DenseCosts& dc, bool tablesTrain) {
    HostKernels k;
    const int lb = int(d.bottomMlp.size()), lt = int(d.topMlp.size());
    k.bottomFwd = kLinearFwd * lb;
    k.topFwd = kLinearFwd * lt + 2; // + sigmoid-BCE forward and the loss scaling
    int interLayers = 0, interFwdPer = 0, interBwdPer = 0;
    switch (d.interaction) {
    case DlrmInteraction::Dot: // concat, batched GEMM, triangle gather, padding, concat
        k.interFwd = 5;
        k.interBwd = 5;
        break;
    case DlrmInteraction::Dcnv2: // (low-rank) GEMM(s), x0 ⊙ ·, + bias, + x_l
        interLayers = d.dcnLayers;
        interFwdPer = d.dcnLowRank > 0 ? 5 : 4;
        interBwdPer = 2 * interFwdPer;
        break;
    case DlrmInteraction::Transformer: // QKV, attention, out, two norms, MLP up, act, down, adds
        interLayers = d.transformerLayers;
        interFwdPer = 12;
        interBwdPer = 24;
        break;
    }
    k.interFwd += interLayers * interFwdPer;
    // Per-table modules: their outputs are concatenated first (the dot count has its concat).
    if (plan.perTableKernels && d.interaction != DlrmInteraction::Dot) k.interFwd += 1;
    // Backward: only the parts whose pass runs (frozen parts skip theirs).
    k.topBwd = dc.topBwd > 0 ? kLinearBwd * lt + 1 : 0;
    k.interBwd = dc.interBwd > 0 ? k.interBwd + interLayers * interBwdPer : 0;
    k.bottomBwd = dc.bottomBwd > 0 ? kLinearBwd * lb - 1 : 0; // no gradient for the features
    const int states = w.embOptimizer == EmbOptimizer::Adam             ? 2
                       : w.embOptimizer == EmbOptimizer::RowwiseAdagrad ? 1
                                                                        : 0;
    const int tables = d.tableCount();
    k.lookups = plan.perTableKernels ? tables : 1;
    k.embBwd = !tablesTrain ? 0 : plan.perTableKernels ? tables * (3 + 3 + 3 * states) : 2;
    const Frozen& f = w.frozen;
    const int trainedLinears = (f.bottomMlp ? 0 : lb) + (f.topMlp ? 0 : lt) +
                               (f.topMlp || d.interaction == DlrmInteraction::Dot
                                    ? 0
                                    : interLayers * (d.interaction == DlrmInteraction::Dcnv2
                                                         ? (d.dcnLowRank > 0 ? 2 : 1)
                                                         : 6));
    k.update = kLinearUpdate * trainedLinears;
    return k;
}

/// The step under the host's launches: the host issues each segment's n kernels at hostOp
/// apiece, in program order, from the previous step's sync (the loss read back); the GPU runs
/// a kernel once it is issued and the one before it is done. For n equal kernels of g/n the
/// segment ends at max(previous end + g, issue start + hostOp + g, issue start + n·hostOp + g/n)
/// (the max-plus recurrence solved; every term only grows with g and hostOp). Returns the
/// step's end and, through `forwardEnd`, where the forward's last segment ends.
/// Segments of a step in program order: inputs, bottom MLP, lookups, interaction, top MLP and
/// loss (the forward's five), then top, interaction and bottom backward, the embedding
/// backward-update, the dense update and the loss read back.
constexpr int kSegments = 11, kForwardSegments = 5;

double hostBoundStep(const double (&g)[kSegments], const int (&n)[kSegments], double hostOp,
                     double& forwardEnd, double& forwardGpu) {
    double t = 0, issued = 0;
    forwardGpu = 0;
    forwardEnd = 0;
    for (int i = 0; i < kSegments; ++i) {
        if (n[i] > 0) {
            t = std::max({t + g[i], issued + hostOp + g[i], issued + n[i] * hostOp + g[i] / n[i]});
            issued += n[i] * hostOp;
        } else {
            t += g[i];
        }
        if (i < kForwardSegments) {
            forwardGpu += g[i];
            forwardEnd = t;
        }
    }
    return t;
}

/// GPUs of the innermost tier (a node's NVLink domain) inside a group of `group` GPUs.
int nodeRanks(const System& sys, int group) {
    const int node = sys.tiers.empty() ? sys.gpusPerNode : sys.tiers.front().gpus;
    return std::max(1, std::min(group, node));
}

} // namespace

namespace {
/// Forward FLOPs per sample of the bottom MLP, the interaction and the top MLP (with router).
struct DenseFlops {
    double bottom = 0, inter = 0, top = 0;
};
DenseFlops denseFlopsPerSample(const DlrmShape& d) {
    DenseFlops f;
    f.bottom = mlpSum(double(d.denseFeatures), d.bottomMlp, true);
    f.top = mlpSum(d.interactionOutput(), d.topMlp, true);
    if (d.topExperts > 0) f.top = d.topK * f.top + 2.0 * d.interactionOutput() * d.topExperts;
    f.inter = d.denseForwardFlopsPerSample() - f.bottom - f.top;
    return f;
}
} // namespace

double trainableDenseParams(const DlrmShape& d, const Frozen& f) {
    const double bottom = mlpSum(double(d.denseFeatures), d.bottomMlp, false);
    const double all = d.denseParams();
    return (f.bottomMlp ? 0.0 : bottom) + (f.topMlp ? 0.0 : all - bottom);
}

double denseTrainingFlopsPerSample(const DlrmShape& d, const Frozen& f) {
    const DenseFlops fl = denseFlopsPerSample(d);
    const DenseBackwardPasses p = denseBackwardPasses(d, f);
    return fl.bottom * (1.0 + p.bottom) + fl.inter * (1.0 + p.inter) + fl.top * (1.0 + p.top);
}

DlrmPlacement dlrmPlacement(const Scenario& s) {
    const DlrmShape& d = s.model.dlrm;
    const Workload& w = s.workload;
    const DlrmPlan& plan = s.strategy.dlrm;
    const System& sys = s.system;
    DlrmPlacement p;
    const int N = s.gpus;
    const int G = plan.groupSize > 0 ? plan.groupSize : N;
    const int R = N / G;
    p.group = G;
    p.replicas = R;
    const double B = w.globalBatch, Bg = B / R, b = B / N;
    const double hbm = sys.gpu.hbmBytesPerS * sys.gpu.calibration.memoryEfficiency;
    const GroupLayout group = layoutGroup(sys, G, 1);
    // Seconds per byte of an all-to-all send buffer on this group, for placement costs only.
    const double a2aPerByte = G > 1 ? collectiveTime(sys, group, Collective::AllToAll, 1e9) / 1e9
                                    : 0.0;
    const int nl = nodeRanks(sys, G);
    const int nodes = G / nl;
    const GroupLayout node = layoutGroup(sys, nl, 1);
    const GroupLayout acrossNodes = layoutGroup(sys, nodes, nl);
    const GroupLayout all = layoutGroup(sys, N, 1);
    const GroupLayout replicas = layoutGroup(sys, R, G);

    std::vector<Shard>& tw = tShards;
    tw.clear();
    thread_local std::vector<Shard> twrwShards;
    twrwShards.clear();
    for (std::size_t t = 0; t < d.tables.size(); ++t) {
        const EmbeddingTableGroup& tab = d.tables[t];
        const double e = tab.bytesPerElement, dim = tab.dim, rows = double(tab.rows);
        const double lookups = Bg * tab.pooling; // per table, this group's batch
        const double optRow = optimizerBytesPerRow(w.embOptimizer, dim);
        // One embedding module per table: its gradient passes, besides the fused update's.
        auto eager = [&](double sd) {
            return plan.perTableKernels ? eagerGradientBytesPerLookup(w.embOptimizer, sd, e)
                                        : 0.0;
        };
        const double eagerPerLookup = eager(dim);
        const double bwdPerLookup = 2.0 * rowBytes(dim, e) +
                                    optimizerBytesPerLookup(w.embOptimizer, dim) + kSortBytes +
                                    eagerPerLookup;
        const EmbSharding type = G == 1 && plan.sharding[t] != EmbSharding::DataParallel
                                     ? EmbSharding::TableWise
                                     : plan.sharding[t];
        switch (type) {
        case EmbSharding::TableWise:
        case EmbSharding::ColumnWise: {
            const int k = type == EmbSharding::ColumnWise ? columnShards(tab.dim, G) : 1;
            const double sd = dim / k;
            Shard sh;
            sh.lookupB = lookups * rowBytes(sd, e);
            sh.eagerB = lookups * eager(sd);
            sh.bwdB = lookups * (2.0 * rowBytes(sd, e) +
                                 optimizerBytesPerLookup(w.embOptimizer, sd) + kSortBytes) +
                      Bg * sd * e + sh.eagerB;
            sh.sendB = Bg * sd * e;
            sh.optB = rows * (type == EmbSharding::ColumnWise && w.embOptimizer ==
                                                                     EmbOptimizer::RowwiseAdagrad
                                  ? optRow
                                  : optimizerBytesPerRow(w.embOptimizer, sd));
            sh.memB = rows * sd * e + sh.optB;
            // Rows read, the pooled output written, the backward; the output sent and back.
            sh.costS = (sh.lookupB + sh.sendB + sh.bwdB) / hbm + 2.0 * sh.sendB * a2aPerByte;
            for (int i = 0; i < tab.count * k; ++i)
                tw.push_back(sh);
            p.a2aRecvB += double(tab.count) * b * dim * e;
            break;
        }
        case EmbSharding::RowWise: {
            p.uniform.lookupB += tab.count * lookups * rowBytes(dim, e) / G;
            p.uniform.bwdB += tab.count * (lookups * bwdPerLookup + Bg * dim * e) / G;
            p.uniform.eagerB += tab.count * lookups * eagerPerLookup / G;
            p.uniform.optB += tab.count * rows * optRow / G;
            p.uniform.memB += tab.count * rows * (dim * e + optRow) / G;
            p.rwPooledB += tab.count * Bg * dim * e; // reduce-scatter buffer (partial sums)
            p.idsB += tab.count * b * tab.pooling * kIdBytes;
            break;
        }
        case EmbSharding::TableRowWise: {
            Shard sh; // one table on one node, its rows split over the node's ranks
            sh.lookupB = lookups * rowBytes(dim, e) / nl;
            sh.bwdB = (lookups * bwdPerLookup + Bg * dim * e) / nl;
            sh.eagerB = lookups * eagerPerLookup / nl;
            sh.sendB = Bg * dim * e; // the node's reduce-scatter buffer for this table
            sh.optB = rows * optRow / nl;
            sh.memB = rows * dim * e / nl + sh.optB;
            sh.costS = (sh.lookupB + sh.sendB + sh.bwdB) / hbm; // + its partial sums written
            for (int i = 0; i < tab.count; ++i)
                twrwShards.push_back(sh);
            p.idsB += tab.count * b * tab.pooling * kIdBytes;
            break;
        }
        case EmbSharding::DataParallel: {
            p.uniform.lookupB += tab.count * b * tab.pooling * rowBytes(dim, e);
            p.uniform.bwdB += tab.count * (b * tab.pooling * bwdPerLookup + b * dim * e);
            p.uniform.eagerB += tab.count * b * tab.pooling * eagerPerLookup;
            p.uniform.optB += tab.count * rows * optRow;
            p.uniform.memB += tab.count * rows * (dim * e + optRow);
            p.dpTableGradB += tab.count * rows * dim * 4.0; // dense fp32 gradients
            p.dpPooledB += tab.count * b * dim * e;
            break;
        }
        }
        // 2-D: the rows this group touched, synchronised with the other replicas' (DP tables
        // are already replicated everywhere and reduced over all GPUs).
        if (R > 1 && type != EmbSharding::DataParallel)
            p.replicaSyncB += tab.count * std::min(lookups, rows) * dim * 4.0 / G;
    }

    std::vector<RankLoad>& loads = tLoads;
    // Tables must fit beside what else the GPU holds: budget the HBM less the reserve.
    const double budget = std::max(0.0, sys.gpu.hbmBytes - sys.reserveBytes);
    placeShards(tw, loads, G, budget);
    // The critical rank: the most loaded by its placement cost.
    int crit = 0;
    double memMax = 0, memSum = 0;
    for (int r = 0; r < G; ++r) {
        if (loads[r].costS > loads[crit].costS) crit = r;
        memMax = std::max(memMax, loads[r].memB);
        memSum += loads[r].memB;
    }
    p.critical = loads.empty() ? RankLoad{} : loads[crit];
    double lookupSum = 0;
    for (const auto& l : loads)
        lookupSum += l.lookupB;
    p.meanLookupB = G > 0 ? lookupSum / G : 0;
    p.twMemMaxB = memMax;
    p.twMemMeanB = G > 0 ? memSum / G : 0;
    // TWRW: tables placed on nodes; the critical node's ranks carry its share.
    thread_local std::vector<RankLoad> nodeLoads;
    placeShards(twrwShards, nodeLoads, nodes, budget); // shard bytes are per GPU of the node
    int critNode = 0;
    double nodeMem = 0;
    for (int n = 0; n < nodes; ++n) {
        if (nodeLoads[n].costS > nodeLoads[critNode].costS) critNode = n;
        nodeMem = std::max(nodeMem, nodeLoads[n].memB);
    }
    p.twrwNode = nodes > 0 && !twrwShards.empty() ? nodeLoads[critNode] : RankLoad{};
    p.twrwMemMaxB = twrwShards.empty() ? 0.0 : nodeMem;

    // Collective times (per step: forward and backward).
    const double a2aBuf = std::max(p.critical.sendB, p.a2aRecvB);
    p.a2aS = G > 1 && a2aBuf > 0 ? collectiveTime(sys, group, Collective::AllToAll, a2aBuf) : 0.0;
    p.rwS = G > 1 && p.rwPooledB > 0
                ? collectiveTime(sys, group, Collective::ReduceScatter, p.rwPooledB)
                : 0.0;
    p.idsS = G > 1 && p.idsB > 0 ? collectiveTime(sys, group, Collective::AllToAll, p.idsB) : 0.0;
    if (!twrwShards.empty()) {
        // Reduce-scatter of each table's partial sums over the node (NVLink), then the pooled
        // outputs all-to-all across nodes: a rank sends its 1/nl of its node's tables.
        const double nodePooled = p.twrwNode.sendB;
        p.twrwNodeS = nl > 1 ? collectiveTime(sys, node, Collective::ReduceScatter, nodePooled)
                             : 0.0;
        p.twrwA2aS = nodes > 1 ? collectiveTime(sys, acrossNodes, Collective::AllToAll,
                                                nodePooled / nl)
                               : 0.0;
    }
    p.replicaSyncS = R > 1 && p.replicaSyncB > 0
                         ? collectiveTime(sys, replicas, Collective::AllReduce, p.replicaSyncB)
                         : 0.0;
    p.dpTableSyncS = N > 1 && p.dpTableGradB > 0
                         ? collectiveTime(sys, all, Collective::AllReduce, p.dpTableGradB)
                         : 0.0;
    return p;
}

Result evaluateDlrm(const Scenario& s, const EvaluateOptions& options) {
    const DlrmShape& d = s.model.dlrm;
    const Workload& w = s.workload;
    const Gpu& gpu = s.system.gpu;
    Result r;
    const int N = s.gpus;
    const double B = w.globalBatch, b = B / N;
    const double pB = bytesPerElement(w.precision);
    const OpCoster oc = trainingOpCoster(gpu, w);
    const DlrmPlacement p = dlrmPlacement(s);
    const Frozen& frozen = w.frozen;
    DenseCosts dc = denseCosts(d, b, oc, pB, frozen);
    const double launch = gpu.calibration.kernelLaunchS;
    // Mixed precision: the pooled embeddings, stored and exchanged in the tables' precision,
    // are converted to the dense precision before the interaction (TF2's tf.cast, AMP's input
    // casts), and their gradients back: each element read in one precision and written in the
    // other, forward and (for trained tables) backward.
    double castB = 0;
    for (const auto& t : d.tables)
        if (t.bytesPerElement != pB) castB += double(t.count) * b * t.dim * (t.bytesPerElement + pB);
    if (castB > 0) {
        dc.interFwd += oc.elementwise(castB);
        if (!frozen.embedding) dc.interBwd += oc.elementwise(castB);
    }
    // One embedding module per table: the bottom output and each table's pooled lookup are
    // separate tensors, which torch.cat copies into the interaction's input (each read in its
    // own precision, all written in the widest); a fused table kernel writes its pooled output
    // there itself. The concatenation's backward hands out views and copies nothing.
    double eagerCatS = 0;
    if (s.strategy.dlrm.perTableKernels) {
        double readB = b * bottomOut(d) * pB, widest = pB;
        for (const auto& t : d.tables) {
            readB += double(t.count) * b * t.dim * t.bytesPerElement;
            widest = std::max(widest, t.bytesPerElement);
        }
        eagerCatS = oc.elementwise(readB + b * concatWidth(d) * widest);
        dc.interFwd += eagerCatS;
    }

    // Sparse work of the critical rank: its table-wise shards, plus the evenly spread types.
    const double lookupB = p.critical.lookupB + p.uniform.lookupB + p.twrwNode.lookupB;
    const double bwdB = p.critical.bwdB + p.uniform.bwdB + p.twrwNode.bwdB;
    // A lookup also writes what it pools, one dim-wide vector per sample and table: the TW/CW
    // shards' all-to-all send buffer, the RW and TWRW partial sums for the group's (node's)
    // whole batch, the DP tables' outputs for the local batch. (At pooling 1 as many bytes as
    // the rows read; under multi-hot pooling a small share.)
    const double pooledOutB = p.critical.sendB + p.rwPooledB + p.twrwNode.sendB + p.dpPooledB;
    const double lookupFwd = oc.memoryTime(lookupB + pooledOutB) + launch;
    // Frozen tables: no gradients travel back, none are applied or synchronised.
    const bool tablesTrain = !frozen.embedding;
    const double embBwd = tablesTrain ? oc.memoryTime(bwdB) + 2.0 * launch : 0.0; // sort + update
    const double sparseFwdComm = p.a2aS + p.rwS + p.idsS + p.twrwNodeS + p.twrwA2aS;
    const double sparseBwdComm =
        tablesTrain ? p.a2aS + p.rwS + p.twrwNodeS + p.twrwA2aS : 0.0; // grads back

    const double denseFwd = dc.bottomFwd + dc.interFwd + dc.topFwd;
    const double denseBwd = dc.bottomBwd + dc.interBwd + dc.topBwd;
    // Dense gradients: all-reduced over every GPU (bucketed DDP), from when the top MLP's
    // gradients are ready.
    const double gradB = std::max(pB, bytesPerElement(w.gradReducePrecision));
    const double denseParams = trainableDenseParams(d, frozen);
    const GroupLayout all = layoutGroup(s.system, N, 1);
    const double denseAr =
        N > 1 ? collectiveTime(s.system, all, Collective::AllReduce, denseParams * gradB) : 0.0;

    // Two streams, one network: the compute stream runs lookups, the dense forward and
    // backward and the embedding update; the communication stream carries the sparse
    // collectives and the dense all-reduce one after another, each from when its data is ready.
    const double computeEnd = lookupFwd + denseFwd + denseBwd + embBwd;
    double sparseExposed, commEnd, arStart; // the all-reduce starts at arStart
    if (s.strategy.dlrm.pipelineSparse) {
        // The next batch's sparse communication (and this batch's gradients) run under the
        // dense work; the all-reduce follows them once the top MLP's gradients exist.
        const double sparseEnd = sparseFwdComm + sparseBwdComm;
        sparseExposed = std::max(0.0, sparseEnd - computeEnd);
        const double topReady = lookupFwd + denseFwd + dc.topBwd;
        arStart = s.strategy.dpOverlap ? std::max(sparseEnd, topReady)
                                       : std::max(sparseEnd, computeEnd);
        commEnd = std::max(sparseEnd, denseAr > 0 ? arStart + denseAr : 0.0);
    } else {
        // Forward: the pooled outputs travel while the bottom MLP runs; backward: the
        // embedding gradients travel while the bottom MLP's backward runs, and the update
        // waits for them.
        const double fwdWait = std::max(0.0, sparseFwdComm - dc.bottomFwd);
        const double bwdWait = std::max(0.0, sparseBwdComm - dc.bottomBwd);
        sparseExposed = fwdWait + bwdWait;
        const double u = lookupFwd + fwdWait + denseFwd + dc.topBwd + dc.interBwd;
        const double end = computeEnd + sparseExposed;
        // The all-reduce uses the network before the embedding gradients (from the top MLP's
        // gradients, under the interaction's backward) and after them.
        arStart = s.strategy.dpOverlap ? u - dc.interBwd : end;
        const double before = std::max(0.0, u - arStart);
        commEnd = denseAr <= before ? arStart + denseAr
                                    : std::max(arStart, u + sparseBwdComm) + denseAr - before;
    }
    const double bodyEnd = computeEnd + sparseExposed;
    const double denseArExposed = std::max(0.0, commEnd - bodyEnd);
    const double syncExposed = tablesTrain ? p.replicaSyncS + p.dpTableSyncS : 0.0;
    const double perParam = w.optimizer == Optimizer::Adam ? 24.0 + gradB + pB : 8.0 + gradB;
    const double denseOpt = oc.elementwise(denseParams * perParam);

    r.compute.forwardS = lookupFwd + denseFwd;
    r.compute.backwardS = denseBwd + embBwd;
    r.compute.optimizerS = denseOpt;
    r.exposedCommS = sparseExposed + denseArExposed + syncExposed;
    // Eager launches: the step is at least the host-bound walk of its compute (the two-stream
    // schedule above is the other bound; the larger wins, so neither a faster GPU nor a faster
    // host lengthens it). The excess is host idle, inside the forward and backward.
    const double hostOp = s.strategy.cudaGraphs ? 0.0 : gpu.calibration.hostOpS;
    if (hostOp > 0) {
        const HostKernels k = hostKernels(d, s.strategy.dlrm, w, dc, tablesTrain);
        const double g[kSegments] = {0.0,        dc.bottomFwd, lookupFwd, dc.interFwd,
                              dc.topFwd,  dc.topBwd,    dc.interBwd, dc.bottomBwd,
                              embBwd,     denseOpt,     0.0};
        const int n[kSegments] = {k.inputs, k.bottomFwd, k.lookups,   k.interFwd, k.topFwd,  k.topBwd,
                           k.interBwd, k.bottomBwd, k.embBwd, k.update,   k.readBack};
        double fwdEnd = 0, fwdGpu = 0;
        const double walk = hostBoundStep(g, n, hostOp, fwdEnd, fwdGpu);
        const double schedule = r.compute.totalS() + r.exposedCommS;
        const double stall = std::max(0.0, walk - schedule);
        const double stallFwd = std::min(stall, std::max(0.0, fwdEnd - fwdGpu));
        r.compute.forwardS += stallFwd;
        r.compute.backwardS += stall - stallFwd;
        r.compute.hostStallS = stall;
        r.compute.hostStallForwardS = stallFwd;
    }
    r.computeS = r.compute.totalS();
    r.stepTimeS = r.computeS + r.exposedCommS + w.stepOverheadS;
    r.samplesPerS = B / r.stepTimeS;
    r.microBatches = 1;
    r.forwardPerMicroBatchS = r.compute.forwardS;
    r.backwardPerMicroBatchS = r.compute.backwardS;

    // Communication by collective (EP: the embedding model-parallel group).
    const double sparseSerialized = sparseFwdComm + sparseBwdComm;
    auto put = [&](ParallelDim dim, Collective c, double ser, double exposed) {
        r.comm[int(dim)][int(c)].serializedS += ser;
        r.comm[int(dim)][int(c)].exposedS += exposed;
    };
    const double share = sparseSerialized > 0 ? sparseExposed / sparseSerialized : 0.0;
    const double directions = tablesTrain ? 2.0 : 1.0; // forward, and gradients back
    const double a2a = directions * (p.a2aS + p.twrwA2aS) + p.idsS;
    put(ParallelDim::EP, Collective::AllToAll, a2a, share * a2a);
    put(ParallelDim::EP, Collective::ReduceScatter, p.rwS + p.twrwNodeS,
        share * (p.rwS + p.twrwNodeS));
    if (tablesTrain)
        put(ParallelDim::EP, Collective::AllGather, p.rwS + p.twrwNodeS,
            share * (p.rwS + p.twrwNodeS));
    put(ParallelDim::DP, Collective::AllReduce, denseAr + syncExposed,
        denseArExposed + syncExposed);

    r.modelFlopsPerStep = B * denseTrainingFlopsPerSample(d, frozen);
    r.hardwareFlopsPerStep = r.modelFlopsPerStep;
    r.modelTflopsPerGpu = r.modelFlopsPerStep / r.stepTimeS / N / 1e12;
    r.hardwareTflopsPerGpu = r.modelTflopsPerGpu;
    const double peak = gpu.peak(w.precision);
    r.mfu = peak > 0 ? r.modelTflopsPerGpu * 1e12 / peak : 0.0;
    r.hfu = r.mfu;
    r.memory = dlrmMemory(s, p);

    DlrmResult& x = r.dlrmResult;
    x.active = true;
    x.groupSize = p.group;
    x.replicas = p.replicas;
    x.lookupBytesCritical = lookupB;
    x.lookupBytesMean = p.meanLookupB + p.uniform.lookupB + p.twrwNode.lookupB;
    x.lookupFwdS = lookupFwd;
    x.embBackwardS = embBwd;
    // What eager per-table modules add, inside the two lines above: the concatenation and the
    // gradient passes of the critical rank's tables.
    x.eagerCopiesS = eagerCatS + (tablesTrain ? oc.memoryTime(p.critical.eagerB + p.uniform.eagerB +
                                                              p.twrwNode.eagerB)
                                              : 0.0);
    x.a2aFwdS = p.a2aS + p.twrwA2aS;
    x.a2aBwdS = tablesTrain ? p.a2aS + p.twrwA2aS : 0.0;
    x.rowwiseCommS = directions * (p.rwS + p.twrwNodeS);
    x.idsA2aS = p.idsS;
    x.replicaSyncS = tablesTrain ? p.replicaSyncS : 0.0;
    x.dpTableSyncS = tablesTrain ? p.dpTableSyncS : 0.0;
    x.sparseExposedS = sparseExposed;
    x.denseForwardS = dc.bottomFwd + dc.topFwd;
    x.denseBackwardS = dc.bottomBwd + dc.topBwd;
    x.interactionS = dc.interFwd + dc.interBwd;
    x.denseAllReduceS = denseAr;
    x.denseAllReduceExposedS = denseArExposed;
    // The fullest GPU, which need not be the most loaded one (a small hot table can make a rank
    // critical while a big cold one fills another).
    x.tableBytesCritical = std::max(p.critical.memB, p.twMemMaxB) + p.uniform.memB + p.twrwMemMaxB;
    x.tableBytesMean = p.twMemMeanB + p.uniform.memB + p.twrwMemMaxB;
    x.tableWeightsBytes =
        r.memory.weightsBytes - d.denseParams() * bytesPerElement(w.precision);
    x.imbalance = x.lookupBytesMean > 0 ? x.lookupBytesCritical / x.lookupBytesMean : 1.0;
    x.a2aBytesPerGpu = p.group > 1 ? p.critical.sendB : 0.0; // one GPU sends nothing

    if (options.timeline) {
        const double allReduceEnd = commEnd; // the schedule's: the all-reduce finishes then
        double t = 0;
        auto op = [&](const char* label, double dur, TimelineKind kind) {
            r.timeline.push_back({label, Lane::Compute, kind, t, t + dur, false, ParallelDim::DP,
                                  Collective::AllReduce});
            t += dur;
        };
        auto comm = [&](const char* label, double start, double dur, ParallelDim dim,
                        Collective c) {
            if (dur > 0)
                r.timeline.push_back(
                    {label, Lane::Comm, TimelineKind::Comm, start, start + dur, true, dim, c});
        };
        // The schedule evaluate() computed, op by op (one step).
        const bool pipelined = s.strategy.dlrm.pipelineSparse;
        op("embedding lookups", lookupFwd, TimelineKind::Embedding);
        if (pipelined)
            comm("sparse all-to-alls (next batch's embeddings, this batch's gradients)", 0.0,
                 sparseFwdComm + sparseBwdComm, ParallelDim::EP, Collective::AllToAll);
        else
            comm("pooled embeddings all-to-all", t, sparseFwdComm, ParallelDim::EP,
                 Collective::AllToAll);
        const double commEnd = t + sparseFwdComm;
        op("bottom MLP", dc.bottomFwd, TimelineKind::Forward);
        if (!pipelined && commEnd > t) op("wait for embeddings", commEnd - t, TimelineKind::Wait);
        op("interaction", dc.interFwd, TimelineKind::Forward);
        op("top MLP", dc.topFwd, TimelineKind::Forward);
        op("top MLP (bwd)", dc.topBwd, TimelineKind::Backward);
        op("interaction (bwd)", dc.interBwd, TimelineKind::Backward);
        if (!pipelined)
            comm("embedding gradients all-to-all", t, sparseBwdComm, ParallelDim::EP,
                 Collective::AllToAll);
        const double bwdCommEnd = t + sparseBwdComm;
        op("bottom MLP (bwd)", dc.bottomBwd, TimelineKind::Backward);
        if (!pipelined && bwdCommEnd > t)
            op("wait for embedding gradients", bwdCommEnd - t, TimelineKind::Wait);
        op("embedding backward + update", embBwd, TimelineKind::Embedding);
        if (r.compute.hostStallS > 0)
            op("host launch stalls (GPU idle)", r.compute.hostStallS, TimelineKind::HostIdle);
        if (pipelined && sparseExposed > 0)
            op("wait for the sparse all-to-alls", sparseExposed, TimelineKind::Wait);
        if (denseAr > 0)
            r.timeline.push_back({"dense gradient all-reduce (shares the network)",
                                  Lane::DataParallelComm, TimelineKind::Comm, arStart,
                                  allReduceEnd, true, ParallelDim::DP, Collective::AllReduce});
        if (denseArExposed > 0)
            op("wait for dense gradients", denseArExposed, TimelineKind::Wait);
        if (syncExposed > 0) op("embedding gradient sync", syncExposed, TimelineKind::Wait);
        op("dense optimizer", denseOpt, TimelineKind::Optimizer);
        if (w.stepOverheadS > 0) op("framework overhead", w.stepOverheadS, TimelineKind::Bubble);
    }
    return r;
}

MemoryBreakdown dlrmMemory(const Scenario& s, const DlrmPlacement& p) {
    const DlrmShape& d = s.model.dlrm;
    const Workload& w = s.workload;
    MemoryBreakdown m;
    const double pB = bytesPerElement(w.precision);
    const double dense = d.denseParams();
    const double trained = trainableDenseParams(d, w.frozen); // gradients and optimizer state
    const double b = double(w.globalBatch) / s.gpus;
    const double tables = std::max(p.critical.memB, p.twMemMaxB) + p.uniform.memB + p.twrwMemMaxB;
    const double tableOpt = p.critical.optB + p.uniform.optB + p.twrwNode.optB;
    m.weightsBytes = dense * pB + (tables - tableOpt);
    m.gradsBytes = trained * std::max(pB, bytesPerElement(w.gradReducePrecision));
    m.optimizerBytes = (w.optimizer == Optimizer::Adam ? (pB < 4 ? 12.0 : 8.0) : 0.0) * trained +
                       (w.frozen.embedding ? 0.0 : tableOpt); // frozen tables keep no state
    // Activations of the local batch: every MLP layer's output twice (pre- and post-ReLU),
    // the pooled features and the interaction output; plus the lookup outputs of the shards
    // this GPU serves (the whole group's batch) and the all-to-all buffers.
    double widths = 0;
    for (auto v : d.bottomMlp)
        widths += double(v);
    for (auto v : d.topMlp)
        widths += double(v) * (d.topExperts > 0 ? d.topK : 1);
    const double F = d.featureCount();
    double inter = d.interactionOutput();
    if (d.interaction == DlrmInteraction::Dot) inter += F * F;
    if (d.interaction == DlrmInteraction::Dcnv2) inter *= 2.0 * std::max(1, d.dcnLayers);
    if (d.interaction == DlrmInteraction::Transformer)
        inter *= 16.0 * std::max(1, d.transformerLayers);
    m.activationsBytes = b * (2.0 * widths + inter) * pB +
                         2.0 * (p.critical.sendB + p.a2aRecvB) + p.rwPooledB + p.twrwNode.sendB;
    m.reserveBytes = s.system.reserveBytes;
    m.capacityBytes = s.system.gpu.hbmBytes;
    return m;
}

MemoryBreakdown dlrmMemory(const Scenario& s) { return dlrmMemory(s, dlrmPlacement(s)); }

std::optional<std::string> explainInvalidDlrm(const Scenario& s) {
    auto str = [](long long v) { return std::to_string(v); };
    const DlrmShape& d = s.model.dlrm;
    const Strategy& st = s.strategy;
    const Workload& w = s.workload;
    if (w.kind == WorkloadKind::Inference)
        return "DLRM serving is not modelled by the native engine: set workload.kind to "
               "\"training\", or evaluate the seed's DLRM inference files with --engine "
               "reference";
    if (d.tables.empty()) return "model.dlrm.tables must list at least one table group";
    if (int(d.tables.size()) > kMaxTableGroups)
        return "model.dlrm.tables has " + str(long(d.tables.size())) +
               " groups; at most " + str(kMaxTableGroups) +
               " (list identical tables as one group with a count)";
    if (d.topMlp.empty()) return "model.dlrm.top_mlp must have at least one layer";
    if (s.gpus < 1) return "gpus must be at least 1";
    if (s.gpus > s.system.maxGpus())
        return "gpus (" + str(s.gpus) + ") exceeds the " + str((long long)s.system.maxGpus()) +
               " GPUs of the system's outermost tier";
    for (auto [name, v] : {std::pair{"tp", st.tp}, {"pp", st.pp}, {"cp", st.cp},
                           {"vp", st.vp}, {"ep", st.ep}, {"etp", st.etp}})
        if (v != 1)
            return "strategy." + std::string(name) + " = " + str(v) +
                   ": a DLRM's dense part is data-parallel over every GPU and its tables follow "
                   "strategy.emb_sharding; set " + name + " to 1";
    if (st.dp != s.gpus)
        return "strategy.dp (" + str(st.dp) + ") must equal the GPU count (" + str(s.gpus) +
               "): a DLRM's dense part is data-parallel over every GPU";
    if (st.zeroStage != 0 && st.zeroStage != 1)
        return "strategy.zero_stage " + str(st.zeroStage) +
               " is not modelled for DLRM (its dense part is small): use 0";
    if (st.dlrm.listed > 0 && st.dlrm.listed != int(d.tables.size()))
        return "strategy.emb_sharding lists " + str(st.dlrm.listed) + " types for " +
               str(long(d.tables.size())) +
               " table groups: give one per group, or a single type for all";
    const int G = st.dlrm.groupSize > 0 ? st.dlrm.groupSize : s.gpus;
    if (G > s.gpus || s.gpus % G != 0)
        return "strategy.emb_group_size (" + str(G) + ") must divide the " + str(s.gpus) +
               " GPUs (2-D sparse parallelism replicates the group's shards across the rest)";
    if (w.globalBatch < 1 || w.globalBatch % s.gpus != 0)
        return "workload.global_batch (" + str(w.globalBatch) + ") must be a multiple of the " +
               str(s.gpus) + " GPUs (each GPU trains an equal share of the samples)";
    const std::int64_t h = d.bottomMlp.empty() ? d.denseFeatures : d.bottomMlp.back();
    if (d.interaction != DlrmInteraction::Dcnv2)
        for (std::size_t t = 0; t < d.tables.size(); ++t)
            if (d.tables[t].dim != h)
                return "model.dlrm.tables[" + str(long(t)) + "].dim (" + str(d.tables[t].dim) +
                       ") differs from the bottom MLP's output (" + str(h) + "): the " +
                       std::string(toString(d.interaction)) +
                       " interaction needs equal widths; make them equal or use \"dcnv2\"";
    if (d.interaction == DlrmInteraction::Transformer &&
        (d.transformerHeads < 1 || d.transformerLayers < 1 || h % d.transformerHeads != 0))
        return "model.dlrm: a transformer interaction needs transformer_layers ≥ 1 and "
               "transformer_heads ≥ 1 dividing the feature width " + str(h);
    const int node = s.system.tiers.empty() ? s.system.gpusPerNode : s.system.tiers.front().gpus;
    for (std::size_t t = 0; t < d.tables.size(); ++t) {
        const EmbSharding k = st.dlrm.sharding[t];
        if (k == EmbSharding::TableRowWise && G > node && G % node != 0)
            return "strategy.emb_sharding[" + str(long(t)) + "] = \"twrw\" needs the group (" +
                   str(G) + " GPUs) to be whole nodes of " + str(node) +
                   "; choose emb_group_size a multiple of " + str(node) + " or another type";
        if (k == EmbSharding::RowWise && d.tables[t].rows < G)
            return "strategy.emb_sharding[" + str(long(t)) + "] = \"rw\" splits " +
                   str(d.tables[t].rows) + " rows over " + str(G) +
                   " GPUs, fewer than one each; use \"tw\" or \"dp\" for this table";
    }
    return std::nullopt;
}

} // namespace detail

} // namespace madmax
