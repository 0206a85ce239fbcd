#include "madmax/serving.hpp"
#include "madmax/error.hpp"

#include "madmax/engine.hpp"
#include "madmax/strategy_space.hpp"
#include "search/search_parts.hpp"
#include "search/worker_pool.hpp"
#include "serving/costs.hpp"

#include <atomic>
#include <chrono>
#include <limits>
#include <map>

#include <algorithm>
#include <numeric>
#include <tuple>

namespace madmax {

namespace {
CurvePoint curvePoint(const Result& r) {
    const InferenceResult& ir = r.inference;
    return {ir.batch,        ir.ttftS,    ir.tpotS,
            ir.e2eLatencyS,  ir.outputTokensPerSPerGpu,
            r.memory.fits(), ir.poolLoad, ir.prefillPool() ? r.tokensPerSPerGpu : 0.0};
}

/// The scenario a curve sweeps: offline and without objectives, so each point is the setting
/// swept and nothing chooses among them.
Scenario curveBase(const Scenario& base) {
    Scenario s = base;
    s.workload.inference.mode = ServingMode::Offline;
    s.workload.inference.ttftObjectiveS = 0;
    s.workload.inference.tpotObjectiveS = 0;
    return s;
}

/// Each distinct value, in order, set on `s` by `set` and evaluated.
template <typename T, typename Set>
std::vector<CurvePoint> sweepCurve(Scenario& s, std::vector<T> values, Set set) {
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    std::vector<CurvePoint> out;
    for (const T v : values) {
        set(s, v);
        out.push_back(curvePoint(evaluate(s)));
    }
    return out;
}

/// A prefill pool's curve: the same pass at each load, its prompts waiting longer as the load
/// grows (an M/D/1 queue).
std::vector<CurvePoint> prefillLoadCurve(const Scenario& base) {
    const double operating = evaluate(base).inference.poolLoad;
    Scenario s = curveBase(base);
    std::vector<double> loads(std::begin(kLoadCurve), std::end(kLoadCurve));
    // A saturated pool's TTFT is its service alone, off the line's rising wait: its star
    // stands apart, as offline (the line's last point is the nearest load below it).
    if (operating < 1.0) loads.push_back(operating);
    return sweepCurve(s, loads, [](Scenario& x, double l) { x.workload.inference.meanLoad = l; });
}
} // namespace

std::vector<CurvePoint> latencyThroughputCurve(const Scenario& base, int maxBatch) {
    if (base.workload.inference.phase == ServingPhase::Prefill) return prefillLoadCurve(base);
    // The curve is the batch swept as given (offline, no objectives, an endless stream of
    // requests): server mode, objectives and a finite benchmark only choose a point on it.
    // That point — the scenario's own batch — and the largest batch that fits are on the curve
    // too, so the operating point lies on its own line.
    const int operating = evaluate(base).inference.batch;
    Scenario s = curveBase(base);
    s.workload.inference.batch = 0;
    s.workload.inference.requests = 0; // each point a steady state, not a finite benchmark
    s.workload.inference.meanLoad = 1; // the sweep sets the concurrency; a load picks a point
    const Result autoFit = evaluate(s);
    if (maxBatch <= 0) maxBatch = std::max(2, 2 * autoFit.inference.maxBatchThatFits);
    std::vector<int> batches;
    for (int b = 1; b <= maxBatch; b *= 2)
        batches.push_back(b);
    for (int b : {operating, autoFit.inference.maxBatchThatFits})
        if (b >= 1 && b <= maxBatch) batches.push_back(b);
    return sweepCurve(s, batches, [](Scenario& x, int b) { x.workload.inference.batch = b; });
}

namespace {
/// One configuration the search found feasible: its layout and figures, without the scenario
/// (copying a scenario allocates; only the configurations reported are made into scenarios).
struct ServingFound {
    int tp = 1, pp = 1, replicas = 1, ep = 1, draft = 0;
    Precision precision = Precision::BF16;
    int index = 0; ///< its place in the search's fixed order of layouts
    int batch = 0;
    double outputTokensPerSPerGpu = 0, ttftS = 0, tpotS = 0, score = 0;
};

/// Best score first; ties in a fixed order of the degrees, precision and drafts.
void rankServing(std::vector<ServingFound>& top) {
    std::sort(top.begin(), top.end(), [](const ServingFound& a, const ServingFound& b) {
        if (a.score != b.score) return a.score > b.score;
        return std::make_tuple(a.tp, a.pp, a.ep, int(a.precision), a.draft) <
               std::make_tuple(b.tp, b.pp, b.ep, int(b.precision), b.draft);
    });
}

/// The configurations no other beats on both tokens/s per GPU (higher) and TPOT (lower), by
/// TPOT.
std::vector<ServingFound> servingFront(std::vector<ServingFound> all) {
    std::sort(all.begin(), all.end(), [](const ServingFound& a, const ServingFound& b) {
        return a.tpotS != b.tpotS ? a.tpotS < b.tpotS
                                  : a.outputTokensPerSPerGpu > b.outputTokensPerSPerGpu;
    });
    std::vector<ServingFound> front;
    for (auto& c : all) // by rising TPOT: kept when faster per GPU than everything before it
        if (front.empty() || c.outputTokensPerSPerGpu > front.back().outputTokensPerSPerGpu)
            front.push_back(c);
    return front;
}
} // namespace

namespace {

/// EP choices for a serving layout: MoE experts over EP ranks of the stage's tp × replicas
/// GPUs (attention-DP + wide EP); dense models: EP 1; only those the options allow.
std::vector<int> servingEpChoices(const Model& m, int tp, int replicas,
                                  const ServingSearchOptions& o) {
    std::vector<int> eps = {1};
    if (m.isMoe()) {
        eps.clear();
        for (int ep : divisorsOf(m.moe.experts, m.moe.experts))
            if ((1LL * tp * replicas) % ep == 0) eps.push_back(ep);
    }
    eps.erase(std::remove_if(eps.begin(), eps.end(), [&](int ep) { return !allowed(o.ep, ep); }),
              eps.end());
    return eps;
}

/// One serving configuration on the scenario: its degrees, draft length and precision (the KV
/// cache in FP8 below 8 bits).
void applyServingLayout(Scenario& s, int tp, int pp, int replicas, int ep, int draft,
                        Precision p) {
    auto& inf = s.workload.inference;
    s.strategy.ep = ep;
    s.strategy.etp = 1;
    inf.draftTokens = draft;
    s.strategy.tp = tp;
    s.strategy.pp = pp;
    s.strategy.vp = 1;
    s.strategy.cp = 1;
    s.strategy.dp = replicas;
    s.strategy.schedule = PipelineSchedule::OneFOneB;
    s.strategy.firstStageLayers = s.strategy.lastStageLayers = 0;
    s.workload.precision = p;
    inf.weightPrecision = p;
    inf.kvPrecision = bytesPerElement(p) < 1 ? Precision::FP8 : p;
}

/// The configuration evaluated at its best batch; kept when it fits and meets the objectives.
void offerServing(const Scenario& s, int index, const ServingSearchOptions& o, std::size_t& evaluated,
                  std::size_t& feasible, std::vector<ServingFound>& found,
                  detail::serving::PrefillMemo& memo) {
    if (explainInvalid(s)) return;
    ++evaluated;
    EvaluateOptions eo;
    eo.prefillMemo = &memo; // only the layout changes between this thread's configurations
    const Result r = evaluate(s, eo);
    if (!r.memory.fits() || !r.inference.meetsObjectives || r.inference.maxBatchThatFits < 1)
        return;
    ++feasible;
    ServingFound c;
    c.tp = s.strategy.tp;
    c.pp = s.strategy.pp;
    c.replicas = s.strategy.dp;
    c.ep = s.strategy.ep;
    c.draft = s.workload.inference.draftTokens;
    c.precision = s.workload.precision;
    c.index = index;
    c.batch = r.inference.batch;
    c.outputTokensPerSPerGpu = r.inference.outputTokensPerSPerGpu;
    c.ttftS = r.inference.ttftS;
    c.tpotS = r.inference.tpotS;
    const double price = s.system.pricePerGpuHour > 0 ? s.system.pricePerGpuHour : 1.0;
    c.score = o.perDollar ? c.outputTokensPerSPerGpu * 3600 / price : c.outputTokensPerSPerGpu;
    found.push_back(c);
}

/// A found configuration as the search reports it: its scenario at its batch.
ServingCandidate candidateOf(Scenario s, const ServingFound& f) {
    applyServingLayout(s, f.tp, f.pp, f.replicas, f.ep, f.draft, f.precision);
    // The scenario as the search evaluated it, so evaluate() gives the figures reported. In
    // server mode a requested batch caps the 99th percentile in flight, not the mean, so the
    // batch is left to the solve, which finds f.batch again; offline, it is the batch.
    s.workload.inference.batch = s.workload.inference.mode == ServingMode::Server ? 0 : f.batch;
    // (Built in place: a default-built candidate would build a scenario only to replace it.)
    return ServingCandidate{std::move(s), f.outputTokensPerSPerGpu, f.ttftS, f.tpotS, f.score,
                            f.batch};
}

/// Every layout evaluated, over `o.threads` threads (0: the pool's width, with at least 32
/// layouts a thread: a layout takes 0.5-2 µs and handing work to a kept thread a few, where
/// starting one took 20-50, a fifth of a 160-layout search on a 2-core VM by perf). The threads
/// take runs of `run` neighbouring layouts as they finish the last (layouts cost unevenly: an
/// FP8 layout fits larger batches, so its batch search probes more), each with its own copy
/// of the scenario and its own kept prefill passes, which a run's layouts share (they differ
/// in draft length and precision); the findings are put back in the layouts' order, so the
/// result is the one-thread result whatever the thread count.
std::vector<ServingFound> evaluateLayouts(const Scenario& s, const std::vector<ServingFound>& ls,
                                          const ServingSearchOptions& o, int run,
                                          ServingSearchResult& res) {
    const int n = int(ls.size());
    int threads = o.threads > 0 ? o.threads : std::min(detail::parallelWidth(), n / 32);
    threads = std::max(1, std::min(threads, n));
    struct alignas(64) Part { // (each on its own cache line: the threads count into them)
        std::vector<ServingFound> found;
        std::size_t evaluated = 0, feasible = 0;
    };
    std::vector<Part> parts(static_cast<std::size_t>(threads));
    run = std::max(1, run);
    std::atomic<int> next{0};
    detail::parallelRun(threads, [&](int k) {
        Part& part = parts[std::size_t(k)];
        Scenario mine = s;
        detail::serving::PrefillMemo memo;
        for (int first = next.fetch_add(run); first < n; first = next.fetch_add(run))
            for (int i = first; i < std::min(n, first + run); ++i) {
                if (o.cancel && o.cancel->load()) return;
                const ServingFound& l = ls[std::size_t(i)];
                applyServingLayout(mine, l.tp, l.pp, l.replicas, l.ep, l.draft, l.precision);
                offerServing(mine, i, o, part.evaluated, part.feasible, part.found, memo);
            }
    });
    std::vector<ServingFound> found;
    for (Part& part : parts) {
        res.evaluated += part.evaluated;
        res.feasible += part.feasible;
        found.insert(found.end(), part.found.begin(), part.found.end());
    }
    if (threads > 1)
        std::sort(found.begin(), found.end(),
                  [](const ServingFound& a, const ServingFound& b) { return a.index < b.index; });
    return found;
}

} // namespace

ServingSearchResult searchServing(const Scenario& base, const ServingSearchOptions& o) {
    if (base.model.isDlrm())
        throw InputError("search", "model", "DLRM serving is not modelled by the native engine");
    ServingSearchResult res;
    const Model& m = base.model;
    const int domain =
        base.system.tiers.empty() ? base.system.gpusPerNode : base.system.tiers.front().gpus;
    std::vector<Precision> precisions = o.precisions;
    if (precisions.empty())
        for (Precision p : {Precision::BF16, Precision::FP8, Precision::FP4})
            if (base.system.gpu.peak(p) > 0) precisions.push_back(p);
    if (base.workload.inference.requests > 0 && (o.ttftObjectiveS > 0 || o.tpotObjectiveS > 0))
        throw InputError("search", "workload.requests",
                         "a finite benchmark (" + std::to_string(base.workload.inference.requests) +
                             " requests queued at once) runs offline, but latency objectives "
                             "make the search serve a stream of arrivals: drop the objectives, "
                             "or set requests to 0");
    Scenario s = base;
    auto& inf = s.workload.inference;
    inf.ttftObjectiveS = o.ttftObjectiveS;
    inf.tpotObjectiveS = o.tpotObjectiveS;
    inf.mode =
        (o.ttftObjectiveS > 0 || o.tpotObjectiveS > 0) ? ServingMode::Server : ServingMode::Offline;
    inf.batch = 0;
    const std::vector<int> drafts =
        o.draftTokens.empty() ? std::vector<int>{inf.draftTokens} : o.draftTokens;
    std::vector<ServingFound> layouts; // every configuration to try, in a fixed order
    layouts.reserve(std::size_t(64) * drafts.size() * precisions.size());
    for (int tp : divisorsOf(m.heads, domain)) {
        if (m.kvHeads % tp != 0 && tp % m.kvHeads != 0) continue;
        if (!allowed(o.tp, tp)) continue;
        for (int pp : divisorsOf(m.layers, base.gpus)) {
            if (!allowed(o.pp, pp)) continue;
            const int replicas = dataParallelDegree(base.gpus, tp, pp, 1);
            if (replicas == 0) continue;
            for (int ep : servingEpChoices(m, tp, replicas, o))
                for (int draft : drafts)
                    for (Precision p : precisions) {
                        ServingFound l;
                        l.tp = tp, l.pp = pp, l.replicas = replicas, l.ep = ep, l.draft = draft;
                        l.precision = p;
                        layouts.push_back(l);
                    }
        }
    }
    // A run: one layout in every draft length and precision (neighbours in the order above),
    // so one thread's kept prefill passes and weights serve all of them; split finer, the other
    // thread computed them again (the two-thread DeepSeek-V3 search ran 8% slower).
    const int run = int(precisions.size()) * int(drafts.size());
    std::vector<ServingFound> found = evaluateLayouts(s, layouts, o, run, res);
    if (o.cancel && o.cancel->load()) return res;
    rankServing(found);
    const std::vector<ServingFound> front = servingFront(found);
    if (int(found.size()) > o.topN) found.resize(std::size_t(std::max(0, o.topN)));
    res.top.reserve(found.size());
    for (const ServingFound& f : found)
        res.top.push_back(candidateOf(s, f));
    res.pareto.reserve(front.size());
    for (const ServingFound& f : front)
        res.pareto.push_back(candidateOf(s, f));
    return res;
}

PoolBalance balancePools(const Scenario& prefill, const Scenario& decode, int totalGpus) {
    const auto& pi = prefill.workload.inference;
    const auto& di = decode.workload.inference;
    if (prefill.workload.kind != WorkloadKind::Inference || pi.phase != ServingPhase::Prefill)
        throw InputError("prefill pool", "workload.phase", "must be a serving scenario with phase \"prefill\"");
    if (decode.workload.kind != WorkloadKind::Inference || di.phase != ServingPhase::Decode)
        throw InputError("decode pool", "workload.phase", "must be a serving scenario with phase \"decode\"");
    if (prefill.model.name != decode.model.name || pi.inputTokens != di.inputTokens ||
        pi.outputTokens != di.outputTokens)
        throw InputError("decode pool", "workload",
                         "the pools serve one request mix: the same model, input_tokens and "
                         "output_tokens in both");
    const Result p = evaluate(prefill), d = evaluate(decode);
    const double rp = p.inference.requestsPerS / prefill.gpus;
    const double rd = d.inference.requestsPerS / decode.gpus;
    if (!(rp > 0) || !(rd > 0))
        throw InputError(rp > 0 ? "decode pool" : "prefill pool", "",
                         "serves no requests at its batch (nothing fits or meets the objectives): "
                         "no balance exists");
    PoolBalance b;
    b.prefillShare = rd / (rp + rd);
    // A pool is whole replicas and whole expert-parallel groups (the EP group spans replicas).
    auto unit = [](const Strategy& st) {
        return std::lcm(replicaGpus(st), 1LL * st.ep * st.etp);
    };
    const long long pUnit = unit(prefill.strategy), dUnit = unit(decode.strategy);
    // The whole-replica split nearest the balance, trying the neighbours of the ideal.
    const long long ideal = std::llround(b.prefillShare * totalGpus / double(pUnit));
    for (long long k = std::max(1LL, ideal - 1); k <= ideal + 1; ++k) {
        const long long gp = k * pUnit, gd = (totalGpus - gp) / dUnit * dUnit;
        if (gp < 1 || gd < 1) continue;
        const double req = std::min(rp * double(gp), rd * double(gd));
        if (req > b.requestsPerS) {
            b.requestsPerS = req;
            b.prefillGpus = int(gp);
            b.decodeGpus = int(gd);
        }
    }
    if (b.prefillGpus == 0)
        throw InputError("--gpus", std::to_string(totalGpus),
                         "too few GPUs for a replica of each pool (prefill " +
                             std::to_string(pUnit) + ", decode " + std::to_string(dUnit) + ")");
    b.outputTokensPerS = b.requestsPerS * di.outputTokens;
    b.outputTokensPerSPerGpu = b.outputTokensPerS / (b.prefillGpus + b.decodeGpus);
    // The prefill pool's TTFT ends with the KV transfer; the decode pool's share starts with it.
    b.ttftS = p.inference.ttftS + d.inference.ttftS - d.inference.kvTransferS;
    b.tpotS = d.inference.tpotS;
    return b;
}

} // namespace madmax

