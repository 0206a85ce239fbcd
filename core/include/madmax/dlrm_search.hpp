// The DLRM sharding-plan search (docs/developer/workloads.md "Search for DLRM"): a type per table group, the
// 2-D group size and sparse pipelining, under HBM capacity, ranked by step time and explained.
#pragma once

#include "madmax/result.hpp"
#include "madmax/scenario.hpp"

#include <string>
#include <vector>

namespace madmax {

struct DlrmPlanCandidate {
    DlrmPlan plan;
    Result result; ///< without timeline
    bool fits = false;
};

struct DlrmSearchOptions {
    int topN = 10;
    /// Exhaustive over the per-group types while their product stays below this; beyond it,
    /// coordinate descent (each group's best type given the others, until nothing improves)
    /// from every uniform plan.
    long long exhaustiveLimit = 4096;
};

struct DlrmSearchResult {
    std::vector<DlrmPlanCandidate> top; ///< fitting plans first, fastest first
    long long evaluated = 0, valid = 0, fitting = 0;
    bool exhaustive = true; ///< false: coordinate descent for some group size
    std::vector<int> groupSizes; ///< the 2-D group sizes tried
    /// Why the best beats the others, in sentences (what dominates, what the runner-up costs).
    std::vector<std::string> explanation;
};

/// Types allowed for table group `t` at group size `g` on this system (the ones that are
/// valid and not the same as another: CW only when a table splits, TWRW only across nodes).
std::vector<EmbSharding> dlrmTypesFor(const Scenario& s, int t, int g);

DlrmSearchResult searchDlrmPlans(const Scenario& base, const DlrmSearchOptions& options = {});

/// "C1 twrw, C2-C9 dp, …": a plan in words, runs of equal types merged.
std::string describePlan(const Scenario& s, const DlrmPlan& plan);

} // namespace madmax
