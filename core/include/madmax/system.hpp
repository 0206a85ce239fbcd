// What it runs on: the GPU, its memory, and the network tiers from NVLink outwards.
#pragma once

#include "madmax/curve.hpp"
#include "madmax/types.hpp"

#include <array>
#include <string>
#include <vector>

namespace madmax {

/// Achievable fractions of datasheet peaks, fitted to public measurements (see presets/gpus).
struct ComputeCalibration {
    LogCurve gemmEfficiency;          ///< fraction of peak FLOP/s vs FLOPs of one GEMM
    double attentionEfficiency = 0.5; ///< fused attention kernel, fraction of 16-bit peak
    double memoryEfficiency = 0.8;    ///< fraction of HBM bandwidth for streaming kernels
    double kernelLaunchS = 4e-6;      ///< fixed cost per kernel (launch + tail)
    /// Serving: FP8/FP4 GEMMs (TensorRT-LLM) reach this share of the 16-bit GEMM efficiency
    /// of equal ideal time. Training does not use it: there the casts of Transformer Engine are
    /// modelled as their own memory passes (Workload::lowPrecisionScaling, docs/developer/model.md §2).
    double lowPrecisionGemmScale = 1.0;
    /// Serving: fraction of HBM bandwidth that decode reaches (weight and paged-KV reads).
    double decodeMemoryEfficiency = 0.8;
    /// Serving: absorbed MLA decode attention (its own kernel, FlashMLA, which attends the
    /// cached latent), as a fraction of the 16-bit peak and of HBM bandwidth. When a GPU's
    /// calibration does not give them, the fused attention's and decode's own.
    double mlaDecodeEfficiency = 0.5;
    double mlaDecodeMemoryEfficiency = 0.8;
    /// Serving: fixed cost per kernel in a decode step (CUDA graphs make it small).
    double decodeKernelOverheadS = 1.5e-6;
    /// Serving: fraction of the memory left after weights that the engine gives the KV cache.
    double kvCacheFraction = 0.9;
    /// Host (CPU) time to issue one kernel from an eager framework (PyTorch + Megatron/TE op
    /// dispatch and launch). The host runs ahead of the GPU except across a host sync; where it
    /// is slower the GPU idles (MoE layers: many small kernels and a sync per layer).
    double hostOpS = 0;
    /// Fixed cost of one MoE dispatch/combine kernel call (launch, barrier, layout exchange).
    double allToAllOverheadS = 25e-6;
    /// The fraction of the scale-up tier's per-direction line rate at which DeepEP's kernels
    /// move tokens inside an NVLink domain: SM-issued stores into each peer's receive ring, with
    /// per-chunk flow control, which reach less of the link than NCCL's protocol does (NCCL's
    /// all-to-all streams at the tier's own large-message efficiency).
    double deepEpScaleUpEfficiency = 0.736;
    /// The attention kernel of the published runs this calibration was fitted to; validation
    /// assumes it for cases that do not say (the engine's own default is the workload's).
    AttentionKernel referenceAttention = AttentionKernel::Flash;
};

/// Default latency and efficiency of a link generation, used by tiers that do not set their own.
struct LinkCalibration {
    double latencyS = 5e-6;
    LogCurve efficiency = defaultEfficiency();
    double allReduceSpeedup = 1;
    /// A flat all-to-all's share of the tier's efficiency (allToAllEfficiency on NetworkTier).
    double allToAllEfficiency = 1;
    /// 0.8 at every size; one table shared by every default-built GPU (a search builds many).
    static LogCurve defaultEfficiency() {
        static const LogCurve k = LogCurve::constant(0.8);
        return k;
    }
};

struct Gpu {
    std::string id;
    std::string name;
    std::string source;
    /// Dense peak FLOP/s per precision, indexed by Precision; 0 = unsupported.
    std::array<double, kPrecisionCount> peakFlops{};
    double hbmBytes = 0;
    double hbmBytesPerS = 0;
    /// Exponentials per second of the special-function units (MUFU.EX2: SMs × 16 per clock,
    /// 32 on Blackwell Ultra, at the clock of the tensor peak). Softmax needs one per attention
    /// score, so on a GPU whose tensor cores outgrew them (Blackwell at head dim ≤ 128) they,
    /// not the tensor cores, bound fused attention (FlashAttention-4, Zadouri et al. 2026).
    /// 0 = not given: attention is priced on the tensor cores alone.
    double expPerS = 0;
    ComputeCalibration calibration;
    LinkCalibration scaleUpLink;  ///< NVLink generation paired with this GPU
    LinkCalibration scaleOutLink; ///< typical RDMA NIC of its generation
    double powerW = 0;            ///< board power (TDP), for energy estimates

