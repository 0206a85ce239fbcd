#include "comparison_chart.hpp"

#include <QBarSet>
#include <QChart>
#include <QLegend>

#include <algorithm>
#include <array>

namespace madmax::ui {

namespace {
const Component kSeriesColours[] = {Component::Forward, Component::CommTP,   Component::Recompute,
                                    Component::CommPP,  Component::Backward, Component::CommDP,
                                    Component::CommCP,  Component::Bubble};
} // namespace

ComparisonChart::ComparisonChart(QWidget* parent) : ExplorerChart(parent) {
    QChart* c = chart();
    c->setTitle(title());
    series_ = new QBarSeries;
    c->addSeries(series_);
    const BarAxes axes = addBarAxes(c, series_, Qt::Vertical, "% of baseline", "%.0f");
    categories_ = axes.categories;
    values_ = axes.values;
    categoryNames_ = {"Tokens/s/GPU", "MFU", "Step time"};
    categories_->append(categoryNames_);
    c->legend()->setAlignment(Qt::AlignBottom);
    setToolTip(description());
}

QString ComparisonChart::description() const {
    return "Every pinned scenario of the current workload and the current one, as a percentage of "
           "the first pin (the baseline): training shows tokens/s per GPU, MFU and step time; "
           "serving shows output tokens/s per GPU, TTFT and TPOT (the exported table has the "
           "absolute numbers).";
}

void ComparisonChart::restyle() {
    // "Current" (always the last set) keeps the first colour whatever is pinned, so it looks
    // the same in the explorer and in `madmax figure`; pins take the next colours in order.
    const auto sets = series_->barSets();
    for (int i = 0; i < sets.size(); ++i) {
        const bool current = i == sets.size() - 1;
        const Component c = current ? kSeriesColours[0] : kSeriesColours[1 + i % 7];
        sets[i]->setBrush(componentBrush(c, style_));
        sets[i]->setPen(QPen(style_.publication ? Qt::black : Qt::transparent, 0.5));
    }
}

void ComparisonChart::setInput(const ChartInput& in) {
    if (!in.current) return;
    // Pins of the current workload, compared with the current scenario as a percentage of the
    // first of them (the baseline): numbers that are large and stable in both workloads, never
    // a ratio of two near-zero times.
    const bool serving = in.current->result.isInference;
    struct Row {
        QString name;
        const Result* r;
    };
    QList<Row> rows;
    for (const auto& p : in.pinned)
        if (p.eval.result.isInference == serving) rows.append({p.name, &p.eval.result});
    const QStringList metrics = serving ? QStringList{"Tokens/s/GPU", "TTFT", "TPOT"}
                                        : QStringList{"Tokens/s/GPU", "MFU", "Step time"};
    if (categoryNames_ != metrics) {
        categories_->clear();
        categories_->append(metrics);
        categoryNames_ = metrics;
    }
    table_ = {};
    table_.columns = serving ? QStringList{"scenario", "output_tokens_per_s_per_gpu", "ttft_s",
                                           "tpot_s"}
                             : QStringList{"scenario", "tokens_per_s_per_gpu", "mfu", "step_time_s"};
    categories_->setVisible(!rows.isEmpty()); // no axes around an empty state
    values_->setVisible(!rows.isEmpty());
    if (rows.isEmpty()) {
        series_->clear();
        setEmptyMessage(in.pinned.isEmpty()
                            ? "Nothing pinned: View → Pin as Baseline (Ctrl+B) keeps the current "
                              "scenario to compare with"
                            : "The pinned scenarios are of the other workload");
        return;
    }
    setEmptyMessage({});
    rows.append({"Current", &in.current->result});
    auto metricsOf = [serving](const Result& r) -> std::array<double, 3> {
        if (serving)
            return {r.inference.outputTokensPerSPerGpu, r.inference.ttftS, r.inference.tpotS};
        return {r.tokensPerSPerGpu, r.mfu, r.stepTimeS};
    };
    const auto base = metricsOf(*rows.front().r);

    // Keep sets alive when the list of scenarios is unchanged.
    auto sets = series_->barSets();
    if (sets.size() != rows.size()) {
        series_->clear();
        for (const auto& row : rows)
            series_->append(new QBarSet(row.name));
        sets = series_->barSets();
        restyle();
    }
    double maxV = 100;
    for (int i = 0; i < rows.size(); ++i) {
        const auto m = metricsOf(*rows[i].r);
        sets[i]->setLabel(rows[i].name);
        std::array<double, 3> v{};
        for (int k = 0; k < 3; ++k)
            v[k] = base[k] > 0 ? 100.0 * m[k] / base[k] : 0.0;
        if (sets[i]->count() != 3) {
            sets[i]->remove(0, sets[i]->count());
            sets[i]->append({v[0], v[1], v[2]});
        } else {
            for (int k = 0; k < 3; ++k)
                sets[i]->replace(k, v[k]);
        }
        maxV = std::max({maxV, v[0], v[1], v[2]});
        table_.rows.append({rows[i].name, formatNumber(m[0], 6), formatNumber(m[1], 6),
                            formatNumber(m[2], 6)});
    }
    setNiceRange(values_, maxV * 1.02);
}

ChartTable ComparisonChart::table() const {
    return table_;
}

} // namespace madmax::ui
