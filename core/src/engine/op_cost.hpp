// Per-op time on one GPU, shared by the training and inference engines.
#pragma once

#include "madmax/system.hpp"
#include "madmax/workload.hpp"

#include <algorithm>

namespace madmax::detail {

/// The two roofline bounds of one GEMM C[M×N] = A[M×K]·W[K×N] on one GPU (docs/developer/model.md §2): FLOPs at
/// the calibrated shape-dependent efficiency, and HBM traffic for W, A and C. The one GEMM cost
/// function of the training and serving engines.
struct GemmBounds {
    double computeS = 0;
    double memoryS = 0;
    double timeS() const { return std::max(computeS, memoryS); }
};
struct GemmPrecision {
    double peakFlops;      ///< of the GEMM's math precision
    double scale;          ///< calibration's low-precision scale (1 for 16-bit)
    double weightBytes;    ///< per element of W
    double inputBytes;     ///< per element of A
    double outputBytes;    ///< per element of C
    double hbmEfficiency;  ///< achievable share of HBM bandwidth for this access pattern
    /// FLOPs → efficiency-curve key: the 16-bit peak ÷ this precision's peak. The curve is
    /// fitted on 16-bit GEMMs; a GEMM's fixed costs (launch, prologue, tail wave) take the same
    /// time at any precision, so an FP8 GEMM reaches the efficiency of the 16-bit GEMM with
    /// the same ideal time, i.e. half its FLOPs (docs/developer/model.md §2, "equal ideal time").
    double efficiencyKey = 1.0;

