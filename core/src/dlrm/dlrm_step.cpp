// One DLRM training step: the data-parallel dense part (bottom MLP, interaction, top MLP), the
// host's launches, and the schedule that overlaps the sparse communication with the bottom MLP
// (or, pipelined, with the whole dense step).
#include "dlrm/dlrm_engine.hpp"

#include "engine/op_cost.hpp"
#include "madmax/collectives.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace madmax {

namespace detail {

namespace {

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

bool interactionHasWeights(const DlrmShape& d) {
    return d.interaction != DlrmInteraction::Dot;
}

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
            const double g = groups > 1 ? oc.groupedGemm(rows, double(w), in, groups, true)
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
        c.interFwd =
            std::max(
                flops / (oc.peak * oc.gpu.calibration.gemmEfficiency(flops / b * oc.efficiencyKey)),
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
        mlp(in, d.topMlp, b * d.topK, d.topExperts, !frozen.topMlp, passes.topInputGrad, c.topFwd,
            c.topBwd);
    } else {
        mlp(d.interactionOutput(), d.topMlp, b, 1, !frozen.topMlp, passes.topInputGrad, c.topFwd,
            c.topBwd);
    }
    // Sigmoid + binary cross-entropy over the outputs.
    const double loss =
        oc.elementwise(4.0 * b * double(d.topMlp.empty() ? 1 : d.topMlp.back()) * pB);
    c.topFwd += loss;
    c.topBwd += loss;
    return c;
}

/// Kernels an eager step issues, counted from the code the DLRM examples run 
/// (docs/reference/scenario.md, "The host launch bound"): a PyTorch nn.Linear is a bias broadcast, a GEMM and its activation forward;
/// data- and weight-gradient GEMMs, the bias-gradient reduction, the activation's backward and
/// two gradient accumulations backward; an update and a gradient zeroing per weight and bias.
/// A per-table nn.Embedding(sparse=True) gathers (1), makes its gradient slice contiguous and
/// stores the sparse gradient's indices and values (3), and torch.optim.SGD's add_ of a sparse
/// gradient flattens the indices, scales by −lr and index_add_s (3), plus a gather, an update
/// and a scatter per optimizer state tensor. A fused table kernel (FBGEMM TBE, HugeCTR) is one
/// gather forward and a sort plus one fused backward-update for every table.
struct HostKernels {
    int inputs = 4; ///< dense features, ids and labels to the GPU; ids widened
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
    const int trainedLinears =
        (f.bottomMlp ? 0 : lb) + (f.topMlp ? 0 : lt) +
        (f.topMlp || d.interaction == DlrmInteraction::Dot
             ? 0
             : interLayers *
                   (d.interaction == DlrmInteraction::Dcnv2 ? (d.dcnLowRank > 0 ? 2 : 1) : 6));
    k.update = kLinearUpdate * trainedLinears;
    return k;
}

} // namespace

double hostBoundStep(const double (&g)[kDlrmSegments], const int (&n)[kDlrmSegments],
                     double hostOp, double& forwardEnd, double& forwardGpu) {
    double t = 0, issued = 0;
    forwardGpu = 0;
    forwardEnd = 0;
    for (int i = 0; i < kDlrmSegments; ++i) {
        if (n[i] > 0) {
            t = std::max({t + g[i], issued + hostOp + g[i], issued + n[i] * hostOp + g[i] / n[i]});
            issued += n[i] * hostOp;
        } else {
            t += g[i];
        }
        if (i < kDlrmForwardSegments) {
            forwardGpu += g[i];
            forwardEnd = t;
        }
    }
    return t;
}

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

