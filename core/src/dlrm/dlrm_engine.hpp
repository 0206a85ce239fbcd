// The DLRM engine's internals, shared by evaluate(), peakMemory() and the plan search.
#pragma once

#include "madmax/collectives.hpp"
#include "madmax/result.hpp"
#include "madmax/scenario.hpp"

namespace madmax::detail {

/// What one GPU carries of the embedding work for a step (bytes).
struct DlrmRankLoad {
    double costS = 0, lookupB = 0, bwdB = 0, sendB = 0, memB = 0, optB = 0;
    double eagerB = 0; ///< of bwdB, eager per-table modules' own gradient passes
};

/// A plan laid out on the GPUs: the table-wise shards placed largest-first on the least loaded
/// rank of a group, the evenly spread types, and each collective's time per pass.
struct DlrmPlacement {
    int group = 1, replicas = 1;
    DlrmRankLoad critical;  ///< TW/CW shards of the most loaded rank
    DlrmRankLoad uniform;   ///< RW and DP tables: the same on every rank
    DlrmRankLoad twrwNode;  ///< TWRW: one rank's share of the most loaded node
    double meanLookupB = 0, twMemMaxB = 0, twMemMeanB = 0, twrwMemMaxB = 0;
    double a2aRecvB = 0;                ///< pooled all-to-all receive buffer (full)
    double rwPooledB = 0, idsB = 0;      ///< RW partial sums; ids to their row owners
    double replicaSyncB = 0, dpTableGradB = 0;
    double dpPooledB = 0;               ///< DP tables' pooled outputs for the local batch
    double a2aS = 0, rwS = 0, idsS = 0, twrwNodeS = 0, twrwA2aS = 0;
    double replicaSyncS = 0, dpTableSyncS = 0;
};

/// The bottom MLP's output width, and the width of all features concatenated with it.
double bottomOut(const DlrmShape& d);
double concatWidth(const DlrmShape& d);
/// Σ 2·in·out (FLOPs) or Σ in·out + out (parameters) of an MLP from `in`.
double mlpSum(double in, const std::vector<std::int64_t>& widths, bool flops);

DlrmPlacement dlrmPlacement(const Scenario& s);
/// Dense parameters (bottom MLP, interaction, top MLP) that train under `f`.
double trainableDenseParams(const DlrmShape& d, const Frozen& f);
/// FLOPs per sample of a training step's dense part under `f` (3 × forward when nothing is
/// frozen): the forward, and each part's input and weight gradients where needed.
double denseTrainingFlopsPerSample(const DlrmShape& d, const Frozen& f);
Result evaluateDlrm(const Scenario& s, const EvaluateOptions& options);

/// Segments of a step in program order: inputs, bottom MLP, lookups, interaction, top MLP and
/// loss (the forward's five), then top, interaction and bottom backward, the embedding
/// backward-update, the dense update and the loss read back.
constexpr int kDlrmSegments = 11, kDlrmForwardSegments = 5;
/// The step under the host's launches: the host issues each segment's n kernels at hostOp
/// apiece, in program order, from the previous step's sync (the loss read back); the GPU runs
/// a kernel once it is issued and the one before it is done. For n equal kernels of g/n the
/// segment ends at max(previous end + g, issue start + hostOp + g, issue start + n·hostOp + g/n)
/// (the max-plus recurrence solved; every term only grows with g and hostOp); a segment of no
/// kernels (n = 0) runs its g straight after the one before. Returns the step's end and,
/// through `forwardEnd`, where the forward's last segment ends (`forwardGpu`: the forward's
/// GPU time).
double hostBoundStep(const double (&g)[kDlrmSegments], const int (&n)[kDlrmSegments],
                     double hostOp, double& forwardEnd, double& forwardGpu);
/// A synchronous loader's time per step (workload.input_read_gbps; 0 when the loader
/// prefetches): each GPU's share of the batch, one Criteo binary record per sample (label,
/// dense features, every categorical id: 4 B each), read off storage and copied to the GPU over
/// the host link, one after the other, while the GPU waits.
double dlrmInputLoadS(const Scenario& s);
MemoryBreakdown dlrmMemory(const Scenario& s, const DlrmPlacement& p);
MemoryBreakdown dlrmMemory(const Scenario& s);
/// Why a DLRM scenario cannot be evaluated (field and fix), or nothing.
std::optional<std::string> explainInvalidDlrm(const Scenario& s);

} // namespace madmax::detail
