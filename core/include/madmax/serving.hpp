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
};

/// TTFT, TPOT and throughput as the batch per replica grows (powers of two up to `maxBatch`,
/// default: twice the largest that fits), at the scenario's other settings.
std::vector<CurvePoint> latencyThroughputCurve(const Scenario& s, int maxBatch = 0);

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
    const std::atomic<bool>* cancel = nullptr;
};

struct ServingSearchResult {
    std::vector<ServingCandidate> top;
    std::size_t evaluated = 0, feasible = 0;
};

/// Every TP (dividing the heads, within the scale-up domain), PP (dividing the layers),
/// replica count, precision and batch (the largest that fits, or that meets the objectives).
ServingSearchResult searchServing(const Scenario& base, const ServingSearchOptions& options);

} // namespace madmax
