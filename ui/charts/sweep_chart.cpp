#include "sweep_chart.hpp"

#include <QChart>
#include <QLegend>
#include <QLineSeries>
#include <QScatterSeries>

#include <algorithm>

namespace madmax::ui {

namespace {
const Component kLineColours[] = {Component::Forward, Component::CommTP, Component::Recompute,
                                  Component::CommDP,  Component::CommPP, Component::Backward,
                                  Component::Bubble,  Component::CommCP};
/// A knob's colour follows its name, not its position among the lines drawn: scale_out_bw is
/// the same colour in every chart, in the explorer and in `madmax figure`.
Component colourOfKnob(const QString& knob) {
    static const QStringList knobs = {"flops",        "hbm_bw",           "hbm_capacity",
                                      "scale_up_bw",  "scale_out_bw",     "scale_up_latency",
                                      "scale_out_latency", "scale_up_domain"};
    const int i = knobs.indexOf(knob);
    return kLineColours[(i >= 0 ? i : int(qHash(knob) % 8u)) % 8];
}
}

SweepChart::SweepChart(QWidget* parent) : ExplorerChart(parent) {
    QChart* c = chart();
    c->setTitle(title());
    x_ = new QLogValueAxis;
    x_->setBase(2);
    x_->setTitleText("× preset value");
    x_->setLabelFormat("%g");
    y_ = new QValueAxis;
    y_->setTitleText("speedup");
    y_->setLabelFormat("%.2f");
    c->addAxis(x_, Qt::AlignBottom);
    c->addAxis(y_, Qt::AlignLeft);
    changes_ = new QScatterSeries;
    changes_->setName("new strategy");
    changes_->setMarkerShape(QScatterSeries::MarkerShapeTriangle);
    changes_->setMarkerSize(11);
    c->addSeries(changes_);
    changes_->attachAxis(x_);
    changes_->attachAxis(y_);
    c->legend()->setAlignment(Qt::AlignBottom);
    setToolTip(description());
    restyle();
}

QString SweepChart::description() const {
    return "Each line scales one hardware knob and re-runs the search at every factor, since the "
           "best strategy changes with the hardware; triangles mark where it does.";
}

void SweepChart::restyle() {
    for (std::size_t i = 0; i < lines_.size(); ++i) {
        QPen pen(componentColor(colourOfKnob(lines_[i]->name())));
        pen.setWidthF(2);
        if (style_.hatching) pen.setStyle(Qt::PenStyle(1 + int(i % 5)));
        lines_[i]->setPen(pen);
    }
    changes_->setColor(Qt::black);
}

void SweepChart::setInput(const ChartInput& in) {
    table_ = {};
    table_.columns = {"knob", "factor", "speedup", "best_strategy", "strategy_changed"};
    const bool none = !in.sweeps || in.sweeps->empty();
    setEmptyMessage(none ? "Sweep the checked knobs (Co-design) to draw speedup vs factor"
                         : QString());
    for (auto* a : chart()->axes())
        a->setVisible(!none);
    if (none) return;
    for (auto* l : lines_)
        chart()->removeSeries(l);
    qDeleteAll(lines_);
    lines_.clear();
    QList<QPointF> changes;
    double lo = 1e300, hi = 0, ylo = 1, yhi = 1;
    for (const auto& sw : *in.sweeps) {
        if (sw.axes.size() != 1) continue;
        auto* line = new QLineSeries;
        line->setName(QString::fromStdString(sw.axes[0].knob));
        line->setPointsVisible(true);
        const auto changed = sw.strategyChanges();
        QList<QPointF> pts;
        for (std::size_t i = 0; i < sw.points.size(); ++i) {
            const auto& p = sw.points[i];
            const QPointF pt(p.factors[0], p.feasible ? p.speedup : 0.0);
            pts << pt;
            lo = std::min(lo, pt.x());
            hi = std::max(hi, pt.x());
            ylo = std::min(ylo, pt.y());
            yhi = std::max(yhi, pt.y());
            const bool isChange = std::find(changed.begin(), changed.end(), i) != changed.end();
            if (isChange) changes << pt;
            table_.rows.append({line->name(), formatNumber(p.factors[0], 6),
                                formatNumber(pt.y(), 6),
                                p.feasible ? QString::fromStdString(candidateSpec(p.best))
                                           : "(" + QString::fromStdString(p.whyNone) + ")",
                                isChange ? "1" : "0"});
        }
        line->replace(pts);
        chart()->addSeries(line);
        line->attachAxis(x_);
        line->attachAxis(y_);
        lines_.push_back(line);
    }
    changes_->replace(changes);
    if (hi > 0) x_->setRange(lo / 1.2, hi * 1.2);
    setNiceAxis(y_, std::max(0.0, ylo - 0.05), yhi + 0.05);
    applyChartStyle(chart(), style_);
    restyle();
}

ChartTable SweepChart::table() const {
    return table_;
}

} // namespace madmax::ui
