// The search's fronts (throughput vs memory headroom, vs GPU count) and the merging of search
// shards run apart (threads, or `madmax merge` over files) into one result.
#include "search/search_parts.hpp"

#include <algorithm>
#include <map>

namespace madmax {

namespace {

/// A two-objective front: the points in `order`, each kept when its `value` beats every one
/// kept before it.
template <class Order, class Value>
std::vector<Candidate> runningFront(std::vector<Candidate> pts, Order order, Value value) {
    std::sort(pts.begin(), pts.end(), order);
    std::vector<Candidate> front;
    double best = -1e300;
    for (const auto& c : pts)
        if (value(c) > best) {
            front.push_back(c);
            best = value(c);
        }
    return front;
}

} // namespace

/// The Pareto front of throughput (score) vs memory headroom: best first.
std::vector<Candidate> detail::paretoMemory(std::vector<Candidate> pts) {
    return runningFront(std::move(pts), candidateBefore,
                        [](const Candidate& c) { return c.marginBytes; });
}

/// The front of throughput per GPU vs latency (a serving candidate's stepTimeS is its TPOT).
std::vector<Candidate> detail::paretoLatency(std::vector<Candidate> pts) {
    pts.erase(std::remove_if(pts.begin(), pts.end(), [](const Candidate& c) { return c.gpus <= 0; }),
              pts.end());
    return runningFront(
        std::move(pts),
        [](const Candidate& a, const Candidate& b) {
            if (a.stepTimeS != b.stepTimeS) return a.stepTimeS < b.stepTimeS;
            return candidateBefore(a, b);
        },
        [](const Candidate& c) { return c.tokensPerS / c.gpus; });
}

/// The front of throughput vs GPU count: fewest GPUs first, each faster than every smaller one.
std::vector<Candidate> detail::paretoGpus(std::vector<Candidate> pts) {
    return runningFront(
        std::move(pts),
        [](const Candidate& a, const Candidate& b) {
            if (a.gpus != b.gpus) return a.gpus < b.gpus;
            return candidateBefore(a, b);
        },
        [](const Candidate& c) { return c.tokensPerS; });
}

using detail::paretoGpus;
using detail::paretoMemory;
using detail::setRates;

SearchResult mergeResults(const std::vector<SearchResult>& shards, int topN) {
    SearchResult r;
    std::vector<Candidate> pareto, gpusFront;
    std::map<std::pair<int, int>, HeatCell> cells;
    for (const auto& p : shards) {
        r.top.insert(r.top.end(), p.top.begin(), p.top.end());
        pareto.insert(pareto.end(), p.paretoMemory.begin(), p.paretoMemory.end());
        gpusFront.insert(gpusFront.end(), p.paretoGpus.begin(), p.paretoGpus.end());
        r.scatter.insert(r.scatter.end(), p.scatter.begin(), p.scatter.end());
        for (const auto& c : p.heatmap) {
            HeatCell& into = cells[{c.tp, c.pp}];
            into.tp = c.tp;
            into.pp = c.pp;
            into.anyValid = into.anyValid || c.anyValid;
            if (c.anyFeasible && (!into.anyFeasible || candidateBefore(c.best, into.best)))
                into.best = c.best;
            into.anyFeasible = into.anyFeasible || c.anyFeasible;
        }
        r.stats.enumerated += p.stats.enumerated;
        r.stats.feasible += p.stats.feasible;
        r.stats.infeasible += p.stats.infeasible;
        r.stats.pruned += p.stats.pruned;
        r.stats.seconds = std::max(r.stats.seconds, p.stats.seconds);
        r.cancelled = r.cancelled || p.cancelled;
        if (!r.baseline && p.baseline) r.baseline = p.baseline;
        r.objective = p.objective;
        r.tokenBudget = p.tokenBudget;
        if (r.fingerprint.empty()) r.fingerprint = p.fingerprint;
    }
    std::sort(r.top.begin(), r.top.end(), candidateBefore);
    if (int(r.top.size()) > topN) r.top.resize(std::size_t(std::max(0, topN)));
    r.paretoMemory = paretoMemory(std::move(pareto));
    // Best per GPU count first, then the front across counts.
    std::map<int, Candidate> perGpus;
    for (const auto& c : gpusFront) {
        auto it = perGpus.find(c.gpus);
        if (it == perGpus.end() || candidateBefore(c, it->second)) perGpus[c.gpus] = c;
    }
    std::vector<Candidate> best;
    for (auto& [g, c] : perGpus)
        best.push_back(c);
    r.paretoGpus = paretoGpus(std::move(best));
    for (auto& [k, c] : cells)
        r.heatmap.push_back(c);
    std::sort(r.scatter.begin(), r.scatter.end(), candidateBefore);
    if (r.baseline && !r.top.empty())
        r.speedupOverBaseline = r.top.front().score / r.baseline->score;
    setRates(r.stats);
    return r;
}

} // namespace madmax
