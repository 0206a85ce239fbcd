#include "madmax/curve.hpp"

#include <algorithm>

namespace madmax {

LogCurve::LogCurve(std::vector<std::pair<double, double>> points) : points_(std::move(points)) {
    std::sort(points_.begin(), points_.end());
    for (const auto& [x, y] : points_) {
        x_.push_back(x);
        logX_.push_back(std::log10(x));
        y_.push_back(y);
    }
}

LogCurve LogCurve::scaled(double factor) const {
    auto pts = points_;
    for (auto& p : pts)
        p.second *= factor;
    return LogCurve(std::move(pts));
}

} // namespace madmax
