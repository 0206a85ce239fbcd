// The communication groups of a strategy on a system (docs/developer/model.md §3 "Placement"): which ranks each
// parallel dimension's collectives run over and which tiers they cross. A shared engine part:
// every layered workload (dense, MoE, ViT) takes its groups from here.
#pragma once

#include "madmax/collectives.hpp"
#include "madmax/scenario.hpp"

namespace madmax::detail {

struct Groups {
    GroupLayout tp, cp, dpShard, dpReplicas, gradReduce;
    // MoE (parallel folding): the expert grid is ETP, EP, EDP innermost first on a stage's ranks.
    GroupLayout ep, edpReduce, edpShard, edpReplicas;
    long long ppStride = 1;
};

/// The groups of `s.strategy` laid out on `s.system` (its placement's rank order).
Groups makeGroups(const Scenario& s);

} // namespace madmax::detail
