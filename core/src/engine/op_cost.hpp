// Per-op time on one GPU, shared by the training and inference engines.
#pragma once

#include "madmax/system.hpp"

#include <algorithm>

namespace madmax::detail {

/// Per-op time on one GPU (MODEL.md §2): max(FLOPs / (peak·η_c), bytes / (BW·η_m)) + launch.
struct OpCoster {
    const Gpu& gpu;
    double peak;   ///< of the workload's GEMM precision
    double peak16; ///< attention runs in 16-bit even in FP8 training (Transformer Engine)
    double elemBytes;
    double gemmScale; ///< calibration's low-precision scale when the GEMMs run below 16 bits

    double memoryTime(double bytes) const {
        return bytes / (gpu.hbmBytesPerS * gpu.calibration.memoryEfficiency);
    }
    double gemm(double M, double N, double K) const {
        const double flops = 2.0 * M * N * K;
        const double bytes = (M * K + K * N) * elemBytes + M * N * 2.0;
        const double eta = gpu.calibration.gemmEfficiency(flops) * gemmScale;
        return std::max(flops / (peak * eta), memoryTime(bytes)) + gpu.calibration.kernelLaunchS;
    }
    double elementwise(double bytes) const {
        return memoryTime(bytes) + gpu.calibration.kernelLaunchS;
    }
    double flashAttention(double flops) const {
        return flops / (peak16 * gpu.calibration.attentionEfficiency) +
               gpu.calibration.kernelLaunchS;
    }
};

} // namespace madmax::detail
