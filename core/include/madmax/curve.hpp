// A piecewise-linear curve in log10(x): efficiency vs GEMM size or message size.
#pragma once

#include <cmath>
#include <memory>
#include <utility>
#include <vector>

namespace madmax {

/// Efficiency curves are data (Isaacson et al. SC23, "Calculon"): points (x, y) with x > 0,
/// sorted by x; between points y is interpolated linearly in log10(x); outside it is held flat.
///
/// A curve is immutable once built, so copies share one table: a GPU or system holds several,
/// and a search copies scenarios (the serving search spent a tenth of its time allocating and
/// freeing the tables of copied curves).
class LogCurve {
  public:
    LogCurve() = default;
    explicit LogCurve(std::vector<std::pair<double, double>> points);
    static LogCurve constant(double y) { return LogCurve({{1.0, y}}); }

    double operator()(double x) const {
        if (!d_) return 1.0;
        const Table& d = *d_;
        const int n = d.n;
        // The segment is found on x itself (the logarithm is monotonic), so a lookup held flat
        // past either end takes no logarithm; a NaN falls through to the interpolation and
        // stays NaN. Linear in log10(x) is linear in log2(x), the faster of the two in libm
        // (a fifth of the serving search's time went to log10).
        if (x <= d.x[0]) return d.y[0];
        if (x >= d.x[n - 1]) return d.y[n - 1];
        int i = 1;
        while (x > d.x[i])
            ++i;
        return d.y[i - 1] + (std::log2(x) - d.log2X[i - 1]) * d.slope[i];
    }
    /// The curve at x given as log2(x): for callers that build log2(x) from parts they keep
    /// (a GEMM's log2(M) plus its shape's log2(2·N·K)), so one logarithm serves many lookups.
    double atLog2(double log2x) const {
        if (!d_) return 1.0;
        const Table& d = *d_;
        const int n = d.n;
        if (log2x <= d.log2X[0]) return d.y[0];
        if (log2x >= d.log2X[n - 1]) return d.y[n - 1];
        int i = 1;
        while (log2x > d.log2X[i])
            ++i;
        return d.y[i - 1] + (log2x - d.log2X[i - 1]) * d.slope[i];
    }

    const std::vector<std::pair<double, double>>& points() const;
    bool empty() const { return !d_; }
    /// Multiply every y by `factor` (used by what-if knobs).
    LogCurve scaled(double factor) const;
    bool operator==(const LogCurve& o) const { return points() == o.points(); }

  private:
    struct Table {
        std::vector<std::pair<double, double>> points;
        int n = 0;
        std::vector<double> x, log2X, y;
        std::vector<double> slope; ///< [i]: dy per unit log2(x) on the segment ending at point i
    };
    std::shared_ptr<const Table> d_; ///< null: no points (the curve is 1 everywhere)
};

} // namespace madmax
