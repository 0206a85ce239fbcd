#include "madmax/dlrm_search.hpp"

#include "madmax/engine.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace madmax {

namespace {

int nodeSize(const Scenario& s) {
    return s.system.tiers.empty() ? s.system.gpusPerNode : s.system.tiers.front().gpus;
}

std::string fmt(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

/// The step time to rank by; plans that do not fit rank after every plan that does.
/// Equal step times (within 1e-9) rank by memory: the plan that leaves more headroom.
bool better(const DlrmPlanCandidate& a, const DlrmPlanCandidate& b) {
    if (a.fits != b.fits) return a.fits;
    const double ta = a.result.stepTimeS, tb = b.result.stepTimeS;
    if (std::fabs(ta - tb) > 1e-9 * std::max(ta, tb)) return ta < tb;
    return a.result.memory.totalBytes() < b.result.memory.totalBytes();
}

} // namespace

std::vector<EmbSharding> dlrmTypesFor(const Scenario& s, int t, int g) {
    const EmbeddingTableGroup& tab = s.model.dlrm.tables[std::size_t(t)];
    std::vector<EmbSharding> out{EmbSharding::TableWise, EmbSharding::DataParallel};
    if (g > 1 && tab.rows >= g) out.push_back(EmbSharding::RowWise);
    if (g > 1 && tab.dim % 2 == 0 && tab.dim / 2 >= 32) out.push_back(EmbSharding::ColumnWise);
    const int node = nodeSize(s);
    if (g > node && g % node == 0 && tab.rows >= node) out.push_back(EmbSharding::TableRowWise);
    return out;
}

std::string describePlan(const Scenario& s, const DlrmPlan& plan) {
    const auto& tabs = s.model.dlrm.tables;
    std::string out;
    std::size_t i = 0;
    while (i < tabs.size()) {
        std::size_t j = i;
        while (j + 1 < tabs.size() && plan.sharding[j + 1] == plan.sharding[i])
            ++j;
        if (!out.empty()) out += ", ";
        out += tabs[i].name + (j > i ? "–" + tabs[j].name : std::string()) + " " +
               std::string(toString(plan.sharding[i]));
        i = j + 1;
    }
    return out;
}

namespace {

/// The plans tried and their counts: every candidate evaluated, kept for the ranking.
struct PlanRun {
    Scenario s;
    DlrmSearchResult& out;
    std::vector<DlrmPlanCandidate> all;
    const DlrmPlanCandidate* operator()(const DlrmPlan& plan) {
        s.strategy.dlrm = plan;
        ++out.evaluated;
        if (explainInvalid(s)) return nullptr;
        ++out.valid;
        DlrmPlanCandidate c;
        c.plan = plan;
        c.result = evaluate(s);
        c.fits = c.result.memory.fits();
        out.fitting += c.fits;
        all.push_back(std::move(c));
        return &all.back();
    }
};

/// Every combination of the table groups' types, in odometer order.
void exhaustivePlans(DlrmPlan plan, const std::vector<std::vector<EmbSharding>>& types,
                     PlanRun& run) {
    const int groups = int(types.size());
    std::vector<std::size_t> idx(std::size_t(groups), 0);
    while (true) {
        for (int t = 0; t < groups; ++t)
            plan.sharding[std::size_t(t)] = types[std::size_t(t)][idx[std::size_t(t)]];
        run(plan);
        int t = 0;
        while (t < groups && ++idx[std::size_t(t)] == types[std::size_t(t)].size())
            idx[std::size_t(t++)] = 0;
        if (t == groups) break;
    }
}

/// Coordinate descent from each uniform plan (its type where allowed, else TW): one group's
/// type changed at a time while it helps, at most four sweeps.
void descentPlans(DlrmPlan plan, const std::vector<std::vector<EmbSharding>>& types,
                  PlanRun& run) {
    const int groups = int(types.size());
    for (EmbSharding start : {EmbSharding::TableWise, EmbSharding::RowWise, EmbSharding::ColumnWise,
                              EmbSharding::TableRowWise, EmbSharding::DataParallel}) {
        for (int t = 0; t < groups; ++t) {
            const auto& allowed = types[std::size_t(t)];
            plan.sharding[std::size_t(t)] =
                std::find(allowed.begin(), allowed.end(), start) != allowed.end()
                    ? start
                    : EmbSharding::TableWise;
        }
        const DlrmPlanCandidate* c = run(plan);
        DlrmPlanCandidate best = c ? *c : DlrmPlanCandidate{};
        bool have = c != nullptr;
        for (int sweep = 0; sweep < 4; ++sweep) {
            bool improved = false;
            for (int t = 0; t < groups; ++t) {
                DlrmPlan trial = have ? best.plan : plan;
                for (EmbSharding k : types[std::size_t(t)]) {
                    if (have && k == best.plan.sharding[std::size_t(t)]) continue;
                    trial.sharding[std::size_t(t)] = k;
                    const DlrmPlanCandidate* r = run(trial);
                    if (r && (!have || better(*r, best))) {
                        best = *r;
                        have = improved = true;
                    }
                }
            }
            if (!improved) break;
        }
    }
}

/// Explain the winner: where its step goes, and what the runner-up pays that it does not.
void explainWinner(const Scenario& base, DlrmSearchResult& out) {
    const int node = nodeSize(base);
    const DlrmPlanCandidate& w = out.top.front();
    const DlrmResult& x = w.result.dlrmResult;
    const double step = w.result.stepTimeS;
    auto share = [&](double v) { return fmt("%.0f%%", 100.0 * v / step); };
    out.explanation.push_back(
        std::string(w.fits ? "" : "No plan fits in HBM; the least bad: ") + "the best plan takes " +
        fmt("%.3g ms", step * 1e3) + " per step: dense MLPs and interaction " +
        share(x.denseForwardS + x.denseBackwardS + x.interactionS) + ", embedding lookups and "
        "updates " + share(x.lookupFwdS + x.embBackwardS) + ", exposed communication " +
        share(w.result.exposedCommS) + ".");
    if (x.replicas > 1)
        out.explanation.push_back(
            fmt("2-D: groups of %.0f GPUs keep the all-to-all inside ", double(x.groupSize)) +
            (x.groupSize <= node ? "a node" : "fewer nodes") +
            fmt(", at %.3g ms of replica gradient sync per step.", x.replicaSyncS * 1e3));
    if (out.top.size() < 2) return;
    const DlrmPlanCandidate& r = out.top[1];
    const DlrmResult& y = r.result.dlrmResult;
    const double dt = r.result.stepTimeS - step;
    const double dComm = r.result.exposedCommS - w.result.exposedCommS;
    const double dLookup = (y.lookupFwdS + y.embBackwardS) - (x.lookupFwdS + x.embBackwardS);
    const std::string why =
        dComm >= dLookup ? fmt("%.3g ms more exposed communication", dComm * 1e3)
                         : fmt("%.3g ms more lookup time on its most loaded GPU", dLookup * 1e3);
    out.explanation.push_back("The runner-up (" + describePlan(base, r.plan) +
                              fmt(", %.3g ms slower) pays ", dt * 1e3) + why + ".");
}

} // namespace

DlrmSearchResult searchDlrmPlans(const Scenario& base, const DlrmSearchOptions& options) {
    DlrmSearchResult out;
    const int groups = int(base.model.dlrm.tables.size());
    const int N = base.gpus, node = nodeSize(base);
    for (int g = 1; g <= N; g *= 2)
        if (N % g == 0 && (g <= node || g % node == 0)) out.groupSizes.push_back(g);
    if (out.groupSizes.empty() || out.groupSizes.back() != N) out.groupSizes.push_back(N);
    PlanRun run{base, out, {}};
    for (int g : out.groupSizes) {
        std::vector<std::vector<EmbSharding>> types(static_cast<std::size_t>(groups));
        long long product = 1;
        for (int t = 0; t < groups; ++t) {
            types[std::size_t(t)] = dlrmTypesFor(base, t, g);
            product = std::min(product * static_cast<long long>(types[std::size_t(t)].size()),
                               options.exhaustiveLimit + 1);
        }
        for (bool pipe : {false, true}) {
            DlrmPlan plan;
            // The embedding kernels are the framework's, not the plan's: kept as given.
            plan.perTableKernels = base.strategy.dlrm.perTableKernels;
            plan.groupSize = g == N ? 0 : g;
            plan.pipelineSparse = pipe;
            plan.listed = groups;
            if (product <= options.exhaustiveLimit) {
                exhaustivePlans(plan, types, run);
            } else {
                out.exhaustive = false;
                descentPlans(plan, types, run);
            }
        }
    }
    // Rank: fitting first, fastest first; the same plan reached twice listed once.
    std::vector<DlrmPlanCandidate>& all = run.all;
    std::stable_sort(all.begin(), all.end(), better);
    for (const auto& c : all) {
        if (int(out.top.size()) >= options.topN) break;
        const bool seen = std::any_of(out.top.begin(), out.top.end(), [&](const auto& x) {
            return x.plan.groupSize == c.plan.groupSize &&
                   x.plan.pipelineSparse == c.plan.pipelineSparse &&
                   std::equal(x.plan.sharding.begin(), x.plan.sharding.begin() + groups,
                              c.plan.sharding.begin());
        });
        if (!seen) out.top.push_back(c);
    }
    if (!out.top.empty()) explainWinner(base, out);
    return out;
}

} // namespace madmax