namespace {

/// What one step costs before any schedule: the dense parts, the critical rank's sparse work and
/// the collectives, each computed once and read by the schedule, the result and the timeline.
struct DlrmStepParts {
    DenseCosts dc;
    double eagerCatS = 0;             ///< eager per-table modules' concatenation (in interFwd)
    double lookupB = 0, bwdB = 0;     ///< the critical rank's lookup and backward bytes
    double lookupFwd = 0, embBwd = 0; ///< their times
    double sparseFwdComm = 0, sparseBwdComm = 0;
    double gradB = 0, denseParams = 0, denseAr = 0, denseOpt = 0;
    bool tablesTrain = true;
    double denseFwd() const { return dc.bottomFwd + dc.interFwd + dc.topFwd; }
    double denseBwd() const { return dc.bottomBwd + dc.interBwd + dc.topBwd; }
    double computeEnd() const { return lookupFwd + denseFwd() + denseBwd() + embBwd; }
};

/// The dense parts with the copies mixed precision and eager per-table modules add.
void addDenseCopies(const Scenario& s, const OpCoster& oc, double b, double pB,
                    DlrmStepParts& x) {
    const DlrmShape& d = s.model.dlrm;
    // Mixed precision: the pooled embeddings, stored and exchanged in the tables' precision,
    // are converted to the dense precision before the interaction (TF2's tf.cast, AMP's input
    // casts), and their gradients back: each element read in one precision and written in the
    // other, forward and (for trained tables) backward.
    double castB = 0;
    for (const auto& t : d.tables)
        if (t.bytesPerElement != pB)
            castB += double(t.count) * b * t.dim * (t.bytesPerElement + pB);
    if (castB > 0) {
        x.dc.interFwd += oc.elementwise(castB);
        if (!s.workload.frozen.embedding) x.dc.interBwd += oc.elementwise(castB);
    }
    // One embedding module per table: the bottom output and each table's pooled lookup are
    // separate tensors, which torch.cat copies into the interaction's input (each read in its
    // own precision, all written in the widest); a fused table kernel writes its pooled output
    // there itself. The concatenation's backward hands out views and copies nothing.
    if (s.strategy.dlrm.perTableKernels) {
        double readB = b * bottomOut(d) * pB, widest = pB;
        for (const auto& t : d.tables) {
            readB += double(t.count) * b * t.dim * t.bytesPerElement;
            widest = std::max(widest, t.bytesPerElement);
        }
        x.eagerCatS = oc.elementwise(readB + b * concatWidth(d) * widest);
        x.dc.interFwd += x.eagerCatS;
    }
}

DlrmStepParts dlrmStepParts(const Scenario& s, const OpCoster& oc, const DlrmPlacement& p) {
    const DlrmShape& d = s.model.dlrm;
    const Workload& w = s.workload;
    const int N = s.gpus;
    const double b = double(w.globalBatch) / N;
    const double pB = bytesPerElement(w.precision);
    const double launch = s.system.gpu.calibration.kernelLaunchS;
    DlrmStepParts x;
    x.dc = denseCosts(d, b, oc, pB, w.frozen);
    addDenseCopies(s, oc, b, pB, x);
    // Sparse work of the critical rank: its table-wise shards, plus the evenly spread types.
    x.lookupB = p.critical.lookupB + p.uniform.lookupB + p.twrwNode.lookupB;
    x.bwdB = p.critical.bwdB + p.uniform.bwdB + p.twrwNode.bwdB;
    // A lookup also writes what it pools, one dim-wide vector per sample and table: the TW/CW
    // shards' all-to-all send buffer, the RW and TWRW partial sums for the group's (node's)
    // whole batch, the DP tables' outputs for the local batch. (At pooling 1 as many bytes as
    // the rows read; under multi-hot pooling a small share.)
    const double pooledOutB = p.critical.sendB + p.rwPooledB + p.twrwNode.sendB + p.dpPooledB;
    x.lookupFwd = oc.memoryTime(x.lookupB + pooledOutB) + launch;
    // Frozen tables: no gradients travel back, none are applied or synchronised.
    x.tablesTrain = !w.frozen.embedding;
    x.embBwd = x.tablesTrain ? oc.memoryTime(x.bwdB) + 2.0 * launch : 0.0; // sort + update
    x.sparseFwdComm = p.a2aS + p.rwS + p.idsS + p.twrwNodeS + p.twrwA2aS;
    x.sparseBwdComm =
        x.tablesTrain ? p.a2aS + p.rwS + p.twrwNodeS + p.twrwA2aS : 0.0; // grads back
    // Dense gradients: all-reduced over every GPU (bucketed DDP), from when the top MLP's
    // gradients are ready.
    x.gradB = std::max(pB, bytesPerElement(w.gradReducePrecision));
    x.denseParams = trainableDenseParams(d, w.frozen);
    const GroupLayout all = layoutGroup(s.system, N, 1);
    x.denseAr = N > 1
                    ? collectiveTime(s.system, all, Collective::AllReduce, x.denseParams * x.gradB)
                    : 0.0;
    const double perParam =
        w.optimizer == Optimizer::Adam ? 24.0 + x.gradB + pB : 8.0 + x.gradB;
    x.denseOpt = oc.elementwise(x.denseParams * perParam);
    return x;
}

/// Where the two streams put the sparse collectives and the dense all-reduce.
struct DlrmSchedule {
    double sparseExposed = 0, commEnd = 0, arStart = 0; ///< the all-reduce starts at arStart
    double denseArExposed = 0, syncExposed = 0;
};

/// Two streams, one network: the compute stream runs lookups, the dense forward and backward
/// and the embedding update; the communication stream carries the sparse collectives and the
/// dense all-reduce one after another, each from when its data is ready.
DlrmSchedule twoStreamSchedule(const Scenario& s, const DlrmPlacement& p, const DlrmStepParts& x) {
    const DenseCosts& dc = x.dc;
    const double computeEnd = x.computeEnd();
    DlrmSchedule k;
    if (s.strategy.dlrm.pipelineSparse) {
        // The next batch's sparse communication (and this batch's gradients) run under the
        // dense work; the all-reduce follows them once the top MLP's gradients exist.
        const double sparseEnd = x.sparseFwdComm + x.sparseBwdComm;
        k.sparseExposed = std::max(0.0, sparseEnd - computeEnd);
        const double topReady = x.lookupFwd + x.denseFwd() + dc.topBwd;
        k.arStart =
            s.strategy.dpOverlap ? std::max(sparseEnd, topReady) : std::max(sparseEnd, computeEnd);
        k.commEnd = std::max(sparseEnd, x.denseAr > 0 ? k.arStart + x.denseAr : 0.0);
    } else {
        // Forward: the pooled outputs travel while the bottom MLP runs; backward: the
        // embedding gradients travel while the bottom MLP's backward runs, and the update
        // waits for them.
        const double fwdWait = std::max(0.0, x.sparseFwdComm - dc.bottomFwd);
        const double bwdWait = std::max(0.0, x.sparseBwdComm - dc.bottomBwd);
        k.sparseExposed = fwdWait + bwdWait;
        const double u = x.lookupFwd + fwdWait + x.denseFwd() + dc.topBwd + dc.interBwd;
        const double end = computeEnd + k.sparseExposed;
        // The all-reduce uses the network before the embedding gradients (from the top MLP's
        // gradients, under the interaction's backward) and after them.
        k.arStart = s.strategy.dpOverlap ? u - dc.interBwd : end;
        const double before = std::max(0.0, u - k.arStart);
        k.commEnd = x.denseAr <= before
                        ? k.arStart + x.denseAr
                        : std::max(k.arStart, u + x.sparseBwdComm) + x.denseAr - before;
    }
    const double bodyEnd = computeEnd + k.sparseExposed;
    k.denseArExposed = std::max(0.0, k.commEnd - bodyEnd);
    k.syncExposed = x.tablesTrain ? p.replicaSyncS + p.dpTableSyncS : 0.0;
    return k;
}

/// Eager launches: the step is at least the host-bound walk of its compute (the two-stream
/// schedule is the other bound; the larger wins, so neither a faster GPU nor a faster host
/// lengthens it). The excess is host idle, inside the forward and backward.
void applyHostBound(const Scenario& s, const DlrmStepParts& x, Result& r) {
    const double hostOp = s.strategy.cudaGraphs ? 0.0 : s.system.gpu.calibration.hostOpS;
    if (hostOp <= 0) return;
    const DenseCosts& dc = x.dc;
    const HostKernels k = hostKernels(s.model.dlrm, s.strategy.dlrm, s.workload, dc, x.tablesTrain);
    const double g[kDlrmSegments] = {0.0,       dc.bottomFwd, x.lookupFwd, dc.interFwd,
                                 dc.topFwd, dc.topBwd,    dc.interBwd, dc.bottomBwd,
                                 x.embBwd,  x.denseOpt,   0.0};
    const int n[kDlrmSegments] = {k.inputs, k.bottomFwd, k.lookups,  k.interFwd,
                              k.topFwd, k.topBwd,    k.interBwd, k.bottomBwd,
                              k.embBwd, k.update,    k.readBack};
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

/// Communication by collective (EP: the embedding model-parallel group).
void dlrmCommBreakdown(const DlrmPlacement& p, const DlrmStepParts& x, const DlrmSchedule& k,
                       Result& r) {
    auto put = [&](ParallelDim dim, Collective c, double ser, double exposed) {
        r.comm[int(dim)][int(c)].serializedS += ser;
        r.comm[int(dim)][int(c)].exposedS += exposed;
    };
    const double sparseSerialized = x.sparseFwdComm + x.sparseBwdComm;
    const double share = sparseSerialized > 0 ? k.sparseExposed / sparseSerialized : 0.0;
    const double directions = x.tablesTrain ? 2.0 : 1.0; // forward, and gradients back
    const double a2a = directions * (p.a2aS + p.twrwA2aS) + p.idsS;
    put(ParallelDim::EP, Collective::AllToAll, a2a, share * a2a);
    put(ParallelDim::EP, Collective::ReduceScatter, p.rwS + p.twrwNodeS,
        share * (p.rwS + p.twrwNodeS));
    if (x.tablesTrain)
        put(ParallelDim::EP, Collective::AllGather, p.rwS + p.twrwNodeS,
            share * (p.rwS + p.twrwNodeS));
    put(ParallelDim::DP, Collective::AllReduce, x.denseAr + k.syncExposed,
        k.denseArExposed + k.syncExposed);
}

/// The DLRM-specific breakdown the report and the explorer show.
void fillDlrmResult(const Scenario& s, const OpCoster& oc, const DlrmPlacement& p,
                    const DlrmStepParts& x, const DlrmSchedule& k, Result& r) {
    const DlrmShape& d = s.model.dlrm;
    const DenseCosts& dc = x.dc;
    DlrmResult& y = r.dlrmResult;
    y.active = true;
    y.groupSize = p.group;
    y.replicas = p.replicas;
    y.lookupBytesCritical = x.lookupB;
    y.lookupBytesMean = p.meanLookupB + p.uniform.lookupB + p.twrwNode.lookupB;
    y.lookupFwdS = x.lookupFwd;
    y.embBackwardS = x.embBwd;
    // What eager per-table modules add, inside the two lines above: the concatenation and the
    // gradient passes of the critical rank's tables.
    y.eagerCopiesS =
        x.eagerCatS + (x.tablesTrain ? oc.memoryTime(p.critical.eagerB + p.uniform.eagerB +
                                                     p.twrwNode.eagerB)
                                     : 0.0);
    y.a2aFwdS = p.a2aS + p.twrwA2aS;
    y.a2aBwdS = x.tablesTrain ? p.a2aS + p.twrwA2aS : 0.0;
    y.rowwiseCommS = (x.tablesTrain ? 2.0 : 1.0) * (p.rwS + p.twrwNodeS);
    y.idsA2aS = p.idsS;
    y.replicaSyncS = x.tablesTrain ? p.replicaSyncS : 0.0;
    y.dpTableSyncS = x.tablesTrain ? p.dpTableSyncS : 0.0;
    y.sparseExposedS = k.sparseExposed;
    y.denseForwardS = dc.bottomFwd + dc.topFwd;
    y.denseBackwardS = dc.bottomBwd + dc.topBwd;
    y.interactionS = dc.interFwd + dc.interBwd;
    y.denseAllReduceS = x.denseAr;
    y.denseAllReduceExposedS = k.denseArExposed;
    // The fullest GPU, which need not be the most loaded one (a small hot table can make a rank
    // critical while a big cold one fills another).
    y.tableBytesCritical = std::max(p.critical.memB, p.twMemMaxB) + p.uniform.memB + p.twrwMemMaxB;
    y.tableBytesMean = p.twMemMeanB + p.uniform.memB + p.twrwMemMaxB;
    y.tableWeightsBytes =
        r.memory.weightsBytes - d.denseParams() * bytesPerElement(s.workload.precision);
    y.imbalance = y.lookupBytesMean > 0 ? y.lookupBytesCritical / y.lookupBytesMean : 1.0;
    y.a2aBytesPerGpu = p.group > 1 ? p.critical.sendB : 0.0; // one GPU sends nothing
}

/// The schedule evaluateDlrm() computed, op by op (one step).
void dlrmTimeline(const Scenario& s, const DlrmStepParts& x, const DlrmSchedule& k, Result& r) {
    const DenseCosts& dc = x.dc;
    double t = 0;
    auto op = [&](const char* label, double dur, TimelineKind kind) {
        r.timeline.push_back(
            {label, Lane::Compute, kind, t, t + dur, false, ParallelDim::DP, Collective::AllReduce});
        t += dur;
    };
    auto comm = [&](const char* label, double start, double dur, ParallelDim dim, Collective c) {
        if (dur > 0)
            r.timeline.push_back(
                {label, Lane::Comm, TimelineKind::Comm, start, start + dur, true, dim, c});
    };
    const bool pipelined = s.strategy.dlrm.pipelineSparse;
    op("embedding lookups", x.lookupFwd, TimelineKind::Embedding);
    if (pipelined)
        comm("sparse all-to-alls (next batch's embeddings, this batch's gradients)", 0.0,
             x.sparseFwdComm + x.sparseBwdComm, ParallelDim::EP, Collective::AllToAll);
    else
        comm("pooled embeddings all-to-all", t, x.sparseFwdComm, ParallelDim::EP,
             Collective::AllToAll);
    const double fwdCommEnd = t + x.sparseFwdComm;
    op("bottom MLP", dc.bottomFwd, TimelineKind::Forward);
    if (!pipelined && fwdCommEnd > t) op("wait for embeddings", fwdCommEnd - t, TimelineKind::Wait);
    op("interaction", dc.interFwd, TimelineKind::Forward);
    op("top MLP", dc.topFwd, TimelineKind::Forward);
    op("top MLP (bwd)", dc.topBwd, TimelineKind::Backward);
    op("interaction (bwd)", dc.interBwd, TimelineKind::Backward);
    if (!pipelined)
        comm("embedding gradients all-to-all", t, x.sparseBwdComm, ParallelDim::EP,
             Collective::AllToAll);
    const double bwdCommEnd = t + x.sparseBwdComm;
    op("bottom MLP (bwd)", dc.bottomBwd, TimelineKind::Backward);
    if (!pipelined && bwdCommEnd > t)
        op("wait for embedding gradients", bwdCommEnd - t, TimelineKind::Wait);
    op("embedding backward + update", x.embBwd, TimelineKind::Embedding);
    if (r.compute.hostStallS > 0)
        op("host launch stalls (GPU idle)", r.compute.hostStallS, TimelineKind::HostIdle);
    if (pipelined && k.sparseExposed > 0)
        op("wait for the sparse all-to-alls", k.sparseExposed, TimelineKind::Wait);
    if (x.denseAr > 0) // the schedule's: the all-reduce finishes at commEnd
        r.timeline.push_back({"dense gradient all-reduce (shares the network)",
                              Lane::DataParallelComm, TimelineKind::Comm, k.arStart, k.commEnd,
                              true, ParallelDim::DP, Collective::AllReduce});
    if (k.denseArExposed > 0) op("wait for dense gradients", k.denseArExposed, TimelineKind::Wait);
    if (k.syncExposed > 0) op("embedding gradient sync", k.syncExposed, TimelineKind::Wait);
    op("dense optimizer", x.denseOpt, TimelineKind::Optimizer);
    const double overhead = r.overheadS - r.dlrmResult.inputLoadS; // the stated framework time
    if (overhead > 0) op("framework overhead", overhead, TimelineKind::Bubble);
    const double input = r.dlrmResult.inputLoadS;
    if (input > 0) op("input loading (synchronous, GPU idle)", input, TimelineKind::HostIdle);
}

} // namespace

double dlrmInputLoadS(const Scenario& s) {
    const Workload& w = s.workload;
    if (w.inputReadBytesPerS <= 0 || s.system.hostLinkBytesPerS <= 0) return 0.0;
    // One record per sample as the Criteo binary files store it (DLRM examples' CriteoBinDataset):
    // the label, the dense features and every categorical id, 4 bytes each.
    const DlrmShape& d = s.model.dlrm;
    double ids = 0;
    for (const EmbeddingTableGroup& t : d.tables)
        ids += t.count * t.pooling;
    const double bytes = 4.0 * (1 + d.denseFeatures + ids) * w.globalBatch / s.gpus;
    return bytes / w.inputReadBytesPerS + bytes / s.system.hostLinkBytesPerS;
}

Result evaluateDlrm(const Scenario& s, const EvaluateOptions& options) {
    const DlrmShape& d = s.model.dlrm;
    const Workload& w = s.workload;
    const int N = s.gpus;
    const double B = w.globalBatch;
    const OpCoster oc = trainingOpCoster(s.system.gpu, w);
    const DlrmPlacement p = dlrmPlacement(s);
    const DlrmStepParts x = dlrmStepParts(s, oc, p);
    const DlrmSchedule k = twoStreamSchedule(s, p, x);
    Result r;
    r.compute.forwardS = x.lookupFwd + x.denseFwd();
    r.compute.backwardS = x.denseBwd() + x.embBwd;
    r.compute.optimizerS = x.denseOpt;
    r.exposedCommS = k.sparseExposed + k.denseArExposed + k.syncExposed;
    applyHostBound(s, x, r);
    r.computeS = r.compute.totalS();
    const double input = dlrmInputLoadS(s); // a synchronous loader's read, GPU idle
    // Time no op accounts for: the stated framework time, per step and per micro-batch (a DLRM
    // step is one), and a synchronous loader's read.
    r.overheadS = w.stepOverheadS + w.microBatchOverheadS + input;
    r.stepTimeS = r.computeS + r.exposedCommS + r.overheadS;
    r.samplesPerS = B / r.stepTimeS;
    r.microBatches = 1;
    r.forwardPerMicroBatchS = r.compute.forwardS;
    r.backwardPerMicroBatchS = r.compute.backwardS;
    dlrmCommBreakdown(p, x, k, r);

    r.modelFlopsPerStep = B * denseTrainingFlopsPerSample(d, w.frozen);
    r.hardwareFlopsPerStep = r.modelFlopsPerStep;
    r.modelTflopsPerGpu = r.modelFlopsPerStep / r.stepTimeS / N / 1e12;
    r.hardwareTflopsPerGpu = r.modelTflopsPerGpu;
    const double peak = s.system.gpu.peak(w.precision);
    r.mfu = peak > 0 ? r.modelTflopsPerGpu * 1e12 / peak : 0.0;
    r.hfu = r.mfu;
    r.memory = dlrmMemory(s, p);
    fillDlrmResult(s, oc, p, x, k, r);
    r.dlrmResult.inputLoadS = input;
    if (options.timeline) dlrmTimeline(s, x, k, r);
    return r;
}

} // namespace detail

} // namespace madmax
