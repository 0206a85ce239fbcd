// The costs of a serving pass by cause, and the prefill passes a serving search keeps across
// configurations.
#pragma once

#include "engine/op_cost.hpp"
#include "madmax/layer_gemms.hpp"
#include "madmax/types.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace madmax::detail::serving {

struct Costs {
    double weight = 0, kv = 0, compute = 0, comm = 0, overhead = 0;
    double a2a = 0; ///< of comm: MoE dispatch and combine
    /// Both sides of each roofline, whichever bound it (not in total()): GEMMs' weight reads and
    /// their math; the attention core's KV-cache reads and its math.
    double weightSide = 0, gemmSide = 0, kvSide = 0, attentionSide = 0;
    double total() const { return weight + kv + compute + comm + overhead; }
    Costs& operator+=(const Costs& o) {
        weight += o.weight, kv += o.kv, compute += o.compute, comm += o.comm,
            overhead += o.overhead, a2a += o.a2a;
        weightSide += o.weightSide, gemmSide += o.gemmSide, kvSide += o.kvSide,
            attentionSide += o.attentionSide;
        return *this;
    }
    Costs scaled(double f) const {
        // (Field by field: through a list of the fields' addresses the compiler kept the loop.)
        return {weight * f, kv * f,         compute * f,  comm * f,   overhead * f,
                a2a * f,    weightSide * f, gemmSide * f, kvSide * f, attentionSide * f};
    }
};

/// A weight GEMM's shape and log2 of its FLOPs per row at the efficiency key (the 16-bit peak
/// ÷ this precision's: op_cost.hpp's GemmPrecision::efficiencyKey), fixed for a replica.
struct Weight {
    GemmShape g;
    double log2KeyedFlopsPerRow = 0;
    bool sixteenBit = false; ///< kept in 16 bits below a 16-bit checkpoint (the head, the router)
    detail::GemmRates rates; ///< its bounds per row at its precision (op_cost.hpp)
    Weight() = default;
    Weight(const GemmShape& shape, double key, const detail::GemmRates& r, bool sixteen = false)
        : g(shape), log2KeyedFlopsPerRow(std::log2(shape.flopsPerRow() * (sixteen ? 1.0 : key))),
          sixteenBit(sixteen), rates(r) {}
};

/// A layer's weight GEMMs on one GPU (layer_gemms.hpp): the attention projections
/// (`projections` of them) and output, the dense MLP's, a routed expert's, the shared
/// experts', the router and the LM head.
struct WeightSet {
    std::array<Weight, 4> attnProj;
    int projections = 0;
    Weight attnOut, mlpUp, mlpDown, expertUp, expertDown, sharedUp, sharedDown, router, head;
};

/// The last `Slots` values kept by key, the oldest replaced first; a linear search (a handful
/// of slots, compared in a few instructions each).
template <typename Key, typename Value, int Slots>
class KeptRing {
  public:
    const Value* find(const Key& k) const {
        for (int i = 0; i < count_; ++i)
            if (keys_[std::size_t(i)] == k) return &values_[std::size_t(i)];
        return nullptr;
    }
    void add(const Key& k, const Value& v) {
        keys_[std::size_t(next_)] = k;
        values_[std::size_t(next_)] = v;
        next_ = (next_ + 1) % Slots;
        count_ = std::min(count_ + 1, Slots);
    }

  private:
    std::array<Key, Slots> keys_{};
    std::array<Value, Slots> values_{};
    int count_ = 0, next_ = 0;
};

/// Prefill passes of the fullest stage (one prompt for TTFT, a chunk of prompts for an
/// aggregated round) kept across a serving search's configurations. A pass depends on the
/// layout and precisions in the key and on the scenario's model, system and request shape,
/// which one search never changes; it does not depend on the draft length, so the configurations
/// that differ in it alone (four of them in a search over 0-3 drafts) cost each pass once.
/// It keeps the replicas' weight GEMMs the same way. One search thread's (not shared between
/// threads).
class PrefillMemo {
  public:
    struct Key {
        int tp = 0, pp = 0, dp = 0, ep = 0, etp = 0, redundantExperts = 0;
        Precision math{}, weights{}, kv{};
        double rows = 0, context = 0, headRows = 0;
        bool operator==(const Key&) const = default;
    };
    const Costs* find(const Key& k) const { return passes_.find(k); }
    void add(const Key& k, const Costs& c) { passes_.add(k, c); }

    /// A replica's weight GEMMs (WeightSet) depend on the model and the GPU, which one search
    /// never changes, and on these: the TP and expert-TP degrees, the efficiency key of the
    /// GEMMs' precision (its peak), the weights' bytes, the low-precision scale, and whether
    /// the head and router stay in 16 bits.
    struct WeightKey {
        int tp = 0, etp = 0;
        double efficiencyKey = 0, weightBytes = 0, scale = 0;
        bool sixteenBitHead = false;
        bool operator==(const WeightKey&) const = default;
    };
    const WeightSet* findWeights(const WeightKey& k) const { return weights_.find(k); }
    void addWeights(const WeightKey& k, const WeightSet& w) { weights_.add(k, w); }

  private:
    KeptRing<Key, Costs, 8> passes_;         ///< the prompt and the chunk pass of each precision
    KeptRing<WeightKey, WeightSet, 4> weights_; ///< a layout's precisions (BF16, FP8, FP4)
};

} // namespace madmax::detail::serving
