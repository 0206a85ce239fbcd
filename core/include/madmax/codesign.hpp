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
/// scale_out_latency, tier<K>_bw, tier<K>_latency, scale_up_domain, gpus.
std::vector<std::string> knobNames(const System& sys);
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

struct TrainingCost {
    double seconds = 0, gpuHours = 0, dollars = 0, energyKWh = 0;
};
/// Time, GPU-hours, cost (system price per GPU-hour) and GPU energy (board power) to train
/// `tokenBudget` tokens at `tokensPerS` on `gpus` GPUs.
TrainingCost trainingCost(const System& sys, int gpus, double tokensPerS, double tokenBudget);

} // namespace madmax
