// Design-space search (issue #4): every valid strategy for a model, system, GPU count and
// workload, ranked by an objective; top N, Pareto fronts, the best per TP × PP cell, and the
// speedup over a baseline strategy. Parallel, cancellable, shardable, deterministic.
#pragma once

#include "madmax/result.hpp"
#include "madmax/scenario.hpp"

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace madmax {

enum class Objective { Throughput, TimeToTrain, Cost };
std::string_view toString(Objective o);
std::optional<Objective> parseObjective(std::string_view s);

/// Restrictions on each dimension; an empty list means every valid value.
struct SearchSpace {
    std::vector<int> tp, pp, vp, cp, microBatch, zeroStage;
    std::vector<int> ep, etp; ///< MoE: expert parallel and expert tensor parallel degrees
    std::vector<Recompute> recompute;
    /// Under full recompute, the layers of each model chunk recomputed (strategy.recompute_
    /// layers); 0 = every layer. Empty: every layer only.
    std::vector<int> recomputeLayers;
    /// Activation offload counts (strategy.offload_layers) to try where a configuration allows
    /// offloading (PP 1, no recompute); elsewhere none. Empty: the scenario's.
    std::vector<int> offloadLayers;
    std::vector<int> sequenceParallel; ///< 0 / 1
    std::vector<int> tpCommOverlap;    ///< 0 / 1
    std::vector<int> gpus;             ///< GPU counts to sweep (empty: the scenario's)
    /// Schedules to try with one model chunk per GPU and a pipeline (vp = 1, pp > 1); empty:
    /// 1F1B, the one every framework has (zero_bubble and dualpipe on request). More chunks per
    /// GPU are always the interleaved schedule.
    std::vector<PipelineSchedule> schedules;
    /// Serving: speculative draft tokens to try (`--restrict draft=0,1,2`); empty: the scenario's.
    std::vector<int> draftTokens;
    bool allowTpAcrossScaleUp = false; ///< TP beyond the scale-up domain
};

struct SearchOptions {
    Objective objective = Objective::Throughput;
    int topN = 10;
    int threads = 0;           ///< 0: every hardware thread
    double tokenBudget = 1e12; ///< tokens to train, for time and cost
    bool prune = true;         ///< skip configurations a lower bound proves cannot rank
    int shardIndex = 0, shardCount = 1;
    std::size_t scatterLimit =
        20000; ///< configurations kept for a scatter plot (deterministic sample)
    const std::atomic<bool>* cancel = nullptr;
    /// "What I run today": the best is compared with it (speedupOverBaseline).
    std::optional<Strategy> baseline;
    /// Called now and then from worker threads with (done, total) outer tasks.
    std::function<void(std::size_t, std::size_t)> progress;
};

/// One evaluated configuration, compact.
struct Candidate {
    int gpus = 0;
    Strategy strategy;
    double stepTimeS = 0, tokensPerS = 0, mfu = 0;
    double memoryBytes = 0, marginBytes = 0;
    double exposedCommS = 0;
    double score = 0; ///< higher is better under the objective
    bool fits = true;
    /// A DLRM's table groups (0 for a transformer): its strategy is then the sharding plan in
    /// strategy.dlrm, whose first embTables entries are used, not the TP/PP/DP fields.
    int embTables = 0;
    /// Serving: the batch per replica and the precision the serving search chose (0: a
    /// training candidate). With the TP/PP/replica (dp)/EP degrees they are the configuration.
    int servingBatch = 0;
    Precision servingPrecision = Precision::BF16;
};

struct HeatCell {
    int tp = 0, pp = 0;
    bool anyValid = false;    ///< some configuration exists in this cell
    bool anyFeasible = false; ///< some configuration fits in memory
    Candidate best;
};

struct SearchStats {
    std::size_t enumerated = 0; ///< valid configurations examined (each memory-checked)
    std::size_t feasible = 0;   ///< of those, fitting in memory and timed in full by the engine
    std::size_t infeasible = 0; ///< dropped: do not fit in memory
    std::size_t pruned = 0;     ///< fit, but skipped untimed: a bound proved they cannot rank
    double seconds = 0;
    double enumeratedPerS = 0; ///< enumerated ÷ seconds
    double timedPerS = 0;      ///< feasible (timed in full) ÷ seconds
};

struct SearchResult {
    Objective objective = Objective::Throughput;
    double tokenBudget = 0;
    std::vector<Candidate> top;          ///< best first
    std::vector<Candidate> paretoMemory; ///< throughput vs memory headroom
    std::vector<Candidate> paretoGpus;   ///< throughput vs GPU count (when swept)
    /// Serving: throughput per GPU vs TPOT (stepTimeS), fastest TPOT first, each faster per GPU
    /// than every one before it: the chart serving planners draw.
    std::vector<Candidate> paretoLatency;
    std::vector<HeatCell> heatmap;       ///< best per (TP, PP), sorted by tp then pp
    std::vector<Candidate> scatter;      ///< a deterministic sample of feasible configurations
    std::optional<Candidate> baseline;
    std::optional<double>
        speedupOverBaseline; ///< best / baseline score ratio (time, cost inverted)
    SearchStats stats;
    bool cancelled = false;
    /// Which part of a sharded run this is (index of count; 0 of 1 when whole or merged).
    int shardIndex = 0, shardCount = 1;
    /// What was searched (searchFingerprint): shards of one run share it; empty = not recorded.
    std::string fingerprint;
};

/// Score of a result under an objective (higher is better).
double objectiveScore(Objective o, double tokensPerS, int gpus, double pricePerGpuHour,
                      double tokenBudget);

/// Canonical ordering key for deterministic ties.
bool candidateBefore(const Candidate& a, const Candidate& b);

SearchResult search(const Scenario& base, const SearchSpace& space, const SearchOptions& options);

/// Combine shard outputs into the result of one unsharded run.
SearchResult mergeResults(const std::vector<SearchResult>& shards, int topN);

/// Evaluate one strategy as a candidate (no memory filter).
Candidate evaluateCandidate(const Scenario& s, Objective o, double tokenBudget);
/// The same from a result already evaluated for `s`.
Candidate candidateFromResult(const Scenario& s, const Result& r, Objective o,
                              double tokenBudget);

/// Parse "tp=8,pp=16,vp=2,mb=1,zero=1,recompute=selective,sp=1,overlap=0,cp=1" onto a strategy
/// (unnamed fields keep the scenario's); dp follows from the GPU count. Throws InputError.
Strategy parseStrategySpec(const std::string& spec, const Scenario& s);
/// Parse "tp=1,2,4,8" into the space. Throws InputError.
void parseRestriction(const std::string& spec, SearchSpace& space);
/// Why `space` asks for what `base`'s system cannot hold (a GPU count beyond its outermost
/// tier), or nothing. search() refuses such a space with this reason rather than skip it.
std::optional<std::string> explainSearchSpace(const Scenario& base, const SearchSpace& space);
/// Why `o` is not an objective `base`'s search can rank by (time and cost to train a token
/// budget are a transformer training search's; serving and DLRM plan searches rank
/// throughput), or nothing. search(), sweeps and the Pareto refuse it with this reason.
std::optional<std::string> explainObjective(const Scenario& base, Objective o);
std::string strategySpec(const Strategy& st);
/// A candidate's strategy in one line: strategySpec; a DLRM's plan
/// ("emb=tw,cw,…,group=0,pipeline=1,kernels=fused"); or a serving configuration
/// ("tp=1,pp=4,replicas=2,ep=1,etp=1,precision=fp8,batch=2102").
std::string candidateSpec(const Candidate& c);
/// A scenario's own strategy in one line, as candidateSpec writes a search's: strategySpec for
/// training, the serving configuration ("…,precision=fp8,batch=auto"), or a DLRM's plan by
/// table name (describePlan).
std::string scenarioSpec(const Scenario& s);
/// Whether two candidates run the same strategy: for a DLRM the same plan; for serving the
/// same degrees and precision (the batch follows from memory and the latency objectives).
bool sameStrategy(const Candidate& a, const Candidate& b);

} // namespace madmax