    /// A GEMM kept in 16 bits beside lower-precision ones (the LM head, the MoE router:
    /// OpCoster::gemm16), at the 16-bit peak and this HBM efficiency.
    static GemmPrecision sixteenBit(double peak16, double hbmEfficiency) {
        return {peak16, 1.0, 2.0, 2.0, 2.0, hbmEfficiency, 1.0};
    }
};
/// The rows a grouped (MoE expert) GEMM computes for each group of `rows` token rows: the
/// tensor cores work in tiles of 64 rows, the M of one Hopper warpgroup MMA (PTX ISA
/// wgmma.mma_async .m64nNk16) and the smaller of Blackwell's single-CTA tcgen05.mma (M 64 or
/// 128), so a group's last tile computes its padding too (DeepGEMM's grouped layouts align each
/// expert's rows to its block M for the same reason). Where a group has few rows — decode, whose
/// experts see tens of tokens each — its math grows up to 64/rows times; a dense GEMM's skinny M
/// is not padded this way (cuBLAS runs it as a split-K or GEMV-like kernel).
inline constexpr double kGemmRowTile = 64;
inline double groupRowsComputed(double rows) {
    return rows > 0 ? std::ceil(rows / kGemmRowTile) * kGemmRowTile : 0.0;
}

/// The bounds at a GEMM efficiency the caller has already looked up (the serving engine keeps
/// each weight's log2(2·N·K) and adds log2(M): one logarithm for a layer's GEMMs). `mathRows`:
/// the rows the tensor cores compute — M, or more where padding adds rows to the M read and
/// written (groupRowsComputed).
inline GemmBounds gemmBoundsAt(const Gpu& gpu, const GemmPrecision& p, double M, double N,
                               double K, double efficiency, double mathRows) {
    const double flops = 2.0 * mathRows * N * K;
    const double bytes = K * N * p.weightBytes + M * K * p.inputBytes + M * N * p.outputBytes;
    return {flops / (p.peakFlops * efficiency * p.scale),
            bytes / (gpu.hbmBytesPerS * p.hbmEfficiency)};
}
/// gemmBoundsAt factored for one weight W[K×N] at one precision, for a caller that asks it at
/// many row counts (a serving batch solve asks every weight of a layer on every probe): the
/// weight's reads, the activations' bytes per row and the math per row are taken once, and a
/// lookup is two multiply-adds and a division. Equal to gemmBoundsAt up to rounding.
struct GemmRates {
    double weightReadS = 0; ///< W's K·N elements read: K·N·weightBytes / (HBM · efficiency)
    double rowReadS = 0;    ///< per row of A read and of C written: (K·in + N·out) / (HBM · eff.)
    double mathRowS = 0;    ///< per row computed at GEMM efficiency 1: 2·N·K / (peak · scale)
    GemmRates() = default;
    GemmRates(const Gpu& gpu, const GemmPrecision& p, double N, double K) {
        const double hbm = gpu.hbmBytesPerS * p.hbmEfficiency;
        weightReadS = K * N * p.weightBytes / hbm;
        rowReadS = (K * p.inputBytes + N * p.outputBytes) / hbm;
        mathRowS = 2.0 * N * K / (p.peakFlops * p.scale);
    }
    /// The bounds for M rows, `mathRows` of them computed (gemmBoundsAt's arguments).
    GemmBounds at(double M, double efficiency, double mathRows) const {
        return {mathRows * mathRowS / efficiency, weightReadS + M * rowReadS};
    }
};

inline GemmBounds gemmBounds(const Gpu& gpu, const GemmPrecision& p, double M, double N,
                             double K) {
    return gemmBoundsAt(gpu, p, M, N, K,
                        gpu.calibration.gemmEfficiency(2.0 * M * N * K * p.efficiencyKey), M);
}

/// A fused attention kernel's backward pass sustains this share of its forward pass's
/// efficiency: FlashAttention-3 (Shah et al. 2024, Figs. 5–6: H100 SXM5, BF16, 16k tokens) runs
/// 648 TFLOP/s forward and 561 backward at head dim 128, which attentionComputeS's serial bound
/// puts at 98.3% and 68.1% of what the H100's tensor cores and exponential units allow
/// (659 and 824 TFLOP/s): 0.681 / 0.983 = 0.69.
inline constexpr double kFlashBackwardEfficiency = 0.69;

/// A fused attention kernel's compute time (docs/developer/model.md §2 "Attention"): its two (forward) or five
/// (backward) GEMMs on the tensor cores plus its softmax's exponentials — one per score,
/// forward and again backward to recompute P — on the special-function units. The two add:
/// each tile's scores feed the softmax and its probabilities the next GEMM, so the units wait
/// on each other (NVIDIA, "Making Softmax More Efficient with NVIDIA Blackwell Ultra"). The sum
/// is what FlashAttention-3 measures on H100 (Shah et al. 2024, Figs. 5–6, 16k tokens): forward
/// at head dims 64 / 128 / 256 runs 497 / 648 / 756 TFLOP/s, 0.77 and 1.17 of head dim 128,
/// where the sum gives 0.75 and 1.20 (a max of the two would give 1.00 and 1.00); backward at 64
/// runs 0.85 of 128 (sum 0.86, max 1.00). The calibrated attention efficiency scales both;
/// `backward` applies kFlashBackwardEfficiency on top.
inline double attentionComputeS(const Gpu& gpu, double peak16, double flops, double exps,
                                bool backward = false) {
    const double tensor = flops / peak16;
    const double sfu = gpu.expPerS > 0 ? exps / gpu.expPerS : 0.0;
    return (tensor + sfu) /
           (gpu.calibration.attentionEfficiency * (backward ? kFlashBackwardEfficiency : 1.0));
}

/// Per score, the exponential units' time over the tensor cores' for `flopsPerScore` (> 1: the
/// softmax bounds the kernel); 0 when the GPU gives no exponential rate.
inline double softmaxOverTensor(const Gpu& gpu, double peak16, double flopsPerScore) {
    return gpu.expPerS > 0 && flopsPerScore > 0 ? peak16 / (gpu.expPerS * flopsPerScore) : 0.0;
}

/// Per-op time on one GPU (docs/developer/model.md §2): max(FLOPs / (peak·η_c), bytes / (BW·η_m)) + launch.
struct OpCoster {
    const Gpu& gpu;
    double peak;   ///< of the workload's GEMM precision
    double peak16; ///< attention runs in 16-bit even in FP8 training (Transformer Engine)
    double elemBytes;
    double gemmScale; ///< calibration's low-precision scale when the GEMMs run below 16 bits
    double efficiencyKey = 1.0; ///< see GemmPrecision::efficiencyKey
    /// HBM bytes moved per element of a GEMM's input to cast it below 16 bits (Transformer
    /// Engine's cast/transpose kernels; 0 for 16-bit GEMMs). docs/developer/model.md §2 "FP8 casts".
    double castBytes = 0;

