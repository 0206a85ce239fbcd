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
        const int n = static_cast<int>(logX_.size());
        if (n == 0) return 1.0;
        const double lx = std::log10(x > 0 ? x : 1e-300);
        if (lx <= logX_[0]) return y_[0];
        if (lx >= logX_[n - 1]) return y_[n - 1];
        int i = 1;
        while (lx > logX_[i])
            ++i;
        const double f = (lx - logX_[i - 1]) / (logX_[i] - logX_[i - 1]);
        return y_[i - 1] + f * (y_[i] - y_[i - 1]);
    }

    const std::vector<std::pair<double, double>>& points() const { return points_; }
    bool empty() const { return points_.empty(); }
    /// Multiply every y by `factor` (used by what-if knobs).
    LogCurve scaled(double factor) const;
    bool operator==(const LogCurve& o) const { return points_ == o.points_; }

  private:
    std::vector<std::pair<double, double>> points_;
    std::vector<double> logX_, y_;
};

} // namespace madmax
