// The vision transformer room (Dosovitskiy et al. 2021): a ViT is the transformer's layers
// between its own stage edges, the patch embedding and the classification head.
#include "vit/vit_edges.hpp"

namespace madmax::detail {

EdgeCosts vitEdgeCosts(const Scenario& s, const Shape& sh, const OpCoster& oc) {
    const Strategy& st = s.strategy;
    const Frozen& f = s.workload.frozen;
    EdgeCosts e = edgeCollectives(s);
    const double act = 2.0;
    const auto [belowTrains, headPasses] = headBackward(s);
    // ViT: the patch projection (a GEMM of C·p² → h per patch, replicated over TP) and the
    // position embeddings added; the backward needs its weight gradient only. The
    // classifier on the class token: norm, a GEMM per image, softmax + cross-entropy.
    const VitShape& v = s.model.vitShape;
    const double patch = double(v.channels) * v.patchSize * v.patchSize;
    const double rows = sh.T - st.microBatch; // the class tokens are not patches
    e.embedFwd = oc.gemm(rows, sh.h, patch) + oc.elementwise(3.0 * sh.T * sh.h * act);
    e.embedBwd = oc.gemm(patch, sh.h, rows) + oc.elementwise(2.0 * sh.T * sh.h * act);
    if (f.embedding) e.embedBwd = 0; // its weight gradient is all it computes
    const double images = st.microBatch, classes = double(v.classes);
    e.headFwd = oc.elementwise(2.0 * images * sh.h * act) + oc.gemm(images, classes, sh.h) +
                oc.elementwise(images * classes * (act + 4.0));
    e.headBwd = headPasses * oc.gemm(images, classes, sh.h) +
                oc.elementwise(images * classes * (4.0 + act)) +
                (belowTrains ? oc.elementwise(4.0 * images * sh.h * act) : 0.0);
    return e; // nothing vocabulary-parallel: no TP collective at the edges
}

} // namespace madmax::detail