    double memoryTime(double bytes) const {
        return bytes / (gpu.hbmBytesPerS * gpu.calibration.memoryEfficiency);
    }
    double gemm(double M, double N, double K) const {
        const GemmPrecision p{peak, gemmScale, elemBytes, elemBytes, 2.0,
                              gpu.calibration.memoryEfficiency, efficiencyKey};
        return gemmBounds(gpu, p, M, N, K).timeS() + gpu.calibration.kernelLaunchS + cast(M * K);
    }
    /// A GEMM that stays in 16 bits when the workload's GEMMs run below: Megatron-Core builds
    /// the LM head from its own ColumnParallelLinear, not a Transformer Engine layer
    /// (megatron/core/models/gpt/gpt_model.py; an MXFP8 head became an opt-in in May 2026,
    /// Megatron-LM #4825), and computes the MoE router's logits in the input's dtype or fp32
    /// (transformer/moe/router.py, moe_router_dtype), so FP8 training leaves both in BF16.
    double gemm16(double M, double N, double K) const {
        return gemmBounds(gpu, GemmPrecision::sixteenBit(peak16, gpu.calibration.memoryEfficiency),
                          M, N, K)
                   .timeS() +
               gpu.calibration.kernelLaunchS;
    }
    /// gemm16 when the workload's GEMMs run below 16 bits, else the workload's own GEMM.
    double gemmAtLeast16(double M, double N, double K) const {
        return elemBytes < 2 ? gemm16(M, N, K) : gemm(M, N, K);
    }
    /// The cast of `elements` of a GEMM input below 16 bits: one memory-bound kernel.
    double cast(double elements) const {
        return castBytes > 0 ? memoryTime(elements * castBytes) + gpu.calibration.kernelLaunchS
                             : 0.0;
    }
    /// Grouped GEMM over `groups` experts sharing `rows` token rows (Megatron-Core grouped
    /// GEMM): every expert's weights are read, and each expert's GEMM has only rows/groups rows,
    /// so its efficiency is that of the small GEMM (docs/developer/model.md §2 at the real row count).
    /// `tiled`: each group's rows computed in whole tiles (groupRowsComputed), as a grouped
    /// kernel runs them; false for a block that is one plain GEMM (a single expert's MLP).
    double groupedGemm(double rows, double N, double K, int groups, bool tiled) const {
        if (rows <= 0 || groups < 1) return 0.0;
        const double perExpertRows = rows / groups;
        const double perExpertFlops =
            2.0 * (tiled ? groupRowsComputed(perExpertRows) : perExpertRows) * N * K;
        const double flops = perExpertFlops * groups;
        const double bytes = groups * K * N * elemBytes + rows * K * elemBytes + rows * N * 2.0;
        const double compute = flops / (peak *
                                        gpu.calibration.gemmEfficiency(perExpertFlops *
                                                                       efficiencyKey) *
                                        gemmScale);
        return std::max(compute, memoryTime(bytes)) + gpu.calibration.kernelLaunchS + cast(rows * K);
    }
    double elementwise(double bytes) const {
        return memoryTime(bytes) + gpu.calibration.kernelLaunchS;
    }
    /// A fused attention pass of `flops` tensor-core FLOPs and `exps` softmax exponentials.
    double flashAttention(double flops, double exps, bool backward = false) const {
        return attentionComputeS(gpu, peak16, flops, exps, backward) +
               gpu.calibration.kernelLaunchS;
    }
};

/// The op coster of a training step (transformer and DLRM engines alike). Below 16 bits the
/// GEMM costs are explicit — equal-ideal-time efficiency and the cast passes — so the
/// calibration's low-precision scale (serving's) is not applied. Attention runs at the 16-bit
/// peak (the workload's own on a GPU without one).
inline OpCoster trainingOpCoster(const Gpu& gpu, const Workload& w) {
    const double peak = gpu.peak(w.precision);
    const double p16 = gpu.peak16();
    const bool low = bytesPerElement(w.precision) < 2.0;
    return OpCoster{gpu,
                    peak,
                    p16 > 0 ? p16 : peak,
                    bytesPerElement(w.precision),
                    1.0,
                    low && p16 > 0 ? p16 / peak : 1.0,
                    low ? castBytesPerElement(w.lowPrecisionScaling) : 0.0};
}

} // namespace madmax::detail
