#include "madmax/search.hpp"

#include "madmax/dlrm_search.hpp"
#include "madmax/engine.hpp"
#include "madmax/error.hpp"
#include "madmax/flops.hpp"
#include "madmax/pipeline.hpp"
#include "madmax/pipeline_schedule.hpp"
#include "madmax/serving.hpp"
#include "madmax/strategy_space.hpp"
#include "search/search_parts.hpp"
#include "search/worker_pool.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <span>
#include <sstream>
#include <tuple>
#include <utility>

namespace madmax {

using detail::paretoGpus;
using detail::paretoMemory;
using detail::setRates;

std::string_view toString(Objective o) {
    switch (o) {
    case Objective::Throughput:
        return "throughput";
    case Objective::TimeToTrain:
        return "time";
    case Objective::Cost:
        return "cost";
    }
    return "?";
}

std::optional<Objective> parseObjective(std::string_view s) {
    if (s == "throughput") return Objective::Throughput;
    if (s == "time") return Objective::TimeToTrain;
    if (s == "cost") return Objective::Cost;
    return std::nullopt;
}

double objectiveScore(Objective o, double tokensPerS, int gpus, double price, double budget) {
    switch (o) {
    case Objective::Throughput:
        return tokensPerS;
    case Objective::TimeToTrain:
        return tokensPerS / budget; // 1 / seconds to train the budget
    case Objective::Cost: {
        // 1 / dollars (GPU-hours when no price is known).
        const double hours = budget / tokensPerS / 3600.0 * gpus;
        return 1.0 / (hours * (price > 0 ? price : 1.0));
    }
    }
    return tokensPerS;
}

namespace {


auto keyOf(const Candidate& c) {
    const Strategy& s = c.strategy;
    return std::make_tuple(c.gpus, s.tp, s.pp, s.vp, s.cp, s.dp, s.microBatch, s.zeroStage,
                           int(s.recompute), s.recomputeLayers, s.offloadLayers,
                           int(s.sequenceParallel),
                           int(s.tpCommOverlap), s.firstStageLayers, s.lastStageLayers, s.ep,
                           s.etp);
}

/// A well-mixed 64-bit hash of the configuration: the deterministic scatter sample.
std::uint64_t hashOf(const Candidate& c) {
    std::uint64_t h = 1469598103934665603ULL;
    auto mix = [&](std::uint64_t v) {
        h ^= v + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
        h *= 1099511628211ULL;
    };
    std::apply([&](auto... v) { (mix(std::uint64_t(std::int64_t(v))), ...); }, keyOf(c));
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
}

} // namespace

void detail::setRates(SearchStats& st) {
    st.enumeratedPerS = st.seconds > 0 ? st.enumerated / st.seconds : 0;
    st.timedPerS = st.seconds > 0 ? st.feasible / st.seconds : 0;
}

bool candidateBefore(const Candidate& a, const Candidate& b) {
    if (a.score != b.score) return a.score > b.score;
    return keyOf(a) < keyOf(b);
}

Candidate evaluateCandidate(const Scenario& s, Objective o, double budget) {
    return candidateFromResult(s, evaluate(s), o, budget);
}

Candidate candidateFromResult(const Scenario& s, const Result& r, Objective o, double budget) {
    Candidate c;
    c.gpus = s.gpus;
    c.strategy = s.strategy;
    c.stepTimeS = r.stepTimeS;
    c.tokensPerS = r.tokensPerS;
    c.mfu = r.mfu;
    c.memoryBytes = r.memory.totalBytes();
    c.marginBytes = r.memory.marginBytes();
    c.exposedCommS = r.exposedCommS;
    c.fits = r.memory.fits();
    c.score = objectiveScore(o, r.tokensPerS, s.gpus, s.system.pricePerGpuHour, budget);
    return c;
}

namespace {

/// A pipeline depth and its layer split (even, or ceil(l/p) in the middle with the rest shared
/// by the first and last stages, as Llama 3 did).
struct PipelineLayout {
    int pp, first, last, middle;
};

std::vector<PipelineLayout> pipelineLayouts(const Model& m, const std::vector<int>& restrict,
                                            const Strategy& base) {
    std::vector<PipelineLayout> out;
    for (int p = 1; p <= m.layers && p <= 256; ++p) {
        if (!restrict.empty() && std::find(restrict.begin(), restrict.end(), p) == restrict.end())
            continue;
        if (m.layers % p == 0) {
            out.push_back({p, 0, 0, m.layers / p});
        } else if (p >= 3) {
            const int middle = (m.layers + p - 1) / p;
            const int rest = m.layers - (p - 2) * middle;
            if (rest >= 2) out.push_back({p, rest / 2, rest - rest / 2, middle});
        }
        // Keep the scenario's own uneven split when it names one for this depth.
        if (p == base.pp && (base.firstStageLayers || base.lastStageLayers) && m.layers % p == 0)
            out.push_back({p, base.firstStageLayers, base.lastStageLayers, m.layers / p});
    }
    return out;
}

struct Task {
    int gpus, tp, cp, dp;
    PipelineLayout layout;
    int vp;
    int ep = 1, etp = 1;
    PipelineSchedule schedule = PipelineSchedule::OneFOneB;
};

/// (EP, ETP) pairs for a MoE model on a stage of `ranks` = TP·CP·DP GPUs (parallel folding):
/// EP divides the experts, ETP the expert width (powers of two up to the scale-up domain), and
/// EP·ETP divides the ranks. Dense models: only (1, 1).
std::vector<std::pair<int, int>> expertLayouts(const Model& m, const SearchSpace& space,
                                               long long ranks, int domain) {
    std::vector<std::pair<int, int>> out;
    if (!m.isMoe()) return {{1, 1}};
    for (int ep : divisorsOf(m.moe.experts, m.moe.experts)) {
        if (!allowed(space.ep, ep) || ep > ranks) continue;
        for (int etp = 1; etp <= domain && 1LL * ep * etp <= ranks; etp *= 2) {
            if (!allowed(space.etp, etp) || m.moe.expertFfn % etp != 0) continue;
            if (ranks % (1LL * ep * etp) != 0) continue;
            out.emplace_back(ep, etp);
        }
    }
    return out;
}


/// Best-first list of at most n candidates.
struct TopN {
    std::size_t n;
    std::vector<Candidate> items;
    bool full() const { return items.size() >= n; }
    /// The score a candidate must beat to enter; a list of none (n = 0) admits nothing.
    double threshold() const {
        if (!full()) return -1.0;
        return items.empty() ? std::numeric_limits<double>::infinity() : items.back().score;
    }
    void offer(const Candidate& c) {
        if (n == 0) return;
        if (full() && !candidateBefore(c, items.back())) return;
        items.insert(std::upper_bound(items.begin(), items.end(), c, candidateBefore), c);
        if (items.size() > n) items.pop_back();
    }
};



struct LocalState {
    TopN top;
    std::map<std::pair<int, int>, HeatCell> cells;
    std::vector<Candidate> pareto; // local front (kept small)
    std::map<int, Candidate> bestPerGpus;
    std::vector<Candidate> scatter;
    SearchStats stats;

