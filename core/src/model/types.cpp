#include "madmax/types.hpp"
#include "madmax/workload.hpp"

#include <cmath>

namespace madmax {

std::string_view toString(Precision p) {
    switch (p) {
    case Precision::FP32:
        return "fp32";
    case Precision::FP16:
        return "fp16";
    case Precision::BF16:
        return "bf16";
    case Precision::FP8:
        return "fp8";
    case Precision::FP4:
        return "fp4";
    case Precision::TF32:
        return "tf32";
    }
    return "?";
}
std::optional<Precision> parsePrecision(std::string_view s) {
    for (int i = 0; i < kPrecisionCount; ++i)
        if (toString(Precision(i)) == s) return Precision(i);
    return std::nullopt;
}

std::string_view toString(ParallelDim d) {
    switch (d) {
    case ParallelDim::TP:
        return "tp";
    case ParallelDim::CP:
        return "cp";
    case ParallelDim::EP:
        return "ep";
    case ParallelDim::DP:
        return "dp";
    case ParallelDim::PP:
        return "pp";
    }
    return "?";
}
std::optional<ParallelDim> parseParallelDim(std::string_view s) {
    for (int i = 0; i < kParallelDimCount; ++i)
        if (toString(ParallelDim(i)) == s) return ParallelDim(i);
    return std::nullopt;
}

std::string_view toString(Collective c) {
    switch (c) {
    case Collective::AllReduce:
        return "all_reduce";
    case Collective::AllGather:
        return "all_gather";
    case Collective::ReduceScatter:
        return "reduce_scatter";
    case Collective::AllToAll:
        return "all_to_all";
    case Collective::P2P:
        return "p2p";
    }
    return "?";
}

std::string_view toString(Recompute r) {
    switch (r) {
    case Recompute::None:
        return "none";
    case Recompute::Selective:
        return "selective";
    case Recompute::Full:
        return "full";
    }
    return "?";
}
std::optional<Recompute> parseRecompute(std::string_view s) {
    for (int i = 0; i < 3; ++i)
        if (toString(Recompute(i)) == s) return Recompute(i);
    return std::nullopt;
}

std::string_view toString(FsdpStyle f) {
    return f == FsdpStyle::DeepSpeedLegacy ? "deepspeed-legacy" : "overlapped";
}

std::optional<FsdpStyle> parseFsdpStyle(std::string_view s) {
    for (FsdpStyle f : {FsdpStyle::Overlapped, FsdpStyle::DeepSpeedLegacy})
        if (toString(f) == s) return f;
    return std::nullopt;
}

std::string_view toString(PipelineSchedule s) {
    switch (s) {
    case PipelineSchedule::OneFOneB: return "1f1b";
    case PipelineSchedule::Interleaved: return "interleaved";
    case PipelineSchedule::ZeroBubble: return "zero_bubble";
    case PipelineSchedule::DualPipe: return "dualpipe";
    case PipelineSchedule::DeepSpeed: return "deepspeed";
    }
    return "?";
}
std::optional<PipelineSchedule> parsePipelineSchedule(std::string_view s) {
    for (int i = 0; i < kPipelineScheduleCount; ++i)
        if (s == toString(PipelineSchedule(i))) return PipelineSchedule(i);
    return std::nullopt;
}

std::string_view toString(LowPrecisionScaling k) {
    switch (k) {
    case LowPrecisionScaling::Delayed: return "delayed";
    case LowPrecisionScaling::Current: return "current";
    case LowPrecisionScaling::Block: return "block";
    }
    return "delayed";
}
std::string_view toString(LoraTargets t) {
    switch (t) {
    case LoraTargets::All: return "all";
    case LoraTargets::Attention: return "attention";
    case LoraTargets::Mlp: return "mlp";
    }
    return "all";
}
std::optional<LowPrecisionScaling> parseLowPrecisionScaling(std::string_view s) {
    if (s == "delayed") return LowPrecisionScaling::Delayed;
    if (s == "current") return LowPrecisionScaling::Current;
    if (s == "block") return LowPrecisionScaling::Block;
    return std::nullopt;
}
double castBytesPerElement(LowPrecisionScaling k) {
    constexpr double castTranspose = 2.0 + 1.0 + 1.0; // read bf16, write row-wise + transposed
    switch (k) {
    case LowPrecisionScaling::Delayed: return castTranspose;
    case LowPrecisionScaling::Current: return castTranspose + 2.0; // + the amax read
    case LowPrecisionScaling::Block: return castTranspose + 2.0 / 32.0; // + E8M0 scale per 32, ×2
    }
    return castTranspose;
}

std::string_view toString(AttentionKernel k) {
    return k == AttentionKernel::Flash ? "flash" : "unfused";
}
std::optional<AttentionKernel> parseAttentionKernel(std::string_view s) {
    if (s == "flash") return AttentionKernel::Flash;
    if (s == "unfused") return AttentionKernel::Unfused;
    return std::nullopt;
}

std::string_view toString(Optimizer o) {
    return o == Optimizer::Adam ? "adam" : "sgd";
}
std::optional<Optimizer> parseOptimizer(std::string_view s) {
    if (s == "adam") return Optimizer::Adam;
    if (s == "sgd") return Optimizer::SGD;
    return std::nullopt;
}

std::string_view toString(LengthDistribution d) {
    switch (d) {
    case LengthDistribution::Fixed:
        return "fixed";
    case LengthDistribution::Uniform:
        return "uniform";
    case LengthDistribution::Exponential:
        return "exponential";
    }
    return "?";
}

std::string_view toString(ServingPhase p) {
    switch (p) {
    case ServingPhase::Aggregated: return "aggregated";
    case ServingPhase::Prefill: return "prefill";
    case ServingPhase::Decode: return "decode";
    }
    return "?";
}

std::string_view toString(PrefixCacheTier t) {
    switch (t) {
    case PrefixCacheTier::Gpu: return "gpu";
    case PrefixCacheTier::Host: return "host";
    }
    return "?";
}

std::string_view toString(MlaDecode m) {
    switch (m) {
    case MlaDecode::Absorbed: return "absorbed";
    case MlaDecode::Expanded: return "expanded";
    }
    return "?";
}

double InferenceWorkload::tokensPerStep() const {
    if (draftTokens <= 0) return 1.0;
    const double a = acceptanceRate;
    if (a >= 1.0) return draftTokens + 1.0;
    return (1.0 - std::pow(a, draftTokens + 1)) / (1.0 - a);
}

} // namespace madmax
