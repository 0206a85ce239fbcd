#include "comparison_chart.hpp"

#include <QBarSet>
#include <QChart>
#include <QLegend>

#include <algorithm>

namespace madmax::ui {

namespace {
const QStringList kMetrics = {"Tokens/s per GPU", "MFU", "Exposed comm"};
const Component kSeriesColours[] = {Component::Forward, Component::CommTP,   Component::Recompute,
                                    Component::CommPP,  Component::Backward, Component::CommDP,
                                    Component::CommCP,  Component::Bubble};
} // namespace

ComparisonChart::ComparisonChart(QWidget* parent) : ExplorerChart(parent) {
    QChart* c = chart();
    c->setTitle(title());
    series_ = new QBarSeries;
    c->addSeries(series_);
    const BarAxes axes = addBarAxes(c, series_, Qt::Vertical, "% of the current scenario", "%.0f");
    categories_ = axes.categories;
    values_ = axes.values;
    categories_->append(kMetrics);
    c->legend()->setAlignment(Qt::AlignBottom);
    setToolTip(description());
}

QString ComparisonChart::description() const {
    return "Every pinned scenario and the current one: tokens/s per GPU, MFU and exposed "
           "communication time per step, each as a percentage of the current scenario's value "
           "(the exported table has the absolute numbers).";
}

void ComparisonChart::restyle() {
    const auto sets = series_->barSets();
    for (int i = 0; i < sets.size(); ++i) {
        const Component c = kSeriesColours[i % 8];
        sets[i]->setBrush(componentBrush(c, style_));
        sets[i]->setPen(QPen(style_.publication ? Qt::black : Qt::transparent, 0.5));
    }
}

void ComparisonChart::setInput(const ChartInput& in) {
    if (!in.current) return;
    struct Row {
        QString name;
        const Result* r;
    };
    QList<Row> rows;
    for (const auto& p : in.pinned)
        rows.append({p.name, &p.eval.result});
    rows.append({"Current", &in.current->result});
    const Result& cur = in.current->result;
    auto rel = [](double v, double ref) {
        return ref > 0 ? 100.0 * v / ref : (v > 0 ? 200.0 : 100.0);
    };

    // Keep sets alive when the list of scenarios is unchanged.
    auto sets = series_->barSets();
    if (sets.size() != rows.size()) {
        series_->clear();
        for (const auto& row : rows)
            series_->append(new QBarSet(row.name));
        sets = series_->barSets();
        restyle();
    }
    table_ = {};
    table_.columns = {"scenario", "tokens_per_s_per_gpu", "mfu", "exposed_comm_s"};
    double maxV = 100;
    for (int i = 0; i < rows.size(); ++i) {
        const Result& r = *rows[i].r;
        sets[i]->setLabel(rows[i].name);
        const double v[3] = {rel(r.tokensPerSPerGpu, cur.tokensPerSPerGpu), rel(r.mfu, cur.mfu),
                             rel(r.exposedCommS, cur.exposedCommS)};
        if (sets[i]->count() != 3) {
            sets[i]->remove(0, sets[i]->count());
            sets[i]->append({v[0], v[1], v[2]});
        } else {
            for (int k = 0; k < 3; ++k)
                sets[i]->replace(k, v[k]);
        }
        maxV = std::max({maxV, v[0], v[1], v[2]});
        table_.rows.append({rows[i].name, formatNumber(r.tokensPerSPerGpu, 6),
                            formatNumber(r.mfu, 6), formatNumber(r.exposedCommS, 6)});
    }
    setNiceRange(values_, maxV * 1.02);
}

ChartTable ComparisonChart::table() const {
    return table_;
}

} // namespace madmax::ui
