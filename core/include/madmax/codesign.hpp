// Hardware co-design (issue #4): scale a hardware knob (or a grid of two), re-run the search at
// every point — the best strategy changes with the hardware — and report the best throughput,
// its strategy and the speedup over the unscaled system; the ×2 / ×0.5 sensitivity of every knob;
// and the time, GPU-hours, cost and energy to train a token budget.
#pragma once

#include "madmax/search.hpp"

#include <string>
#include <vector>

namespace madmax {

/// Knob names: flops, hbm_bw, hbm_capacity, scale_up_bw, scale_out_bw, scale_up_latency,
/// scale_out_latency, tier<K>_bw, tier<K>_latency, scale_up_domain, host_speed (how fast the
/// host issues kernels), sfu_exp (the special-function units' exponential rate; "flops" scales
/// the tensor cores only), gpus.
std::vector<std::string> knobNames(const System& sys);
/// The hardware knobs a sensitivity (tornado) run varies by default: every one of knobNames
/// that applies to any system, except the GPU count and per-tier knobs.
const std::vector<std::string>& sensitivityKnobs();
/// Those of sensitivityKnobs that `sys` has (sfu_exp needs the GPU's exponential rate).
std::vector<std::string> sensitivityKnobs(const System& sys);
/// The scenario with `knob` scaled by `factor`. Throws InputError for an unknown knob or factor.
Scenario scaleKnob(const Scenario& s, const std::string& knob, double factor);

struct KnobAxis {
    std::string knob;
    std::vector<double> factors;
};
/// Parse "hbm_bw=0.5,1,2". Throws InputError.
KnobAxis parseKnobAxis(const std::string& spec);

struct SweepPoint {
    std::size_t index = 0;       ///< position in the grid (row-major over the axes)
    std::vector<double> factors; ///< one per axis
    bool feasible = false;       ///< some configuration fits
    Candidate best;
    double speedup = 0; ///< best score / the unscaled system's best score
    SearchStats stats;
    /// When not feasible, why (as ResourcePoint::whyNone).
    std::string whyNone;
};

struct SweepResult {
    std::vector<KnobAxis> axes;
    Candidate unscaled; ///< the best strategy on the unscaled system
    std::vector<SweepPoint> points;
    /// Indices of points where the best strategy differs from the previous point along the
    /// last axis (the markers on a speedup-vs-factor line).
    std::vector<std::size_t> strategyChanges() const;
};

SweepResult sweep(const Scenario& base, const std::vector<KnobAxis>& axes, const SearchSpace& space,
                  const SearchOptions& options);
SweepResult mergeSweeps(const std::vector<SweepResult>& shards);

struct Sensitivity {
    std::string knob;
    double speedupHalf = 0;   ///< best at ×0.5 over best at ×1
    double speedupDouble = 0; ///< best at ×2 over best at ×1
};
/// The tornado chart's data: ×0.5 and ×2 of every knob (or of `knobs`), sorted by impact.
std::vector<Sensitivity> sensitivity(const Scenario& base, const SearchSpace& space,
                                     const SearchOptions& options,
                                     std::vector<std::string> knobs = {});

/// MAD-Max's Figure 1, resource against performance: each point is a system at a GPU count
/// with the best strategy the search finds there (DLRM: the best sharding plan), at the
/// scenario's global batch. A point is on a front when no other feasible point reaches at
/// least its throughput with no more GPUs (or no more dollars per hour).
struct ResourcePoint {
    std::string systemId, systemName;
    int gpus = 0;
    double pricePerGpuHour = 0; ///< 0: the system preset states no price
    bool feasible = false;      ///< some strategy fits in memory
    /// When not feasible, why: none fits in memory, or no valid strategy at this count.
    std::string whyNone;
    Candidate best;             ///< tokensPerS is samples/s for a DLRM
    /// The best strategy in words: strategySpec, or a DLRM's sharding plan (describePlan);
    /// empty when not feasible.
    std::string spec;
    bool frontGpus = false, frontDollars = false;
    double dollarsPerHour() const { return gpus * pricePerGpuHour; }
    /// Dollars per million tokens (samples for a DLRM); 0 without a price or a feasible point.
    double dollarsPerMillion() const {
        return feasible && pricePerGpuHour > 0 && best.tokensPerS > 0
                   ? dollarsPerHour() / 3600.0 / best.tokensPerS * 1e6
                   : 0.0;
    }
};

struct ResourceSystem {
    std::string id; ///< preset id (or "scenario" for the scenario's own system)
    System system;
};

struct ResourcePareto {
    std::string unit;    ///< "tokens/s" or "samples/s"
    bool priced = false; ///< every system states a price: the dollar axis is meaningful
    std::vector<ResourcePoint> points; ///< by system, then GPU count
};

/// A system preset by id, or a path to a system preset file, for resourcePareto. Throws
/// InputError naming the id (with the nearest preset) or the file and field.
ResourceSystem loadResourceSystem(const std::string& idOrPath);

/// The points for every system (empty: the scenario's) at every GPU count (empty: the
/// scenario's count × 1/8 … ×4), each searched; then both fronts. Throws InputError for a GPU
/// count below 1.
ResourcePareto resourcePareto(const Scenario& base, const std::vector<ResourceSystem>& systems,
                              const std::vector<int>& gpuCounts, const SearchSpace& space,
                              const SearchOptions& options);

struct TrainingCost {
    double seconds = 0, gpuHours = 0, dollars = 0, energyKWh = 0;
};
/// Time, GPU-hours, cost (system price per GPU-hour) and GPU energy (board power) to train
/// `tokenBudget` tokens at `tokensPerS` on `gpus` GPUs.
TrainingCost trainingCost(const System& sys, int gpus, double tokensPerS, double tokenBudget);

} // namespace madmax
