#include "madmax/curve.hpp"

#include <algorithm>

namespace madmax {

LogCurve::LogCurve(std::vector<std::pair<double, double>> points) {
    if (points.empty()) return;
    auto t = std::make_shared<Table>();
    t->points = std::move(points);
    std::sort(t->points.begin(), t->points.end());
    for (const auto& [x, y] : t->points) {
        t->x.push_back(x);
        t->log2X.push_back(std::log2(x));
        t->y.push_back(y);
        const std::size_t i = t->x.size() - 1;
        // (Equal x twice: a step, never interpolated inside, since the lookup stops at the
        // first point not below x.)
        t->slope.push_back(i > 0 && t->log2X[i] > t->log2X[i - 1]
                               ? (t->y[i] - t->y[i - 1]) / (t->log2X[i] - t->log2X[i - 1])
                               : 0.0);
    }
    d_ = std::move(t);
}

const std::vector<std::pair<double, double>>& LogCurve::points() const {
    static const std::vector<std::pair<double, double>> none;
    return d_ ? d_->points : none;
}

LogCurve LogCurve::scaled(double factor) const {
    auto pts = points();
    for (auto& p : pts)
        p.second *= factor;
    return LogCurve(std::move(pts));
}

} // namespace madmax
