// What the design-space search and its merging share: the Pareto fronts and the rates.
#pragma once

#include "madmax/search.hpp"

#include <vector>

namespace madmax::detail {

/// Candidates per second, enumerated and timed, from the counts and seconds.
void setRates(SearchStats& st);
/// The Pareto front of throughput (score) vs memory headroom: best first.
std::vector<Candidate> paretoMemory(std::vector<Candidate> pts);
std::vector<Candidate> paretoLatency(std::vector<Candidate> pts);
/// The front of throughput vs GPU count: fewest GPUs first, each faster than every smaller one.
std::vector<Candidate> paretoGpus(std::vector<Candidate> pts);
/// An inference scenario's design space is the serving search's (TP × PP × replicas ×
/// precision, each at its best batch under the scenario's TTFT / TPOT objectives), reported in
/// the training search's shape so the design-space and co-design views, `madmax sweep` and
/// `merge` treat both workloads alike (serving_search.cpp).
SearchResult servingDesignSpace(const Scenario& base, const SearchSpace& space,
                                const SearchOptions& opt);

} // namespace madmax::detail
