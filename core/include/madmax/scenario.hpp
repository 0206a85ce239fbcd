// A scenario: model + system + strategy + workload on a number of GPUs.
#pragma once

#include "madmax/model.hpp"
#include "madmax/strategy.hpp"
#include "madmax/system.hpp"
#include "madmax/workload.hpp"

#include <optional>
#include <span>
#include <string>

namespace madmax {

struct Scenario {
    std::string name;
    Model model;
    System system;
    Strategy strategy;
    Workload workload;
    int gpus = 0;
};

/// Why a scenario cannot be evaluated, as a sentence that names the field and the fix; nothing
/// when it is valid. Allocates only when it has something to say.
std::optional<std::string> explainInvalid(const Scenario& s);

/// What keeps `layers` offloaded layers (strategy.offload_layers) from running on `s`: Megatron-
/// Core's rules for cpu_offloading and the engine's own; None when they can. The one owner of
/// these rules: explainInvalid() words them, the search asks without allocating.
enum class OffloadBlock : std::uint8_t {
    None,
    Inference,  ///< offloading applies to training
    TooMany,    ///< the last layer's activations stay: fewer than the model's layers
    Pipeline,   ///< Megatron-Core offloads without pipeline parallelism only
    Recompute,  ///< nor with activation recompute
    CudaGraphs, ///< nor inside CUDA graphs
    Frozen,     ///< with frozen layers: not modelled
    NoHostLink, ///< system.host_link_gbps is needed
};
OffloadBlock offloadBlock(const Scenario& s, int layers);

/// A rule explainInvalid() applies across fields, by the dotted path of the field it constrains
/// ('*' matches one path segment): what editors show next to the parser's own range.
struct CrossFieldRule {
    const char* path;
    const char* rule;
};
std::span<const CrossFieldRule> crossFieldRules();

/// Micro-batches per DP replica per step: global batch / (dp · micro-batch).
inline int microBatchesPerStep(const Scenario& s) {
    return int(s.workload.globalBatch / (1LL * s.strategy.dp * s.strategy.microBatch));
}

} // namespace madmax
