#include "curve_chart.hpp"

#include <QChart>
#include <QLegend>

#include <algorithm>

namespace madmax::ui {

namespace {
const Component kLines[] = {Component::Forward, Component::CommTP, Component::Recompute,
                            Component::CommPP,  Component::CommDP, Component::Backward};
}

CurveChart::CurveChart(QWidget* parent) : ExplorerChart(parent) {
    QChart* c = chart();
    c->setTitle(title());
    x_ = new QValueAxis;
    x_->setTitleText("TPOT (ms)");
    x_->setLabelFormat("%.0f");
    y_ = new QValueAxis;
    y_->setTitleText("tokens/s per GPU");
    y_->setLabelFormat("%.0f");
    c->addAxis(x_, Qt::AlignBottom);
    c->addAxis(y_, Qt::AlignLeft);
    slaUpper_ = new QLineSeries;
    slaLower_ = new QLineSeries;
    sla_ = new QAreaSeries(slaUpper_, slaLower_);
    slaUpper_->setParent(sla_); // QAreaSeries does not own its boundary series
    slaLower_->setParent(sla_);
    sla_->setName("TPOT objective");
    point_ = new QScatterSeries;
    point_->setName("operating point");
    point_->setMarkerShape(QScatterSeries::MarkerShapeStar);
    point_->setMarkerSize(16);
    for (QAbstractSeries* s :
         {static_cast<QAbstractSeries*>(sla_), static_cast<QAbstractSeries*>(point_)}) {
        c->addSeries(s);
        s->attachAxis(x_);
        s->attachAxis(y_);
    }
    c->legend()->setAlignment(Qt::AlignBottom);
    setToolTip(description());
    restyle();
}

QString CurveChart::description() const {
    return "Each point doubles the batch per replica: throughput rises while TPOT grows, until the "
           "KV "
           "cache no longer fits (hollow points). The shaded box is the TPOT objective; the star "
           "is the "
           "scenario's operating point. Pinned configurations are drawn beside it.";
}

void CurveChart::restyle() {
    QColor box = componentColor(Component::Recompute);
    box.setAlpha(50);
    sla_->setBrush(style_.hatching ? QBrush(box.darker(200), Qt::BDiagPattern) : QBrush(box));
    sla_->setPen(QPen(componentColor(Component::Recompute), 1, Qt::DashLine));
    point_->setColor(componentColor(Component::CommTP));
    point_->setBorderColor(Qt::black);
    // The current configuration's line (always the last) keeps the first colour whatever is
    // pinned: the same series has the same colour in the explorer and in `madmax figure`.
    for (std::size_t i = 0; i < lines_.size(); ++i) {
        const bool current = i + 1 == lines_.size();
        QPen pen(componentColor(current ? kLines[0] : kLines[1 + i % 5]));
        pen.setWidthF(2);
        if (style_.hatching) pen.setStyle(Qt::PenStyle(1 + int(i % 5)));
        lines_[i]->setPen(pen);
    }
}

void CurveChart::setInput(const ChartInput& in) {
    table_ = {};
    table_.columns = {"configuration",        "batch", "tpot_ms", "ttft_ms",
                      "tokens_per_s_per_gpu", "fits"};
    if (!in.current || !in.current->result.isInference) return;
    for (auto* l : lines_)
        chart()->removeSeries(l);
    qDeleteAll(lines_);
    lines_.clear();
    double maxX = 1, maxY = 1;
    auto addCurve = [&](const QString& name, const std::vector<CurvePoint>& pts) {
        auto* line = new QLineSeries;
        line->setName(name);
        line->setPointsVisible(true);
        QList<QPointF> xy;
        for (const auto& p : pts) {
            if (!p.fits) continue; // past the memory limit: listed in the table, not drawn
            xy << QPointF(p.tpotS * 1e3, p.outputTokensPerSPerGpu);
            maxX = std::max(maxX, p.tpotS * 1e3);
            maxY = std::max(maxY, p.outputTokensPerSPerGpu);
        }
        for (const auto& p : pts)
            table_.rows.append({name, QString::number(p.batch), formatNumber(p.tpotS * 1e3, 6),
                                formatNumber(p.ttftS * 1e3, 6),
                                formatNumber(p.outputTokensPerSPerGpu, 6), p.fits ? "1" : "0"});
        line->replace(xy);
        chart()->addSeries(line);
        line->attachAxis(x_);
        line->attachAxis(y_);
        lines_.push_back(line);
    };
    for (const auto& p : in.pinned)
        if (p.eval.result.isInference) addCurve(p.name, p.eval.curve);
    addCurve("Current", in.current->curve);
    const auto& ir = in.current->result.inference;
    point_->replace(QList<QPointF>{{ir.tpotS * 1e3, ir.outputTokensPerSPerGpu}});
    maxX = std::max(maxX, ir.tpotS * 1e3);
    maxY = std::max(maxY, ir.outputTokensPerSPerGpu); // the point never leaves the axes
    const double tpotObj = in.current->scenario.workload.inference.tpotObjectiveS * 1e3;
    const double top = maxY * 1.1;
    if (tpotObj > 0) {
        slaUpper_->replace(QList<QPointF>{{0, top}, {tpotObj, top}});
        slaLower_->replace(QList<QPointF>{{0, 0}, {tpotObj, 0}});
        maxX = std::max(maxX, tpotObj);
    } else {
        slaUpper_->clear();
        slaLower_->clear();
    }
    sla_->setVisible(tpotObj > 0);
    setNiceAxis(x_, 0, maxX * 1.05);
    setNiceAxis(y_, 0, top);
    applyChartStyle(chart(), style_);
    restyle();
}

ChartTable CurveChart::table() const {
    return table_;
}

} // namespace madmax::ui
