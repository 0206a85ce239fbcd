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

} // namespace madmax::detail
