#include "tornado_chart.hpp"

#include <QChart>
#include <QLegend>

#include <algorithm>
#include <cmath>

namespace madmax::ui {

TornadoChart::TornadoChart(QWidget* parent) : ExplorerChart(parent) {
    QChart* c = chart();
    c->setTitle(title());
    series_ = new QHorizontalBarSeries;
    half_ = new QBarSet("×0.5");
    twice_ = new QBarSet("×2");
    series_->append(half_);
    series_->append(twice_);
    series_->setBarWidth(0.9);
    c->addSeries(series_);
    const BarAxes axes = addBarAxes(c, series_, Qt::Horizontal, "change in best throughput (%)", "%+.0f");
    knobs_ = axes.categories;
    values_ = axes.values;
    c->legend()->setAlignment(Qt::AlignBottom);
    setToolTip(description());
    restyle();
}

QString TornadoChart::description() const {
    return "For each hardware knob, the design-space search is re-run with the knob halved and "
           "doubled; bars show how the best achievable throughput changes (MAD-Max's co-design "
           "question: which hardware change buys the most?).";
}

void TornadoChart::restyle() {
    half_->setBrush(componentBrush(Component::CommDP, style_));
    twice_->setBrush(componentBrush(Component::Forward, style_));
    for (auto* s : {half_, twice_})
        s->setPen(QPen(style_.publication ? Qt::black : Qt::transparent, 0.5));
}

void TornadoChart::setInput(const ChartInput& in) {
    table_ = {};
    table_.columns = {"knob", "speedup_at_half", "speedup_at_double"};
    const bool none = !in.sensitivity || in.sensitivity->empty();
    setEmptyMessage(none ? "Run Sensitivity (Co-design) to rank the hardware knobs" : QString());
    for (auto* a : chart()->axes())
        a->setVisible(!none);
    if (none) return;
    // Most influential at the top: the category axis lists bottom-up.
    std::vector<Sensitivity> s = *in.sensitivity;
    std::reverse(s.begin(), s.end());
    QStringList names;
    QList<double> h, t;
    double span = 1;
    for (const auto& x : s) {
        names << QString::fromStdString(x.knob);
        h << (x.speedupHalf - 1) * 100;
        t << (x.speedupDouble - 1) * 100;
        span = std::max({span, std::fabs(h.back()), std::fabs(t.back())});
    }
    for (const auto& x : *in.sensitivity)
        table_.rows.append({QString::fromStdString(x.knob), formatNumber(x.speedupHalf, 6),
                            formatNumber(x.speedupDouble, 6)});
    knobs_->clear();
    knobs_->append(names);
    half_->remove(0, half_->count());
    twice_->remove(0, twice_->count());
    half_->append(h);
    twice_->append(t);
    setNiceAxis(values_, -span * 1.05, span * 1.05, /*signedLabels=*/true);
}

ChartTable TornadoChart::table() const {
    return table_;
}

} // namespace madmax::ui
