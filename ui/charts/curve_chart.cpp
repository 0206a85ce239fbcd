#include "curve_chart.hpp"

#include <QChart>
#include <QLegend>

#include <algorithm>

namespace madmax::ui {

namespace {
/// One curve point's row of the chart's table: a prefill pool's by load, else by batch.
QStringList tableRow(const QString& name, const CurvePoint& p, bool prompts) {
    const QString fits = p.fits ? "1" : "0";
    if (prompts)
        return {name, formatNumber(p.load, 4), formatNumber(p.ttftS * 1e3, 6),
                formatNumber(p.promptTokensPerSPerGpu, 6), fits};
    return {name, QString::number(p.batch), formatNumber(p.tpotS * 1e3, 6),
            formatNumber(p.ttftS * 1e3, 6), formatNumber(p.outputTokensPerSPerGpu, 6), fits};
}

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
    if (prompts_)
        return "A prefill pool runs the same pass at every load; each point is a mean load, the "
               "share of its capacity the traffic uses. Its prompts queue for it (an M/D/1 "
               "queue), so TTFT grows without bound as the load nears 1. The shaded box is the "
               "TTFT objective; the star is the scenario's operating point. Pinned prefill pools "
               "are drawn beside it.";
    return "Each point doubles the batch per replica: throughput rises while TPOT grows, until the "
           "KV cache no longer fits (hollow points). The shaded box is the TPOT objective; the "
           "star is the scenario's operating point. Pinned configurations are drawn beside it.";
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
    if (!in.current || !in.current->result.isInference) return;
    // A prefill pool paces no output tokens: its curve is TTFT against prompt tokens/s per GPU
    // as its load is swept (latencyThroughputCurve), and only pinned prefill pools join it.
    prompts_ = in.current->result.inference.prefillPool();
    table_.columns = {"configuration",        "batch", "tpot_ms", "ttft_ms",
                      "tokens_per_s_per_gpu", "fits"};
    if (prompts_) table_.columns = {"configuration", "load", "ttft_ms",
                                    "prompt_tokens_per_s_per_gpu", "fits"};
    chart()->setTitle(title());
    setToolTip(description());
    x_->setTitleText(prompts_ ? "TTFT (ms)" : "TPOT (ms)");
    y_->setTitleText(prompts_ ? "prompt tokens/s per GPU" : "tokens/s per GPU");
    sla_->setName(prompts_ ? "TTFT objective" : "TPOT objective");
    for (auto* l : lines_)
        chart()->removeSeries(l);
    qDeleteAll(lines_);
    lines_.clear();
    double maxX = 1, maxY = 1;
    auto xOf = [this](const CurvePoint& p) { return (prompts_ ? p.ttftS : p.tpotS) * 1e3; };
    auto yOf = [this](const CurvePoint& p) {
        return prompts_ ? p.promptTokensPerSPerGpu : p.outputTokensPerSPerGpu;
    };
    auto addCurve = [&](const QString& name, const std::vector<CurvePoint>& pts) {
        auto* line = new QLineSeries;
        line->setName(name);
        line->setPointsVisible(true);
        QList<QPointF> xy;
        for (const auto& p : pts) {
            if (!p.fits) continue; // past the memory limit: listed in the table, not drawn
            xy << QPointF(xOf(p), yOf(p));
            maxX = std::max(maxX, xOf(p));
            maxY = std::max(maxY, yOf(p));
        }
        for (const auto& p : pts)
            table_.rows.append(tableRow(name, p, prompts_));
        line->replace(xy);
        chart()->addSeries(line);
        line->attachAxis(x_);
        line->attachAxis(y_);
        lines_.push_back(line);
    };
    for (const auto& p : in.pinned)
        if (p.eval.result.isInference && p.eval.result.inference.prefillPool() == prompts_)
            addCurve(p.name, p.eval.curve);
    addCurve("Current", in.current->curve);
    const Result& r = in.current->result;
    const auto& ir = r.inference;
    const QPointF here = prompts_ ? QPointF(ir.ttftS * 1e3, r.tokensPerSPerGpu)
                                  : QPointF(ir.tpotS * 1e3, ir.outputTokensPerSPerGpu);
    point_->replace(QList<QPointF>{here});
    maxX = std::max(maxX, here.x());
    maxY = std::max(maxY, here.y()); // the point never leaves the axes
    const auto& w = in.current->scenario.workload.inference;
    const double objective = (prompts_ ? w.ttftObjectiveS : w.tpotObjectiveS) * 1e3;
    const double top = maxY * 1.1;
    if (objective > 0) {
        slaUpper_->replace(QList<QPointF>{{0, top}, {objective, top}});
        slaLower_->replace(QList<QPointF>{{0, 0}, {objective, 0}});
        maxX = std::max(maxX, objective);
    } else {
        slaUpper_->clear();
        slaLower_->clear();
    }
    sla_->setVisible(objective > 0);
    // Near saturation a prefill pool's wait grows without bound: the axis stops at four times
    // the operating point's TTFT (the table lists every point).
    if (prompts_) maxX = std::min(maxX, 4 * std::max(here.x(), objective));
    setNiceAxis(x_, 0, maxX * 1.05);
    setNiceAxis(y_, 0, top);
    applyChartStyle(chart(), style_);
    restyle();
}

ChartTable CurveChart::table() const {
    return table_;
}

} // namespace madmax::ui
