// Parts of a strategy's parsing kept apart from scenario_parse.cpp by concept: the DLRM
// embedding plan.
#pragma once

#include "madmax/json_reader.hpp"
#include "madmax/strategy.hpp"

#include <string>

namespace madmax::detail {

/// DLRM: the embedding plan (explainInvalid refuses it for other models): sharding per table
/// group, 2-D group size, sparse pipelining, fused or per-table kernels.
void parseEmbPlan(ObjectReader& r, const std::string& file, Strategy& st);

} // namespace madmax::detail