    double peak(Precision p) const { return peakFlops[static_cast<int>(p)]; }
    /// The 16-bit tensor peak attention runs at: bf16, else fp16 (0 when neither is given).
    double peak16() const {
        return peak(Precision::BF16) > 0 ? peak(Precision::BF16) : peak(Precision::FP16);
    }
};

/// One level of the network, innermost first (Isaacson et al. SC23's tiered network).
enum class TierKind : std::uint8_t { ScaleUp, ScaleOut };

struct NetworkTier {
    std::string name;
    TierKind kind = TierKind::ScaleOut;
    int gpus = 0;         ///< GPUs inside one domain of this tier (8 for DGX NVLink, 72 for NVL72)
    double bytesPerS = 0; ///< per GPU, per direction
    double latencyS = 0;  ///< α per ring step
    LogCurve efficiency;  ///< fraction of bytesPerS vs message size in bytes
    double oversubscription = 1; ///< ≥ 1: bandwidth across this tier is divided by it
    double allReduceSpeedup =
        1; ///< in-switch reduction (NVLS, SHARP): all-reduce beats the ring bound
    /// A flat all-to-all's share of the efficiency curve on this tier: every GPU sends to every
    /// GPU beyond it at once, and such many-to-many flows can reach less of a fabric than a
    /// ring's neighbour streams (flows colliding on the same uplinks, cross-rail paths through
    /// the spine). Cluster-dependent: 1 (the ring's efficiency) unless measured; `madmax
    /// calibrate` fits it from an alltoall_perf table across hosts. DeepEP's per-node
    /// dispatch (rail-aligned sends, then NVLink) does not take it.
    double allToAllEfficiency = 1;
};

/// NCCL's all-reduce algorithm for a group with several GPUs in each of several nodes
/// (NCCL_ALGO): auto takes the faster, as NCCL's tuner does.
enum class AllReduceAlgorithm { Auto, Ring, Tree };

struct System {
    std::string id;
    std::string name;
    std::string source;
    Gpu gpu;
    int gpusPerNode = 8;
    std::vector<NetworkTier> tiers; ///< innermost first; the last spans the whole cluster
    double reserveBytes = 0;        ///< CUDA context, workspace, fragmentation
    double pricePerGpuHour = 0;     ///< USD per GPU-hour, for cost estimates (0: unknown)
    /// Each GPU's link to host memory, per direction (PCIe, or its share of NVLink-C2C), in
    /// bytes/s; what activation offloading copies over (0: not given).
    double hostLinkBytesPerS = 0;
    /// All-gather and reduce-scatter across more than one tier: NCCL runs one flat ring over
    /// every rank (each of the n−1 steps paced by the slowest link it crosses: its latency and,
    /// per GPU, its bandwidth) — true by default; false models a hierarchical algorithm (an
    /// NVLink stage, then the network stage on the 1/f share), as for all-reduce.
    bool flatRingGathers = true;
    AllReduceAlgorithm allReduceAlgorithm = AllReduceAlgorithm::Auto;
    double maxGpus() const { return tiers.empty() ? gpusPerNode : double(tiers.back().gpus); }
};

} // namespace madmax
