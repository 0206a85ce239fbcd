// Shared vocabulary of the cost engine: precisions, parallel dimensions, collectives.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace madmax {

/// TF32: fp32 tensors, GEMMs on the tensor cores' TF32 path (Ampere and later; what TensorFlow
/// and cuDNN use for "fp32" training there by default).
enum class Precision : std::uint8_t { FP32, FP16, BF16, FP8, FP4, TF32 };
inline constexpr int kPrecisionCount = 6;

/// Bytes per element of a tensor stored in this precision.
constexpr double bytesPerElement(Precision p) {
    switch (p) {
    case Precision::FP32:
    case Precision::TF32:
        return 4.0;
    case Precision::FP16:
    case Precision::BF16:
        return 2.0;
    case Precision::FP8:
        return 1.0;
    case Precision::FP4:
        return 0.5;
    }
    return 2.0;
}

std::string_view toString(Precision p);
std::optional<Precision> parsePrecision(std::string_view s);

/// Parallel dimensions that own communication groups. Order is the JSON/report order.
enum class ParallelDim : std::uint8_t { TP, CP, EP, DP, PP };
inline constexpr int kParallelDimCount = 5;
std::string_view toString(ParallelDim d);
std::optional<ParallelDim> parseParallelDim(std::string_view s);

enum class Collective : std::uint8_t { AllReduce, AllGather, ReduceScatter, AllToAll, P2P };
inline constexpr int kCollectiveCount = 5;
std::string_view toString(Collective c);

enum class Recompute : std::uint8_t { None, Selective, Full };
std::string_view toString(Recompute r);
std::optional<Recompute> parseRecompute(std::string_view s);

/// ZeRO-3's parameter coordinator (Strategy::fsdpStyle): "overlapped" or "deepspeed-legacy".
enum class FsdpStyle : std::uint8_t {
    Overlapped,      ///< gathers and reduce-scatters behind the compute (FSDP, Megatron, DeepSpeed ≥ 0.6)
    DeepSpeedLegacy, ///< DeepSpeed stage 3 up to v0.5.10: per-module host syncs, one bucket ahead
};
std::string_view toString(FsdpStyle f);
std::optional<FsdpStyle> parseFsdpStyle(std::string_view s);

/// Pipeline schedules (madmax/pipeline_schedule.hpp owns what each costs): 1F1B, interleaved
/// 1F1B, zero-bubble ZB-H1 (Qi et al., ICLR 2024), DeepSeek-V3's bidirectional DualPipe and
/// DeepSpeed's lock-step 1F1B (its pipeline engine's TrainSchedule).
enum class PipelineSchedule : std::uint8_t { OneFOneB, Interleaved, ZeroBubble, DualPipe, DeepSpeed };
/// How many schedules there are (the enum's values run 0 … count − 1).
inline constexpr int kPipelineScheduleCount = int(PipelineSchedule::DeepSpeed) + 1;
std::string_view toString(PipelineSchedule s);
std::optional<PipelineSchedule> parsePipelineSchedule(std::string_view s);

/// How the attention core is computed. Flash attention (Dao et al. 2022) never materialises the
/// s x s score matrix; the unfused kernel of 2021-22 Megatron does (Korthikanti et al. 2022 §4.1).
enum class AttentionKernel : std::uint8_t { Flash, Unfused };
std::string_view toString(AttentionKernel k);
std::optional<AttentionKernel> parseAttentionKernel(std::string_view s);

/// How GEMM inputs are scaled when the GEMMs run below 16 bits (Transformer Engine recipes).
/// Delayed: the scale comes from an amax history, the cast (row-wise and transposed copies)
/// is one pass. Current: a pass over the tensor finds its amax first. Block: per-block scales
/// (MXFP8, NVFP4 on Blackwell), quantised row-wise and column-wise in one pass.
enum class LowPrecisionScaling : std::uint8_t { Delayed, Current, Block };
std::string_view toString(LowPrecisionScaling k);
std::optional<LowPrecisionScaling> parseLowPrecisionScaling(std::string_view s);
/// HBM bytes moved per element of a 16-bit GEMM input to produce its low-precision operands
/// for a training step: read 2 B, write a row-wise and a transposed 1-byte copy (the backward
/// GEMMs need the transpose), plus the amax pass (current) or the block scales (block).
double castBytesPerElement(LowPrecisionScaling k);

enum class Optimizer : std::uint8_t { Adam, SGD };
std::string_view toString(Optimizer o);
std::optional<Optimizer> parseOptimizer(std::string_view s);

} // namespace madmax
