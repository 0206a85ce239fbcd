// Shared vocabulary of the cost engine: precisions, parallel dimensions, collectives.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace madmax {

enum class Precision : std::uint8_t { FP32, FP16, BF16, FP8, FP4 };
inline constexpr int kPrecisionCount = 5;

/// Bytes per element of a tensor stored in this precision.
constexpr double bytesPerElement(Precision p) {
    switch (p) {
    case Precision::FP32:
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

enum class PipelineSchedule : std::uint8_t { OneFOneB, Interleaved };
std::string_view toString(PipelineSchedule s);
std::optional<PipelineSchedule> parsePipelineSchedule(std::string_view s);

/// How the attention core is computed. Flash attention (Dao et al. 2022) never materialises the
/// s x s score matrix; the unfused kernel of 2021-22 Megatron does (Korthikanti et al. 2022 §4.1).
enum class AttentionKernel : std::uint8_t { Flash, Unfused };
std::string_view toString(AttentionKernel k);
std::optional<AttentionKernel> parseAttentionKernel(std::string_view s);

enum class Optimizer : std::uint8_t { Adam, SGD };
std::string_view toString(Optimizer o);
std::optional<Optimizer> parseOptimizer(std::string_view s);

} // namespace madmax
