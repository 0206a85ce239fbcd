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
MemoryBreakdown dlrmMemory(const Scenario& s, const DlrmPlacement& p);
MemoryBreakdown dlrmMemory(const Scenario& s);
/// Why a DLRM scenario cannot be evaluated (field and fix), or nothing.
std::optional<std::string> explainInvalidDlrm(const Scenario& s);

} // namespace madmax::detail
