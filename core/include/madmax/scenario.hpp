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
