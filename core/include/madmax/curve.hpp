// A piecewise-linear curve in log10(x): efficiency vs GEMM size or message size.
#pragma once

#include <cmath>
#include <utility>
#include <vector>

namespace madmax {

/// Efficiency curves are data (Isaacson et al. SC23, "Calculon"): points (x, y) with x > 0,
/// sorted by x; between points y is interpolated linearly in log10(x); outside it is held flat.
class LogCurve {
  public:
    LogCurve() = default;
    explicit LogCurve(std::vector<std::pair<double, double>> points);
    static LogCurve constant(double y) { return LogCurve({{1.0, y}}); }

    double operator()(double x) const {
        const int n = static_cast<int>(x_.size());
        if (n == 0) return 1.0;
        // The segment is found on x itself (the logarithm is monotonic), so a lookup held flat
        // past either end takes no logarithm; a NaN falls through to the interpolation and
        // stays NaN. Linear in log10(x) is linear in log2(x), the faster of the two in libm
        // (a fifth of the serving search's time went to log10).
        if (x <= x_[0]) return y_[0];
        if (x >= x_[n - 1]) return y_[n - 1];
        int i = 1;
        while (x > x_[i])
            ++i;
        return y_[i - 1] + (std::log2(x) - log2X_[i - 1]) * slope_[i];
    }

    const std::vector<std::pair<double, double>>& points() const { return points_; }
    bool empty() const { return points_.empty(); }
    /// Multiply every y by `factor` (used by what-if knobs).
    LogCurve scaled(double factor) const;
    bool operator==(const LogCurve& o) const { return points_ == o.points_; }

  private:
    std::vector<std::pair<double, double>> points_;
    std::vector<double> x_, log2X_, y_;
    std::vector<double> slope_; ///< [i]: dy per unit log2(x) on the segment ending at point i
};

} // namespace madmax
