#include "heatmap_chart.hpp"

#include <QChart>
#include <QLegend>
#include <QLegendMarker>
#include <QLinearGradient>
#include <QResizeEvent>

#include <algorithm>
#include <cmath>
#include <set>

namespace madmax::ui {

HeatmapChart::HeatmapChart(QWidget* parent) : ExplorerChart(parent) {
    QChart* c = chart();
    c->setTitle(title());
    cells_ = new QScatterSeries;
    cells_->setName("best tok/s/GPU");
    cells_->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
    infeasible_ = new QScatterSeries;
    infeasible_->setName("nothing fits");
    infeasible_->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
    best_ = new QScatterSeries;
    best_->setName("best");
    best_->setMarkerShape(QScatterSeries::MarkerShapeStar);
    for (auto* s : {cells_, infeasible_, best_})
        c->addSeries(s);
    x_ = new QCategoryAxis;
    y_ = new QCategoryAxis;
    x_->setTitleText("TP");
    y_->setTitleText("PP");
    for (auto* a : {x_, y_}) {
        a->setLabelsPosition(QCategoryAxis::AxisLabelsPositionCenter);
        a->setStartValue(0);
    }
    colors_ = new QColorAxis;
    colors_->setTitleText("tokens/s per GPU");
    colors_->setTitleVisible(false); // the chart title names the unit; a rotated title collides
    c->addAxis(x_, Qt::AlignBottom);
    c->addAxis(y_, Qt::AlignLeft);
    c->addAxis(colors_, Qt::AlignRight);
    for (auto* s : {cells_, infeasible_, best_}) {
        s->attachAxis(x_);
        s->attachAxis(y_);
    }
    cells_->attachAxis(colors_);
    c->legend()->setAlignment(Qt::AlignBottom);
    // The cells' colours are explained by the colour bar; a single legend swatch would lie.
    for (QLegendMarker* m : c->legend()->markers(cells_))
        m->setVisible(false);
    connect(c, &QChart::plotAreaChanged, this, [this](const QRectF&) { resizeMarkers(); });
    setToolTip(description());
    restyle();
}

QString HeatmapChart::description() const {
    return "Each cell is the best configuration with that TP and PP degree over every other "
           "dimension the search spans (VP, CP, DP, micro-batch, ZeRO, recompute, SP, overlap); "
           "grey "
           "cells have valid configurations but none fits in memory.";
}

void HeatmapChart::restyle() {
    QLinearGradient g(0, 0, 0, 1);
    // Viridis-like, colour-blind safe and monotone in lightness.
    g.setColorAt(0.0, QColor(0x44, 0x01, 0x54));
    g.setColorAt(0.25, QColor(0x3B, 0x52, 0x8B));
    g.setColorAt(0.5, QColor(0x21, 0x90, 0x8C));
    g.setColorAt(0.75, QColor(0x5D, 0xC8, 0x63));
    g.setColorAt(1.0, QColor(0xFD, 0xE7, 0x25));
    colors_->setGradient(g);
    cells_->setPen(Qt::NoPen);
    infeasible_->setColor(QColor(0xBB, 0xBB, 0xBB));
    infeasible_->setPen(Qt::NoPen);
    best_->setColor(QColor(0xD5, 0x5E, 0x00));
    best_->setBorderColor(Qt::white);
    best_->setMarkerSize(18);
}

void HeatmapChart::setInput(const ChartInput& in) {
    table_ = {};
    table_.columns = {"tp", "pp", "feasible", "best_tokens_per_s_per_gpu", "best_strategy"};
    const bool nothing = !in.search || in.search->heatmap.empty();
    setEmptyMessage(!in.search ? "Run a search (Design space → Search) to fill the map"
                    : nothing  ? "The search found no configuration"
                               : QString());
    for (auto* a : chart()->axes())
        a->setVisible(!nothing); // the message stands alone, over no axes
    if (nothing) return;
    setGrid(*in.search);

    QList<QPointF> feasible, none, best;
    QList<qreal> values;
    const Candidate* top = in.search->top.empty() ? nullptr : &in.search->top.front();
    for (const auto& c : in.search->heatmap) {
        const QPointF p(tps_.indexOf(c.tp) + 0.5, pps_.indexOf(c.pp) + 0.5);
        if (c.anyFeasible) {
            const double v = c.best.tokensPerS / c.best.gpus;
            feasible << p;
            values << v;
            if (top && c.best.strategy.tp == top->strategy.tp &&
                c.best.strategy.pp == top->strategy.pp)
                best << p;
            table_.rows.append({QString::number(c.tp), QString::number(c.pp), "1",
                                formatNumber(v, 6),
                                QString::fromStdString(candidateSpec(c.best))});
        } else if (c.anyValid) {
            none << p;
            table_.rows.append({QString::number(c.tp), QString::number(c.pp), "0", "", ""});
        }
    }
    cells_->replace(feasible);
    infeasible_->replace(none);
    best_->replace(best);
    colourCells(values);
    resizeMarkers();
}

void HeatmapChart::setGrid(const SearchResult& search) {
    std::set<int> tps, pps;
    for (const auto& c : search.heatmap) {
        tps.insert(c.tp);
        pps.insert(c.pp);
    }
    tps_ = QList<int>(tps.begin(), tps.end());
    pps_ = QList<int>(pps.begin(), pps.end());
    for (auto* a : {x_, y_})
        for (const QString& l : a->categoriesLabels())
            a->remove(l);
    // Category i spans [i, i+1]; its cell is drawn at i + 0.5.
    for (int i = 0; i < tps_.size(); ++i)
        x_->append(QString::number(tps_[i]), i + 1);
    for (int i = 0; i < pps_.size(); ++i)
        y_->append(QString::number(pps_[i]), i + 1);
    x_->setRange(0, std::max<qsizetype>(1, tps_.size()));
    y_->setRange(0, std::max<qsizetype>(1, pps_.size()));
}

namespace {

/// The colour at fraction f (clamped to [0, 1]) of a gradient's stops, interpolated linearly.
QColor colourAt(const QGradientStops& stops, double f) {
    f = std::clamp(f, 0.0, 1.0);
    for (int k = 1; k < stops.size(); ++k)
        if (f <= stops[k].first) {
            const double u =
                (f - stops[k - 1].first) / std::max(1e-12, stops[k].first - stops[k - 1].first);
            const QColor a = stops[k - 1].second, b = stops[k].second;
            return QColor::fromRgbF(a.redF() + u * (b.redF() - a.redF()),
                                    a.greenF() + u * (b.greenF() - a.greenF()),
                                    a.blueF() + u * (b.blueF() - a.blueF()));
        }
    return stops.isEmpty() ? QColor(Qt::gray) : stops.last().second;
}

} // namespace

void HeatmapChart::colourCells(const QList<qreal>& values) {
    if (values.isEmpty()) return;
    double lo = *std::min_element(values.begin(), values.end());
    double hi = *std::max_element(values.begin(), values.end());
    if (hi <= lo) hi = lo + 1;
    // The colour bar on round ticks too: a 1-2-5 step, the range widened to whole steps.
    // Each cell coloured from the bar's own gradient over that range (colorBy would reset the
    // bar to the data's min and max).
    const NiceTicks t = niceTicks(lo, hi, 4);
    const QGradientStops stops = colors_->gradient().stops();
    for (int i = 0; i < values.size(); ++i)
        cells_->setPointConfiguration(
            i, QXYSeries::PointConfiguration::Color,
            colourAt(stops, (values[i] - t.min) / std::max(1e-12, t.max - t.min)));
    colors_->setRange(t.min, t.max);
    colors_->setTickCount(int(std::lround((t.max - t.min) / t.step)) + 1);
}

void HeatmapChart::resizeMarkers() {
    const QRectF area = chart()->plotArea();
    if (tps_.isEmpty() || pps_.isEmpty() || area.isEmpty()) return;
    const double size =
        std::max(4.0, std::min(area.width() / tps_.size(), area.height() / pps_.size()) * 0.95);
    cells_->setMarkerSize(size);
    infeasible_->setMarkerSize(size);
}

void HeatmapChart::resizeEvent(QResizeEvent* e) {
    ExplorerChart::resizeEvent(e);
    resizeMarkers();
}

ChartTable HeatmapChart::table() const {
    return table_;
}

} // namespace madmax::ui
