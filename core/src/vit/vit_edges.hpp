// The vision transformer's stage edges: the patch projection with position embeddings on the
// first stage, the classifier on the class token on the last. Nothing vocabulary-parallel:
// no TP collective at the edges.
#pragma once

#include "transformer/layer.hpp"

namespace madmax::detail {

EdgeCosts vitEdgeCosts(const Scenario& s, const Shape& sh, const OpCoster& oc);

} // namespace madmax::detail
