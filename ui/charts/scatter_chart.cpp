#include "scatter_chart.hpp"

#include <QChart>
#include <QLegend>
#include <QPainterPath>
#include <QSet>

#include <algorithm>
#include <cmath>

namespace madmax::ui {

ScatterChart::ScatterChart(QWidget* parent) : ExplorerChart(parent) {
    QChart* c = chart();
    c->setTitle(title());
    points_ = new QScatterSeries;
    points_->setName("configurations");
    points_->setMarkerSize(5);
    front_ = new QLineSeries;
    front_->setName("Pareto front");
    best_ = new QScatterSeries;
    best_->setName("best");
    best_->setMarkerShape(QScatterSeries::MarkerShapeStar);
    best_->setMarkerSize(16);
    for (auto* s : {static_cast<QXYSeries*>(points_), static_cast<QXYSeries*>(front_),
                    static_cast<QXYSeries*>(best_)})
        c->addSeries(s);
    x_ = new QValueAxis;
    y_ = new QValueAxis;
    x_->setTitleText("memory/GPU (GB)");
    y_->setTitleText("tokens/s per GPU");
    x_->setLabelFormat("%.0f");
    y_->setLabelFormat("%.0f");
    c->addAxis(x_, Qt::AlignBottom);
    c->addAxis(y_, Qt::AlignLeft);
    for (auto* s : c->series()) {
        s->attachAxis(x_);
        s->attachAxis(y_);
    }
    c->legend()->setAlignment(Qt::AlignBottom);
    cloudItem_ = new QGraphicsPathItem(c);
    cloudItem_->setZValue(1); // above the grid, below the front and the best star
    connect(c, &QChart::plotAreaChanged, this, [this] { drawCloud(); });
    setToolTip(description());
    restyle();
}

void ScatterChart::drawCloud() {
    QPainterPath path;
    path.setFillRule(Qt::WindingFill); // overlapping squares stay filled
    const QRectF area = chart()->plotArea();
    QSet<quint64> occupied;
    constexpr double kSide = 3.0; // px
    for (const QPointF& p : cloud_) {
        const QPointF at = chart()->mapToPosition(p, points_);
        if (!area.adjusted(-1, -1, 1, 1).contains(at)) continue;
        const quint64 cell = (quint64(quint32(std::lround(at.x()))) << 32) |
                             quint32(std::lround(at.y()));
        if (occupied.contains(cell)) continue;
        occupied.insert(cell);
        path.addRect(at.x() - kSide / 2, at.y() - kSide / 2, kSide, kSide);
    }
    cloudItem_->setPath(path);
}

QString ScatterChart::description() const {
    return "A deterministic sample of the configurations that fit (the same for any thread count), "
           "with the front of configurations no other beats in both throughput and memory "
           "headroom; for a serving scenario, throughput per GPU against TPOT with the front no "
           "configuration beats on both (the chart serving planners draw).";
}

void ScatterChart::restyle() {
    QColor c = componentColor(Component::Forward);
    c.setAlpha(90);
    points_->setColor(c);
    points_->setBorderColor(Qt::transparent);
    if (cloudItem_) {
        cloudItem_->setBrush(c);
        cloudItem_->setPen(Qt::NoPen);
    }
    QPen pen(componentColor(Component::CommDP));
    pen.setWidthF(2);
    front_->setPen(pen);
    best_->setColor(componentColor(Component::CommTP));
    best_->setBorderColor(Qt::black);
}

void ScatterChart::setInput(const ChartInput& in) {
    table_ = {};
    const bool none = !in.search || (in.search->scatter.empty() && in.search->top.empty());
    setEmptyMessage(!in.search ? "Run a search (Design space → Search) to see the configurations"
                    : none     ? "No configuration fits in memory"
                               : QString());
    for (auto* a : chart()->axes())
        a->setVisible(!none);
    if (none) return;
    const auto& r = *in.search;
    // Serving configurations plot throughput per GPU against TPOT, with the front serving
    // planners draw; training ones against memory, with the memory-headroom front.
    const bool serving = !r.top.empty() ? r.top.front().servingBatch > 0
                                        : !r.scatter.empty() && r.scatter.front().servingBatch > 0;
    x_->setTitleText(serving ? "TPOT (ms)" : "memory/GPU (GB)");
    front_->setName(serving ? "front" : "Pareto front");
    chart()->setTitle(serving ? "Configurations: throughput per GPU vs TPOT" : title());
    table_.columns = {serving ? "tpot_ms" : "memory_gb", "tokens_per_s_per_gpu",
                      "on_pareto_front", "strategy"};
    QList<QPointF> pts, front, best;
    double maxX = 1e-9, maxY = 1;
    auto point = [serving](const Candidate& c) {
        return QPointF(serving ? c.stepTimeS * 1e3 : c.memoryBytes / 1e9, c.tokensPerS / c.gpus);
    };
    auto addRow = [&](const Candidate& c, const char* onFront) {
        const QPointF p = point(c);
        table_.rows.append({formatNumber(p.x(), 6), formatNumber(p.y(), 6), onFront,
                            QString::fromStdString(candidateSpec(c))});
    };
    for (const auto& c : r.scatter) {
        pts << point(c);
        addRow(c, "0");
    }
    for (const auto& c : serving ? r.paretoLatency : r.paretoMemory) {
        front << point(c);
        addRow(c, "1");
    }
    std::sort(front.begin(), front.end(),
              [](const QPointF& a, const QPointF& b) { return a.x() < b.x(); });
    if (!r.top.empty()) best << point(r.top.front());
    for (const auto& p : pts + front) {
        maxX = std::max(maxX, p.x());
        maxY = std::max(maxY, p.y());
    }
    x_->setLabelFormat(serving && maxX < 10 ? "%.2f" : "%.0f");
    cloud_ = pts;
    front_->replace(front);
    best_->replace(best);
    setNiceAxis(x_, 0, maxX * 1.02);
    setNiceAxis(y_, 0, maxY * 1.05);
    drawCloud();
}

ChartTable ScatterChart::table() const {
    return table_;
}

} // namespace madmax::ui
