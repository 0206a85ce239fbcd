// Serving studies (issue #5): the latency–throughput curve of a configuration (batch swept), and
// the search for the configuration with the most output tokens/s per GPU (or per dollar) under
// TTFT and TPOT objectives.
#pragma once

#include "madmax/scenario.hpp"

#include <atomic>
#include <vector>

namespace madmax {

struct CurvePoint {
    int batch = 0;
    double ttftS = 0, tpotS = 0, e2eS = 0;
    double outputTokensPerSPerGpu = 0;
    bool fits = true;
    double load = 1;                  ///< the pool's mean load (a prefill pool's curve sweeps it)
    double promptTokensPerSPerGpu = 0; ///< a prefill pool's prompt tokens, cache hits included
};

/// TTFT, TPOT and throughput as the batch per replica grows (powers of two up to `maxBatch`,
/// default: twice the largest that fits), at the scenario's other settings. A disaggregated
/// prefill pool runs one pass at every load, so its curve sweeps the load instead (the
/// scenario's pass; kLoadCurve's loads and its own below 1): TTFT, the prompts' queueing included,
/// against prompt tokens/s per GPU.
std::vector<CurvePoint> latencyThroughputCurve(const Scenario& s, int maxBatch = 0);

/// The loads a prefill pool's curve visits, besides its own. Not 1: there the pool is saturated
/// and TTFT is its service alone, as offline (a wait that grows without bound is no point).
inline constexpr double kLoadCurve[] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98};

struct ServingCandidate {
    Scenario scenario; ///< the configuration (strategy, batch, precision)
    double outputTokensPerSPerGpu = 0, ttftS = 0, tpotS = 0, score = 0;
    int batch = 0;
};

struct ServingSearchOptions {
    double ttftObjectiveS = 0; ///< 0: none
    double tpotObjectiveS = 0; ///< 0: none
    bool perDollar = false;    ///< rank by output tokens per dollar instead of per GPU-second
    int topN = 10;
    std::vector<Precision> precisions; ///< empty: bf16, fp8 and fp4 where the GPU has a peak
    /// Restrictions (`madmax search --restrict`): the TP, PP and EP degrees to try (empty:
    /// every valid one).
    std::vector<int> tp, pp, ep;
    /// Speculative draft tokens per step to try (empty: the scenario's), at its acceptance rate.
    std::vector<int> draftTokens;
    const std::atomic<bool>* cancel = nullptr;
    int threads = 0; ///< 0: every hardware thread (the result does not depend on it)
};

struct ServingSearchResult {
    std::vector<ServingCandidate> top;
    /// The throughput/latency front serving planners draw: every feasible configuration that
    /// no other beats on both output tokens/s per GPU and TPOT, fastest TPOT first.
    std::vector<ServingCandidate> pareto;
    std::size_t evaluated = 0, feasible = 0;
};

/// A disaggregated deployment: a prefill pool and a decode pool (each its own scenario, any GPU
/// type and layout; workload.phase prefill and decode) sized so that neither waits on the other
/// (DistServe, Zhong et al. OSDI 2024 §4): the prefill pool's requests per second equal the
/// decode pool's. With r_p and r_d the requests per second per GPU of each, the share of GPUs on
/// prefill is r_d / (r_p + r_d); each pool is then rounded to whole replicas and expert-parallel
/// groups. Each pool's rate per GPU is its scenario's as given (its layout at its own GPU count).
struct PoolBalance {
    int prefillGpus = 0, decodeGpus = 0;
    double prefillShare = 0;      ///< the balanced share before rounding: r_d / (r_p + r_d)
    double requestsPerS = 0;      ///< the slower pool's, after rounding
    double outputTokensPerS = 0;  ///< requests/s × output tokens
    double outputTokensPerSPerGpu = 0;
    double ttftS = 0, tpotS = 0;  ///< prefill pool's TTFT (with the KV transfer) + the decode
                                  ///< pool's share; the decode pool's TPOT
};
/// Balance `prefill` and `decode` pools over `totalGpus`. Throws InputError when the scenarios
/// are not a prefill and a decode pool of the same model and request lengths, or when no split
/// leaves each pool a whole replica.
PoolBalance balancePools(const Scenario& prefill, const Scenario& decode, int totalGpus);

/// Every TP (dividing the heads, within the scale-up domain), PP (dividing the layers),
/// replica count, precision and batch (the largest that fits, or that meets the objectives).
ServingSearchResult searchServing(const Scenario& base, const ServingSearchOptions& options);

/// The same GPUs disaggregated (DistServe, Zhong et al. OSDI 2024): the best prefill-pool
/// layout and the best decode-pool layout, each searched as above with workload.phase set on
/// half the GPUs (the prefill pool against the TTFT objective, the decode pool against TPOT),
/// then sized by
/// balancePools so that neither waits on the other. `found` false, with `why`, when either pool
/// has no feasible layout or no split leaves each pool a whole replica.
struct DisaggregatedPlan {
    bool found = false;
    std::string why;
    ServingCandidate prefill, decode; ///< each pool's layout (its scenario at the full GPU count)
    PoolBalance pools;
    std::size_t evaluated = 0;
};
DisaggregatedPlan searchDisaggregated(const Scenario& base, const ServingSearchOptions& options);

} // namespace madmax
