#include "madmax/curve.hpp"

#include <algorithm>

namespace madmax {

LogCurve::LogCurve(std::vector<std::pair<double, double>> points) : points_(std::move(points)) {
    std::sort(points_.begin(), points_.end());
    for (const auto& [x, y] : points_) {
        x_.push_back(x);
        log2X_.push_back(std::log2(x));
        y_.push_back(y);
        const std::size_t i = x_.size() - 1;
        // (Equal x twice: a step, never interpolated inside, since the lookup stops at the
        // first point not below x.)
        slope_.push_back(i > 0 && log2X_[i] > log2X_[i - 1]
                             ? (y_[i] - y_[i - 1]) / (log2X_[i] - log2X_[i - 1])
                             : 0.0);
    }
}

LogCurve LogCurve::scaled(double factor) const {
    auto pts = points_;
    for (auto& p : pts)
        p.second *= factor;
    return LogCurve(std::move(pts));
}

} // namespace madmax
