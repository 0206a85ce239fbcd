// What `madmax calibrate`'s two halves share: the link and step-time fits (calibrate.cpp) and
// the GEMM curve fitted to profiled kernels (gemm_curve_fit.cpp).
#pragma once

#include "madmax/calibrate.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace madmax::calibration_detail {

/// printf of one number into a short string.
std::string fmt(const char* f, double v);

/// Fits the preset's 16-bit GEMM efficiency curve to the traces' kernel durations, point by
/// point, and says in `r` what it used, skipped and moved.
void fitGemmCurve(const std::vector<KinetoTrace>& traces, nlohmann::json& preset,
                  CalibrationReport& r);

} // namespace madmax::calibration_detail
