// The 16-bit GEMM efficiency curve fitted to profiled kernels (PyTorch profiler traces):
// compute-bound shapes only, binned by a quarter decade of FLOPs, the preset's points outside
// the measured range kept; residuals before and after.
#include "calibration/calibrate_detail.hpp"

#include "madmax/scenario_io.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace madmax::calibration_detail {

using nlohmann::json;

namespace {

/// A GEMM curve as "FLOPs: efficiency" pairs (or its single number).
std::string describeCurve(const json& g) {
    if (g.is_number()) return fmt("%.3f", g.get<double>());
    std::string o;
    for (const auto& p : g)
        o += (o.empty() ? "" : ", ") + fmt("%.3g", p[0].get<double>()) + " FLOPs: " +
             fmt("%.3f", p[1].get<double>());
    return o;
}

/// One compute-bound GEMM shape of a trace, as a point of the curve.
struct GemmPoint {
    double flops, bytes, eff, measuredS;
    std::string what;
    int count;
};

/// Each compute-bound 16-bit GEMM gives efficiency = FLOPs ÷ (time × 16-bit peak); fp32,
/// memory-bound and faster-than-peak shapes are skipped, and `r` says how many.
std::vector<GemmPoint> gemmPoints(const std::vector<KinetoTrace>& traces, const Gpu& before,
                                  std::string& files, CalibrationReport& r) {
    const double peak = before.peak(Precision::BF16);
    std::vector<GemmPoint> pts;
    int memoryBound = 0, wide = 0, aboveP = 0;
    for (const KinetoTrace& t : traces) {
        files += (files.empty() ? "" : ", ") + t.file;
        for (const auto& n : t.notes)
            r.notes.push_back(n);
        for (const KinetoGemm& g : t.gemms) {
            if (g.precision == Precision::FP32) {
                ++wide;
                continue;
            }
            const double flops = 2.0 * g.m * g.n * g.k * g.batch;
            const double bytes = 2.0 * (g.m * g.k + g.k * g.n + g.m * g.n) * g.batch;
            const double memS = bytes / (before.hbmBytesPerS * before.calibration.memoryEfficiency);
            // Memory-bound by the preset's own roofline (arithmetic intensity under the ridge
            // point), or by the measurement (HBM time over half the kernel's): the curve does
            // not set its time.
            const double ridge = peak * before.calibration.gemmEfficiency(flops) /
                                 (before.hbmBytesPerS * before.calibration.memoryEfficiency);
            if (flops / bytes < ridge || memS > 0.5 * g.kernelS) {
                ++memoryBound;
                continue;
            }
            const double eff = flops / (g.kernelS * peak);
            if (eff > 1.0) {
                ++aboveP;
                continue;
            }
            char what[160];
            std::snprintf(what, sizeof what, "%s %s%.0fx%.0fx%.0f (x%d)", t.file.c_str(),
                          g.batch > 1 ? fmt("%.0f·", g.batch).c_str() : "", g.m, g.n, g.k,
                          g.count);
            pts.push_back({flops, bytes, eff, g.kernelS, what, g.count});
        }
    }
    if (wide > 0)
        r.notes.push_back(std::to_string(wide) +
                          " fp32 GEMM shape(s) skipped: the curve is the 16-bit one");
    if (memoryBound > 0)
        r.notes.push_back(std::to_string(memoryBound) +
                          " GEMM shape(s) skipped: memory-bound (arithmetic intensity under the "
                          "roofline's ridge, or HBM time over half the kernel's), they say "
                          "nothing about compute efficiency");
    if (aboveP > 0)
        r.notes.push_back(std::to_string(aboveP) +
                          " GEMM shape(s) skipped: faster than the preset's 16-bit peak — is the "
                          "trace from this GPU?");
    return pts;
}

/// Bins of a quarter decade of FLOPs, weighted by instance count, geometric means.
json binnedCurve(std::vector<GemmPoint>& pts) {
    std::sort(pts.begin(), pts.end(),
              [](const GemmPoint& a, const GemmPoint& b) { return a.flops < b.flops; });
    json fitted = json::array();
    std::size_t i = 0;
    while (i < pts.size()) {
        const double edge = std::log10(pts[i].flops) + 0.25;
        double w = 0, lf = 0, le = 0;
        std::size_t j = i;
        for (; j < pts.size() && std::log10(pts[j].flops) < edge; ++j) {
            w += pts[j].count;
            lf += pts[j].count * std::log10(pts[j].flops);
            le += pts[j].count * std::log(pts[j].eff);
        }
        fitted.push_back({std::pow(10.0, lf / w), std::exp(le / w)});
        i = j;
    }
    return fitted;
}

/// The fitted points, with the old curve's points more than a quarter decade outside them.
json mergedCurve(const json& old, const json& fitted) {
    const double lo = fitted.front()[0].get<double>(), hi = fitted.back()[0].get<double>();
    json merged = json::array();
    if (old.is_array())
        for (const auto& p : old)
            if (p[0].get<double>() < lo / 1.78) merged.push_back(p);
    for (const auto& p : fitted)
        merged.push_back(p);
    if (old.is_array())
        for (const auto& p : old)
            if (p[0].get<double>() > hi * 1.78) merged.push_back(p);
    return merged;
}

} // namespace

void fitGemmCurve(const std::vector<KinetoTrace>& traces, json& preset, CalibrationReport& r) {
    const Gpu before = parseGpu(preset, "calibrating", "gpu");
    const double peak = before.peak(Precision::BF16);
    std::string files;
    std::vector<GemmPoint> pts = gemmPoints(traces, before, files, r);
    if (pts.empty()) {
        r.notes.push_back(files + ": no compute-bound 16-bit GEMM, GEMM curve unchanged");
        return;
    }
    const json fitted = binnedCurve(pts);
    json& curve = preset["calibration"]["gemm_efficiency"];
    const json old = curve;
    const json merged = mergedCurve(old, fitted);
    curve = merged;
    const Gpu after = parseGpu(preset, "calibrating", "gpu");
    r.changes.push_back({"GEMM efficiency curve (16-bit)", describeCurve(old),
                         describeCurve(merged),
                         files + ": " + std::to_string(pts.size()) +
                             " compute-bound GEMM shape(s), binned by a quarter decade of FLOPs"});
    for (const GemmPoint& p : pts) {
        auto predicted = [&](const Gpu& g) {
            return std::max(p.flops / (peak * g.calibration.gemmEfficiency(p.flops)),
                            p.bytes / (g.hbmBytesPerS * g.calibration.memoryEfficiency));
        };
        r.residuals.push_back({p.what, p.measuredS * 1e6, predicted(before) * 1e6,
                               predicted(after) * 1e6, "µs per GEMM"});
    }
}

} // namespace madmax::calibration_detail