namespace madmax {

DisaggregatedPlan searchDisaggregated(const Scenario& base, const ServingSearchOptions& o) {
    DisaggregatedPlan plan;
    if (base.workload.kind != WorkloadKind::Inference) {
        plan.why = "not a serving scenario";
        return plan;
    }
    ServingSearchOptions each = o;
    each.topN = 1;
    // Each pool's layouts are searched on half the GPUs, so that both fit beside each other;
    // balancePools then sizes them over all of them in whole replicas and EP groups.
    Scenario pre = base, dec = base;
    pre.workload.inference.phase = ServingPhase::Prefill;
    dec.workload.inference.phase = ServingPhase::Decode;
    // Pools serve a stream: a finite benchmark's request count is the aggregated engine's.
    pre.workload.inference.requests = dec.workload.inference.requests = 0;
    pre.gpus = dec.gpus = std::max(1, base.gpus / 2);
    const ServingSearchResult p = searchServing(pre, each);
    const ServingSearchResult d = searchServing(dec, each);
    plan.evaluated = p.evaluated + d.evaluated;
    if (p.top.empty() || d.top.empty()) {
        plan.why = std::string("no ") + (p.top.empty() ? "prefill" : "decode") +
                   "-pool layout fits and meets the objectives";
        return plan;
    }
    plan.prefill = p.top.front();
    plan.decode = d.top.front();
    try {
        plan.pools = balancePools(plan.prefill.scenario, plan.decode.scenario, base.gpus);
        plan.found = true;
    } catch (const InputError& e) {
        plan.why = e.what();
    }
    return plan;
}

/// An inference scenario's design space is the serving search's (TP × PP × replicas ×
/// precision, each at its best batch under the scenario's TTFT / TPOT objectives), reported in
/// the training search's shape so the design-space and co-design views, `madmax sweep` and
/// `merge` treat both workloads alike. Shard 0 holds every configuration (the space is small).
SearchResult detail::servingDesignSpace(const Scenario& base, const SearchSpace& space,
                                        const SearchOptions& opt) {
    const auto start = std::chrono::steady_clock::now();
    SearchResult r;
    r.objective = Objective::Throughput;
    r.tokenBudget = opt.tokenBudget;
    if (opt.shardIndex == 0) {
        ServingSearchOptions so;
        so.ttftObjectiveS = base.workload.inference.ttftObjectiveS;
        so.tpotObjectiveS = base.workload.inference.tpotObjectiveS;
        so.topN = std::numeric_limits<int>::max();
        so.cancel = opt.cancel;
        so.tp = space.tp;
        so.pp = space.pp;
        so.ep = space.ep;
        const ServingSearchResult sr = searchServing(base, so);
        std::map<std::pair<int, int>, HeatCell> cells;
        std::vector<Candidate> all;
        for (const ServingCandidate& sc : sr.top) {
            const Strategy& st = sc.scenario.strategy;
            if (!allowed(space.tp, st.tp) || !allowed(space.pp, st.pp)) continue;
            Candidate c = evaluateCandidate(sc.scenario, Objective::Throughput, opt.tokenBudget);
            c.servingBatch = sc.batch;
            c.servingPrecision = sc.scenario.workload.precision;
            all.push_back(c);
            HeatCell& cell = cells[{st.tp, st.pp}];
            cell.tp = st.tp;
            cell.pp = st.pp;
            cell.anyValid = true;
            if (!cell.anyFeasible || candidateBefore(c, cell.best)) cell.best = c;
            cell.anyFeasible = true;
        }
        std::sort(all.begin(), all.end(), candidateBefore);
        r.stats.enumerated = sr.evaluated;
        r.stats.feasible = all.size();
        r.stats.infeasible = sr.evaluated - sr.feasible;
        r.paretoMemory = paretoMemory(all);
        r.paretoLatency = detail::paretoLatency(all);
        r.scatter = all;
        r.top = all;
        if (int(r.top.size()) > opt.topN) r.top.resize(std::size_t(std::max(0, opt.topN)));
        for (auto& [k, c] : cells)
            r.heatmap.push_back(c);
    }
    if (opt.baseline) {
        Scenario b = base;
        b.strategy = *opt.baseline;
        if (!explainInvalid(b)) {
            const Result rb = evaluate(b);
            r.baseline = candidateFromResult(b, rb, Objective::Throughput, opt.tokenBudget);
            // The batch it runs: the scenario's, or the one its own batch solve finds.
            r.baseline->servingBatch = std::max(1, rb.inference.batch);
            r.baseline->servingPrecision = b.workload.precision;
            if (!r.top.empty() && r.baseline->score > 0)
                r.speedupOverBaseline = r.top.front().score / r.baseline->score;
        }
    }
    r.cancelled = opt.cancel && opt.cancel->load();
    r.stats.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    setRates(r.stats);
    return r;
}

} // namespace madmax
