// What is being done: training with a global batch, sequence length, precision and optimizer.
#pragma once

#include "madmax/types.hpp"

namespace madmax {

enum class WorkloadKind : std::uint8_t { Training }; // Inference arrives with its issue.

struct Workload {
    WorkloadKind kind = WorkloadKind::Training;
    int globalBatch = 0; ///< sequences per optimizer step
    int seqLen = 0;
    Precision precision = Precision::BF16; ///< GEMM math precision
    Precision gradReducePrecision = Precision::BF16;
    Optimizer optimizer = Optimizer::Adam;
    AttentionKernel attention = AttentionKernel::Flash;
};

} // namespace madmax
