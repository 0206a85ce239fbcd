#include "pareto_chart.hpp"

#include <QChart>
#include <QLegend>
#include <QLineSeries>
#include <QScatterSeries>

#include <algorithm>
#include <cmath>

namespace madmax::ui {

namespace {
const Component kSystemColours[] = {Component::Forward, Component::CommTP, Component::Recompute,
                                    Component::CommDP,  Component::CommPP, Component::Backward,
                                    Component::Bubble,  Component::CommCP};
const QScatterSeries::MarkerShape kShapes[] = {
    QScatterSeries::MarkerShapeCircle, QScatterSeries::MarkerShapeRectangle,
    QScatterSeries::MarkerShapeTriangle, QScatterSeries::MarkerShapeRotatedRectangle,
    QScatterSeries::MarkerShapePentagon, QScatterSeries::MarkerShapeStar};

/// A power of the base at or below / above v, for a log axis with whole decades or doublings.
double floorPow(double v, double base) { return std::pow(base, std::floor(std::log(v) / std::log(base))); }
double ceilPow(double v, double base) { return std::pow(base, std::ceil(std::log(v) / std::log(base))); }
/// Legend labels: the system ids without the words every id shares at its start or end
/// ("dgx-h100-superpod", "dgx-b200-superpod" → "h100", "b200"), so a 3.5-inch figure shows them
/// whole; one system keeps its id.
QStringList legendLabels(const QStringList& ids) {
    if (ids.size() < 2) return ids;
    QList<QStringList> words;
    for (const QString& id : ids)
        words.append(id.split('-'));
    auto sharedAt = [&](bool front) {
        int n = 0;
        while (true) {
            QString w;
            for (const QStringList& ws : words) {
                if (ws.size() - n < 2) return n; // keep at least one word
                const QString& at = front ? ws[n] : ws[ws.size() - 1 - n];
                if (w.isNull()) w = at;
                else if (at != w) return n;
            }
            ++n;
        }
    };
    const int head = sharedAt(true);
    for (QStringList& ws : words)
        ws = ws.mid(head);
    const int tail = sharedAt(false);
    QStringList out;
    for (const QStringList& ws : words)
        out << ws.mid(0, ws.size() - tail).join('-');
    return out;
}

} // namespace

ParetoChart::ParetoChart(bool dollars, QWidget* parent) : ExplorerChart(parent), dollars_(dollars) {
    QChart* c = chart();
    c->setTitle(title());
    x_ = new QLogValueAxis;
    x_->setBase(dollars ? 10 : 2);
    x_->setTitleText(dollars ? "$ per hour (GPUs × price per GPU-hour)" : "GPUs");
    x_->setLabelFormat("%g");
    x_->setMinorTickCount(dollars ? 8 : 0);
    y_ = new QLogValueAxis;
    y_->setBase(10);
    y_->setTitleText("throughput");
    y_->setLabelFormat("%g");
    y_->setMinorTickCount(8);
    c->addAxis(x_, Qt::AlignBottom);
    c->addAxis(y_, Qt::AlignLeft);
    front_ = new QLineSeries;
    front_->setName("front");
    c->addSeries(front_);
    front_->attachAxis(x_);
    front_->attachAxis(y_);
    c->legend()->setAlignment(Qt::AlignBottom);
    setToolTip(description());
    restyle();
}

QString ParetoChart::description() const {
    return QString("MAD-Max Figure 1: each point is a system at a GPU count with the best "
                   "strategy the search finds there, at the scenario's global batch; the front "
                   "joins the points no other beats with as few %1.")
        .arg(dollars_ ? "dollars per hour" : "GPUs");
}

void ParetoChart::restyle() {
    for (std::size_t i = 0; i < systems_.size(); ++i) {
        QColor col = componentColor(kSystemColours[i % 8]);
        systems_[i]->setColor(col);
        systems_[i]->setBorderColor(col.darker(130));
        systems_[i]->setMarkerSize(10);
        systems_[i]->setMarkerShape(style_.hatching ? kShapes[i % 6] : kShapes[0]);
    }
    QPen pen(Qt::black);
    pen.setWidthF(1.5);
    pen.setStyle(Qt::DashLine);
    front_->setPen(pen);
}

QString ParetoChart::emptyReason(const ResourcePareto* p) const {
    if (!p || p->points.empty())
        return "Run the resource–performance comparison (Co-design) to draw it";
    if (dollars_ && !p->priced)
        return "A compared system states no price_per_gpu_hour: no dollar axis";
    if (std::any_of(p->points.begin(), p->points.end(),
                    [](const ResourcePoint& r) { return r.feasible; }))
        return {};
    // Say why: memory, or (at some count) no valid strategy at all.
    const auto other = std::find_if(p->points.begin(), p->points.end(), [](const auto& r) {
        return r.whyNone != "no strategy fits in memory";
    });
    return other == p->points.end()
               ? QString("Nothing fits in memory at any of the GPU counts")
               : "No strategy at any of the GPU counts; at " + QString::number(other->gpus) +
                     ": " + QString::fromStdString(other->whyNone);
}

QScatterSeries* ParetoChart::seriesAt(std::size_t index, const QStringList& labels) {
    while (systems_.size() <= index) {
        auto* series = new QScatterSeries;
        series->setName(labels[int(systems_.size())]);
        chart()->addSeries(series);
        series->attachAxis(x_);
        series->attachAxis(y_);
        systems_.push_back(series);
    }
    return systems_[index];
}

void ParetoChart::setInput(const ChartInput& in) {
    table_ = {};
    table_.columns = {"system",     "gpus",     "dollars_per_hour", "throughput",
                      "unit",       "dollars_per_million", "front", "best_strategy"};
    const ResourcePareto* p = in.pareto;
    const QString empty = emptyReason(p);
    setEmptyMessage(empty);
    for (auto* a : chart()->axes())
        a->setVisible(empty.isEmpty());
    for (auto* s : systems_)
        chart()->removeSeries(s);
    qDeleteAll(systems_);
    systems_.clear();
    front_->clear();
    if (!empty.isEmpty()) return;

    y_->setTitleText(QString::fromStdString(p->unit));
    auto resource = [&](const ResourcePoint& r) {
        return dollars_ ? r.dollarsPerHour() : double(r.gpus);
    };
    double xlo = 1e300, xhi = 0, ylo = 1e300, yhi = 0;
    QList<QPointF> front;
    QStringList ids;
    for (const ResourcePoint& r : p->points)
        if (!ids.contains(QString::fromStdString(r.systemId)))
            ids << QString::fromStdString(r.systemId);
    const QStringList labels = legendLabels(ids);
    for (const ResourcePoint& r : p->points) {
        const QString sys = QString::fromStdString(r.systemId);
        QScatterSeries* series = seriesAt(std::size_t(ids.indexOf(sys)), labels);
        const bool onFront = dollars_ ? r.frontDollars : r.frontGpus;
        table_.rows.append(
            {sys, QString::number(r.gpus), formatNumber(r.dollarsPerHour(), 6),
             r.feasible ? formatNumber(r.best.tokensPerS, 6) : QString(),
             QString::fromStdString(p->unit),
             r.dollarsPerMillion() > 0 ? formatNumber(r.dollarsPerMillion(), 6) : QString(),
             onFront ? "1" : "0",
             r.feasible ? QString::fromStdString(r.spec)
                        : "(" + QString::fromStdString(r.whyNone) + ")"});
        if (!r.feasible) continue;
        const QPointF pt(resource(r), r.best.tokensPerS);
        series->append(pt);
        if (onFront) front << pt;
        xlo = std::min(xlo, pt.x());
        xhi = std::max(xhi, pt.x());
        ylo = std::min(ylo, pt.y());
        yhi = std::max(yhi, pt.y());
    }
    std::sort(front.begin(), front.end(),
              [](const QPointF& a, const QPointF& b) { return a.x() < b.x(); });
    front_->replace(front);
    // Whole doublings (GPUs; ×4 steps over a wide span, so the labels never collide) or
    // decades (dollars, throughput), with a margin.
    const double xb = dollars_ ? 10 : (xhi / xlo > 64 ? 4 : 2);
    x_->setBase(xb);
    x_->setRange(floorPow(xlo / 1.1, xb), ceilPow(xhi * 1.1, xb));
    y_->setRange(floorPow(ylo / 1.1, 10), ceilPow(yhi * 1.1, 10));
    applyChartStyle(chart(), style_);
    restyle();
}

ChartTable ParetoChart::table() const { return table_; }

} // namespace madmax::ui