    /// True when some kept point beats `ub` in score and has at least `margin` headroom.
    bool dominatedOnMemory(double ub, double margin) const {
        for (const auto& p : pareto)
            if (p.score > ub && p.marginBytes >= margin) return true;
        return false;
    }
    void addPareto(const Candidate& c) {
        for (const auto& p : pareto)
            if (p.score >= c.score && p.marginBytes >= c.marginBytes) return;
        pareto.erase(std::remove_if(pareto.begin(), pareto.end(),
                                    [&](const Candidate& p) {
                                        return c.score >= p.score && c.marginBytes >= p.marginBytes;
                                    }),
                     pareto.end());
        pareto.push_back(c);
    }
};

std::vector<Task> buildTasks(const Scenario& base, const SearchSpace& space) {
    const Model& m = base.model;
    std::vector<int> gpuList = space.gpus.empty() ? std::vector<int>{base.gpus} : space.gpus;
    const int domain =
        base.system.tiers.empty() ? base.system.gpusPerNode : base.system.tiers.front().gpus;
    std::vector<Task> tasks;
    const auto layouts = pipelineLayouts(m, space.pp, base.strategy);
    for (int g : gpuList) {
        if (g < 1 || g > base.system.maxGpus()) continue;
        for (int tp : tpChoices(m, 1 << 20)) {
            if (!allowed(space.tp, tp) || tp > g) continue;
            if (!space.allowTpAcrossScaleUp && tp > domain) continue;
            for (const auto& lay : layouts) {
                if (1LL * tp * lay.pp > g) continue;
                for (int cp : cpChoices(base.workload.seqLen, 1 << 20)) {
                    if (!allowed(space.cp, cp)) continue;
                    const int dp = dataParallelDegree(g, tp, lay.pp, cp);
                    if (dp == 0) continue;
                    if (base.workload.globalBatch % dp != 0) continue;
                    std::vector<int> vps = {1};
                    if (lay.pp > 1) vps = divisorsOf(lay.middle, lay.middle);
                    const auto experts = expertLayouts(m, space, 1LL * tp * cp * dp, domain);
                    for (int vp : vps) {
                        if (!allowed(space.vp, vp)) continue;
                        if (vp > 1 && lay.first == 0 && m.layers % (lay.pp * vp) != 0) continue;
                        // One chunk per GPU: 1F1B, or each one-chunk schedule asked for
                        // (--restrict schedule=…); more chunks: the interleaved schedule.
                        std::vector<PipelineSchedule> schedules{scheduleForChunks(vp)};
                        if (vp == 1 && lay.pp > 1 && !space.schedules.empty()) {
                            schedules.clear();
                            for (PipelineSchedule k : space.schedules)
                                if (k != PipelineSchedule::Interleaved) schedules.push_back(k);
                        }
                        for (PipelineSchedule k : schedules)
                            for (const auto& [ep, etp] : experts)
                                tasks.push_back({g, tp, cp, dp, lay, vp, ep, etp, k});
                    }
                }
            }
        }
    }
    return tasks;
}

/// DualPipe feeds micro-batches from both ends: an even count, at least pp (pipeline_schedule.cpp).
bool dualPipeRuns(const Task& t, int microBatches) {
    return t.schedule != PipelineSchedule::DualPipe ||
           (microBatches % 2 == 0 && microBatches >= t.layout.pp);
}

/// Upper bound on a configuration's score: its step is at least its GEMMs at peak, stretched by
/// the pipeline bubble (GEMM efficiency ≤ 1 and the critical stage ≥ the mean stage).
double scoreUpperBound(const Scenario& s, Objective o, double budget, double gemmFlopsPerStep) {
    const Strategy& st = s.strategy;
    const double peak = s.system.gpu.peak(s.workload.precision);
    const int m = microBatchesPerStep(s);
    const double lbStep = gemmFlopsPerStep / (double(s.gpus) * peak) *
                          scheduleModel(st.schedule).stretchBound(st, m);
    const double tokens = double(s.workload.globalBatch) * s.workload.seqLen;
    return objectiveScore(o, tokens / lbStep, s.gpus, s.system.pricePerGpuHour, budget);
}

/// The task's fixed degrees on the scenario (a shard group that no longer divides DP: off).
void applyTask(const Task& t, Scenario& s) {
    Strategy& st = s.strategy;
    s.gpus = t.gpus;
    st.tp = t.tp;
    st.pp = t.layout.pp;
    st.firstStageLayers = t.layout.first;
    st.lastStageLayers = t.layout.last;
    st.cp = t.cp;
    st.dp = t.dp;
    st.vp = t.vp;
    st.ep = t.ep;
    st.etp = t.etp;
    st.schedule = t.schedule;
    if (st.shardGroup > 0 && st.dp % st.shardGroup != 0) st.shardGroup = 0;
}

/// One complete configuration: counted, checked for memory, pruned when its score bound cannot
/// place it anywhere a result shows, else timed and offered to every view.
void visitConfiguration(const Scenario& s, const SearchOptions& opt, double sampleBelow,
                        double gemmFlopsPerStep, HeatCell& cell, LocalState& L) {
    if (explainInvalid(s)) return; // not a configuration (cannot happen by construction)
    cell.anyValid = true;
    ++L.stats.enumerated;
    const MemoryBreakdown mem = peakMemory(s);
    if (!mem.fits()) {
        ++L.stats.infeasible;
        return;
    }
    Candidate probe;
    probe.gpus = s.gpus;
    probe.strategy = s.strategy;
    const bool sampled = double(hashOf(probe)) < sampleBelow;
    if (opt.prune && !sampled) {
        const double ub = scoreUpperBound(s, opt.objective, opt.tokenBudget, gemmFlopsPerStep);
        auto g = L.bestPerGpus.find(s.gpus);
        const bool belowTop = L.top.full() && ub < L.top.threshold();
        const bool belowCell = cell.anyFeasible && ub < cell.best.score;
        const bool belowGpus = g != L.bestPerGpus.end() && ub < g->second.score;
        if (belowTop && belowCell && belowGpus && L.dominatedOnMemory(ub, mem.marginBytes())) {
            ++L.stats.pruned;
            return;
        }
    }
    const Candidate c = evaluateCandidate(s, opt.objective, opt.tokenBudget);
    ++L.stats.feasible;
    L.top.offer(c);
    if (!cell.anyFeasible || candidateBefore(c, cell.best)) cell.best = c;
    cell.anyFeasible = true;
    auto g = L.bestPerGpus.find(s.gpus);
    if (g == L.bestPerGpus.end() || candidateBefore(c, g->second)) L.bestPerGpus[s.gpus] = c;
    L.addPareto(c);
    if (sampled) L.scatter.push_back(c);
}

/// What a task fixes, swept: micro-batch × ZeRO × recompute × offload × SP × TP overlap.
void runTask(const Task& t, Scenario& s, const SearchSpace& space, const SearchOptions& opt,
             double sampleBelow, double gemmFlopsPerStep, LocalState& L) {
    applyTask(t, s);
    Strategy& st = s.strategy;
    const int perReplica = s.workload.globalBatch / t.dp;
    const std::vector<int> zeros =
        t.dp * t.cp > 1 ? std::vector<int>{0, 1, 2, 3} : std::vector<int>{0};
    const std::vector<int> binary = t.tp > 1 ? std::vector<int>{0, 1} : std::vector<int>{0};
    auto& cell = L.cells[{t.tp, t.layout.pp}];
    cell.tp = t.tp;
    cell.pp = t.layout.pp;
    // Full recompute once per recomputed-layer count asked for (0: every layer); a count
    // reaching a whole chunk is "every layer" again, so it is skipped.
    static constexpr int kEveryLayer[] = {0};
    const std::span<const int> fullLayers = space.recomputeLayers.empty()
                                                ? std::span<const int>(kEveryLayer)
                                                : std::span<const int>(space.recomputeLayers);
    const int chunkLayers = largestChunkLayers(s); // the task fixes pp, vp and the split
    // The scenario's ZeRO-3 coordinator (a framework fact) applies where ZeRO-3 does; the
    // other stages gather nothing. The working copy serves the next task as the base gave it,
    // however this one ends.
    struct KeepStyle {
        Strategy& st;
        const FsdpStyle style;
        ~KeepStyle() { st.fsdpStyle = style; }
    } const keep{st, st.fsdpStyle};
    const FsdpStyle zero3Style = keep.style;
    for (int mb : divisorsOf(perReplica, perReplica)) {
        if (!allowed(space.microBatch, mb)) continue;
        st.microBatch = mb;
        const int m = perReplica / mb;
        if ((t.vp > 1 && m % t.layout.pp != 0) || !dualPipeRuns(t, m)) continue;
        for (int zero : zeros) {
            if (!allowed(space.zeroStage, zero)) continue;
            st.zeroStage = zero;
            st.fsdpStyle = zero == 3 ? zero3Style : FsdpStyle::Overlapped;
            for (int rcIndex = 0; rcIndex < 2 + int(fullLayers.size()); ++rcIndex) {
                const Recompute rc = rcIndex == 0   ? Recompute::None
                                     : rcIndex == 1 ? Recompute::Selective
                                                    : Recompute::Full;
                if (!allowed(space.recompute, rc)) continue;
                const int rcLayers = rc == Recompute::Full ? fullLayers[rcIndex - 2] : 0;
                if (rcLayers > 0 && rcLayers >= chunkLayers) continue;
                if (rcLayers > 0 && s.workload.frozen.layers > 0) continue;
                st.recompute = rc;
                st.recomputeLayers = rcLayers;
                // Activation offloading where the configuration allows it (PP 1, no
                // recompute: Megatron-Core's rules): each offload count asked for, else none.
                bool offloadNone = false;
                for (int off : space.offloadLayers) {
                    const int offload = offloadBlock(s, off) == OffloadBlock::None ? off : 0;
                    if (offload == 0 && std::exchange(offloadNone, true)) continue;
                    st.offloadLayers = offload;
                    for (int sp : binary) {
                        if (!allowed(space.sequenceParallel, sp)) continue;
                        st.sequenceParallel = sp;
                        for (int ov : binary) {
                            if (!allowed(space.tpCommOverlap, ov)) continue;
                            if (opt.cancel && opt.cancel->load(std::memory_order_relaxed))
                                return;
                            st.tpCommOverlap = ov;
                            visitConfiguration(s, opt, sampleBelow, gemmFlopsPerStep, cell, L);
                        }
                    }
                }
            }
        }
    }
}

/// At most the configurations runTask() visits for task `t`: micro-batches × ZeRO stages ×
/// recompute choices (none, selective, full once per layer count) × offload counts × SP ×
/// overlap.
std::size_t innerCount(const Task& t, const Scenario& base, const SearchSpace& space) {
    const int perReplica = base.workload.globalBatch / t.dp;
    const std::size_t mbs = divisorsOf(perReplica, perReplica).size();
    const std::size_t recompute =
        2 + (space.recomputeLayers.empty() ? 1 : space.recomputeLayers.size());
    const std::size_t offload = std::max<std::size_t>(1, space.offloadLayers.size());
    return mbs * (t.dp * t.cp > 1 ? 4 : 1) * recompute * offload * (t.tp > 1 ? 4 : 1);
}

/// The tasks on the worker threads, each with its own findings, returned as one partial
/// result per thread for mergeResults (every merge step is order-independent, so any thread
/// count agrees).
std::vector<SearchResult> runWorkers(const std::vector<Task>& tasks, const Scenario& base,
                                     const SearchSpace& space, const SearchOptions& opt,
                                     double sampleBelow, double gemmFlops) {
    int threads =
        opt.threads > 0 ? opt.threads : detail::parallelWidth();
    threads = std::max(1, std::min<int>(threads, int(tasks.size())));
    std::vector<LocalState> locals(threads);
    for (auto& l : locals)
        l.top.n = std::size_t(std::max(0, opt.topN));
    std::atomic<std::size_t> next{0}, done{0};
    auto worker = [&](int w) {
        Scenario s = base;
        LocalState& L = locals[w];
        while (true) {
            if (opt.cancel && opt.cancel->load(std::memory_order_relaxed)) return;
            const std::size_t i = next.fetch_add(1);
            if (i >= tasks.size()) return;
            runTask(tasks[i], s, space, opt, sampleBelow, gemmFlops, L);
            const std::size_t d = done.fetch_add(1) + 1;
            if (opt.progress && (d % 16 == 0 || d == tasks.size())) opt.progress(d, tasks.size());
        }
    };
    detail::parallelRun(threads, worker); // (the kept threads: search/worker_pool.hpp)
    std::vector<SearchResult> parts;
    if (locals.empty()) locals.emplace_back();
    for (auto& L : locals) {
        SearchResult p;
        p.top = std::move(L.top.items);
        p.paretoMemory = std::move(L.pareto);
        for (auto& [k, c] : L.cells)
            p.heatmap.push_back(c);
        for (auto& [g, c] : L.bestPerGpus)
            p.paretoGpus.push_back(c);
        p.scatter = std::move(L.scatter);
        p.stats = L.stats;
        parts.push_back(std::move(p));
    }
    return parts;
}

} // namespace

std::optional<std::string> explainSearchSpace(const Scenario& base, const SearchSpace& space) {
    const double most = base.system.maxGpus();
    if (!space.draftTokens.empty() && base.workload.kind != WorkloadKind::Inference)
        return "--restrict draft applies to a serving search (speculative decoding): remove it";
    if (base.workload.kind == WorkloadKind::Inference)
        for (int g : space.gpus)
            if (g != base.gpus)
                return "a serving search runs at the scenario's " + std::to_string(base.gpus) +
                       " GPUs (its replicas fill them); change the scenario's GPU count to "
                       "search another";
    for (int g : space.gpus)
        if (g > most)
            return std::to_string(g) + " GPUs exceeds the " + std::to_string((long long)most) +
                   " of the system's outermost tier (" + base.system.name +
                   "); raise system.tiers[last].gpus or search fewer GPUs";
    return std::nullopt;
}

std::optional<std::string> explainObjective(const Scenario& base, Objective o) {
    if (o == Objective::Throughput) return std::nullopt;
    if (!base.model.isDlrm() && base.workload.kind != WorkloadKind::Inference) return std::nullopt;
    return std::string(base.model.isDlrm() ? "a DLRM's plan search ranks samples/s"
                                           : "a serving search ranks output tokens/s per GPU") +
           "; time and cost to train a token budget are a transformer training search's "
           "objectives";
}

SearchResult search(const Scenario& base, const SearchSpace& space, const SearchOptions& opt) {
    if (auto why = explainSearchSpace(base, space)) throw InputError("search space", "gpus", *why);
    if (base.model.isDlrm())
        throw InputError("search", "model",
                         "a DLRM's strategy is its embedding sharding plan: use the plan search "
                         "(madmax search on a DLRM scenario, or the explorer's DLRM panel)");
    if (base.workload.kind == WorkloadKind::Inference) {
        if (auto why = explainObjective(base, opt.objective))
            throw InputError("--objective", std::string(toString(opt.objective)), *why);
        return detail::servingDesignSpace(base, space, opt);
    }
    // Offload counts to try: the scenario's unless restricted.
    SearchSpace normalized = space;
    if (normalized.offloadLayers.empty())
        normalized.offloadLayers.push_back(base.strategy.offloadLayers);
    const auto start = std::chrono::steady_clock::now();
    std::vector<Task> all = buildTasks(base, normalized);
    std::vector<Task> tasks;
    for (std::size_t i = 0; i < all.size(); ++i)
        if (int(i % std::size_t(std::max(1, opt.shardCount))) == opt.shardIndex)
            tasks.push_back(all[i]);

    // The scatter sample is drawn over the whole space (not the shard) so shards merge exactly.
    std::size_t estimate = 0;
    for (const auto& t : all)
        estimate += innerCount(t, base, normalized);
    const double fraction =
        estimate == 0 ? 1.0 : std::min(1.0, double(opt.scatterLimit) / double(estimate));
    const double sampleBelow = fraction * 18446744073709551615.0;

    // Fine-tuning computes fewer gradients: the bound counts only the GEMMs that run.
    const double gemmFlops = trainingGemmFlopsPerStep(
        base.model, base.workload.frozen, double(base.workload.globalBatch), base.workload.seqLen);

    std::vector<SearchResult> parts =
        runWorkers(tasks, base, normalized, opt, sampleBelow, gemmFlops);
    if (opt.baseline) {
        Scenario b = base;
        b.strategy = *opt.baseline;
        if (auto why = explainInvalid(b))
            throw InputError("--baseline", strategySpec(*opt.baseline), *why);
        parts.front().baseline = evaluateCandidate(b, opt.objective, opt.tokenBudget);
    }
    SearchResult r = mergeResults(parts, opt.topN);
    r.objective = opt.objective;
    r.tokenBudget = opt.tokenBudget;
    r.shardIndex = opt.shardCount > 1 ? opt.shardIndex : 0;
    r.shardCount = std::max(1, opt.shardCount);
    r.cancelled = opt.cancel && opt.cancel->load();
    r.stats.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    setRates(r.stats);
    return r;
}


} // namespace madmax
