// Calibration from the user's own measurements (issue #12): fit a GPU preset's efficiency
// parameters to nccl-tests output and to measured step times, and report what moved what.
#pragma once

#include "madmax/presets.hpp"
#include "madmax/system.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace madmax {

/// One nccl-tests perf table (all_reduce_perf, all_gather_perf, reduce_scatter_perf,
/// alltoall_perf): the out-of-place time per message size.
struct NcclTable {
    std::string file;
    Collective op = Collective::AllReduce;
    int ranks = 0, hosts = 0;
    struct Row {
        double bytes = 0, timeS = 0, busbwGBs = 0;
    };
    std::vector<Row> rows;
    /// Rows the benchmark itself marked wrong (#wrong not 0), left out and said.
    std::vector<std::string> skipped;
};
/// Parses nccl-tests' text output. The collective comes from the "Collective test starting"
/// line, else from the file name; ranks and hosts from the "#  Rank" lines. Throws InputError
/// naming the file and line for anything else.
NcclTable parseNcclTests(const std::string& text, const std::string& file);
/// nccl-tests' text for a table (what `madmax calibrate` reads; tests build synthetic ones).
std::string formatNcclTests(const NcclTable& t);

/// One GEMM shape of a PyTorch profiler (Kineto) trace: aten::mm / addmm / bmm / baddbmm ops
/// recorded with their shapes, and the mean GPU time of the kernels each instance launched.
struct KinetoGemm {
    std::string op;
    double m = 0, n = 0, k = 0, batch = 1;
    Precision precision = Precision::BF16;
    int count = 0;      ///< instances
    double kernelS = 0; ///< mean GPU time per instance
};
struct KinetoTrace {
    std::string file;
    std::vector<KinetoGemm> gemms;
    std::vector<std::string> notes; ///< ops skipped and why
};
/// Reads a Chrome-format trace (torch.profiler … export_chrome_trace, record_shapes=True):
/// GEMM ops and their kernels matched by "External id". Throws InputError naming the file and
/// the event for a trace that is not one, has no shapes, or no GEMM matched to a kernel.
KinetoTrace parseKinetoTrace(const nlohmann::json& trace, const std::string& file);
/// A minimal trace holding `t`'s GEMMs (tests build synthetic ones with it).
std::string formatKinetoTrace(const KinetoTrace& t);

struct CalibrationInputs {
    std::vector<NcclTable> nccl;
    /// PyTorch profiler traces: the 16-bit GEMM efficiency curve, point by point.
    std::vector<KinetoTrace> kineto;
    /// A madmax-validation/1 file of measured training runs on this GPU (may be null).
    nlohmann::json steps;
    std::string stepsFile;
};

struct CalibrationChange {
    std::string parameter;
    std::string before, after;
    std::string movedBy; ///< which measurements determined it
};
struct CalibrationResidual {
    std::string measurement;
    double measured = 0, before = 0, after = 0; ///< predictions before and after the fit
    std::string unit;
};
struct CalibrationReport {
    nlohmann::json preset; ///< the fitted GPU preset
    std::vector<CalibrationChange> changes;
    std::vector<CalibrationResidual> residuals;
    std::vector<std::string> notes; ///< points skipped and why
};

/// Fits `gpuPresetId`'s calibration: each tier's link efficiency curve, point by point, so the
/// engine's collective time equals the measured one at every message size (single-host tables
/// fit the scale-up tier, multi-host ones the scale-out tier, on `system`'s bandwidths); the
/// 16-bit GEMM efficiency curve from profiled kernel durations (compute-bound GEMMs, binned by
/// a quarter decade of FLOPs; the curve is kept outside the measured range); then one compute
/// scale on the GEMM and attention efficiencies minimising the squared log error of the
/// step-time measurements. The result gets `newId`.
CalibrationReport calibrate(const std::string& gpuPresetId, const System& system,
                            const CalibrationInputs& in, const std::string& newId,
                            const PresetLibrary& lib = PresetLibrary::builtin());

std::string formatCalibration(const CalibrationReport& r);

} // namespace madmax
