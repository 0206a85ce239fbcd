// Mixture-of-experts figures a user or a study asks of the MoE room directly.
#pragma once

#include "madmax/model.hpp"

namespace madmax {

/// Share of routed token copies a capacity factor drops, for expert loads spread evenly between
/// (2 − I) and I times the mean (I = the load imbalance); 0 when dropless or balanced.
double tokenDropRate(const MoeShape& moe);

} // namespace madmax
