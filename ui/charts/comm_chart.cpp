#include "comm_chart.hpp"

#include <cmath>

#include <QChart>
#include <QLegend>

#include <algorithm>

namespace madmax::ui {

CommChart::CommChart(QWidget* parent) : ExplorerChart(parent) {
    QChart* c = chart();
    c->setTitle(title());
    series_ = new QHorizontalBarSeries;
    serialized_ = new QBarSet("Serialized");
    exposed_ = new QBarSet("Exposed");
    series_->append(serialized_);
    series_->append(exposed_);
    c->addSeries(series_);
    const BarAxes axes = addBarAxes(c, series_, Qt::Horizontal, "seconds per step", "%.3g");
    categories_ = axes.categories;
    values_ = axes.values;
    c->legend()->setAlignment(Qt::AlignBottom);
    setToolTip(description());
    restyle();
}

QString CommChart::description() const {
    return "Each collective of each parallel dimension: 'serialized' is the time it occupies its "
           "stream over the step, 'exposed' the time the compute stream waited for it (docs/developer/model.md "
           "§4). "
           "Collective times are hierarchical α–β rings over the network tiers the group spans.";
}

void CommChart::restyle() {
    serialized_->setBrush(QBrush(componentColor(Component::Baseline)));
    exposed_->setBrush(componentBrush(Component::CommDP, style_));
    if (baselineExposed_) {
        QColor c = componentColor(Component::CommDP);
        c.setAlpha(110);
        baselineExposed_->setBrush(style_.hatching ? QBrush(c.darker(150), Qt::BDiagPattern)
                                                   : QBrush(c));
    }
    for (QBarSet* s : series_->barSets())
        s->setPen(QPen(style_.publication ? Qt::black : Qt::transparent, 0.5));
}

void CommChart::setInput(const ChartInput& in) {
    if (!in.current) return;
    const Result& r = in.current->result;
    const Result* b = in.baseline ? &in.baseline->eval.result : nullptr;
    QStringList names;
    QList<double> ser, exp, bexp;
    double maxV = 0;
    for (int d = 0; d < kParallelDimCount; ++d)
        for (int k = 0; k < kCollectiveCount; ++k) {
            const CommTime& t = r.comm[d][k];
            const CommTime bt = b ? b->comm[d][k] : CommTime{};
            if (t.serializedS <= 0 && bt.serializedS <= 0) continue;
            QString name = QString("%1 %2").arg(
                QString::fromStdString(std::string(toString(ParallelDim(d)))).toUpper(),
                QString::fromStdString(std::string(toString(Collective(k)))).replace('_', '-'));
            // MoE: how the dispatch/combine bytes split between NVLink and the network.
            if (ParallelDim(d) == ParallelDim::EP && Collective(k) == Collective::AllToAll &&
                r.moe.active) {
                const double up = r.moe.dispatchScaleUpBytes + r.moe.combineScaleUpBytes;
                const double out = r.moe.dispatchScaleOutBytes + r.moe.combineScaleOutBytes;
                if (up + out > 0)
                    name += QString(" (%1% network)").arg(std::lround(100.0 * out / (up + out)));
            }
            names << name;
            ser << t.serializedS;
            exp << t.exposedS;
            bexp << bt.exposedS;
            maxV = std::max({maxV, t.serializedS, bt.serializedS});
        }
    if (names.isEmpty()) {
        names << "(no communication)";
        ser << 0;
        exp << 0;
        bexp << 0;
    }
    if (b && !baselineExposed_) {
        baselineExposed_ = new QBarSet("Baseline exposed");
        series_->append(baselineExposed_);
        restyle();
    } else if (!b && baselineExposed_) {
        series_->remove(baselineExposed_); // deletes the set
        baselineExposed_ = nullptr;
    }
    if (names != names_) {
        categories_->clear();
        categories_->append(names);
        names_ = names;
    }
    auto fill = [](QBarSet* set, const QList<double>& v) {
        if (set->count() != v.size()) {
            set->remove(0, set->count());
            set->append(v);
        } else {
            for (int i = 0; i < v.size(); ++i)
                set->replace(i, v[i]);
        }
    };
    fill(serialized_, ser);
    fill(exposed_, exp);
    if (baselineExposed_) fill(baselineExposed_, bexp);
    setNiceRange(values_, std::max(maxV, 1e-9) * 1.02);
}

ChartTable CommChart::table() const {
    ChartTable t;
    t.columns = {"collective", "serialized_s", "exposed_s"};
    if (baselineExposed_) t.columns << "baseline_exposed_s";
    for (int i = 0; i < names_.size(); ++i) {
        QStringList row = {names_[i], formatNumber(serialized_->at(i), 6),
                           formatNumber(exposed_->at(i), 6)};
        if (baselineExposed_) row << formatNumber(baselineExposed_->at(i), 6);
        t.rows.append(row);
    }
    return t;
}

} // namespace madmax::ui
