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
        // The segment is found on x itself (the logarithm is monotonic), so a lookup held flat
        // past either end takes no logarithm; a NaN falls through to the interpolation and
        // stays NaN. Linear in log10(x) is linear in log2(x), the faster of the two in libm
        // (a fifth of the serving search's time went to log10).
        return d_ ? d_->at(d_->x, x, [](double v) { return std::log2(v); }) : 1.0;
    }
    /// The curve at x given as log2(x): for callers that build log2(x) from parts they keep
    /// (a GEMM's log2(M) plus its shape's log2(2·N·K)), so one logarithm serves many lookups.
    double atLog2(double log2x) const {
        return d_ ? d_->at(d_->log2X, log2x, [](double v) { return v; }) : 1.0;
    }

    const std::vector<std::pair<double, double>>& points() const;
    bool empty() const { return !d_; }
    /// Multiply every y by `factor` (used by what-if knobs).
    LogCurve scaled(double factor) const;
    bool operator==(const LogCurve& o) const { return points() == o.points(); }

  private:
    struct Table {
        std::vector<std::pair<double, double>> points;
        std::vector<double> x, log2X, y;
        std::vector<double> slope; ///< [i]: dy per unit log2(x) on the segment ending at point i

        /// y at `v`, a value of `keys` (x, or log2(x)): held flat past either end, else
        /// interpolated on the segment `v` falls in, at log2(x) = toLog2(v).
        template <typename ToLog2>
        double at(const std::vector<double>& keys, double v, ToLog2 toLog2) const {
            if (v <= keys[0]) return y[0];
            if (v >= keys.back()) return y.back();
            std::size_t i = 1;
            while (v > keys[i])
                ++i;
            return y[i - 1] + (toLog2(v) - log2X[i - 1]) * slope[i];
        }
    };
    std::shared_ptr<const Table> d_; ///< null: no points (the curve is 1 everywhere)
};

} // namespace madmax
