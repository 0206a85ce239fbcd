#include "memory_chart.hpp"

#include <QChart>
#include <QCursor>
#include <QLegend>
#include <QToolTip>

#include <algorithm>

namespace madmax::ui {

namespace {
const Component kParts[] = {Component::Weights,        Component::ExpertWeights,
                            Component::EmbeddingTables,
                            Component::Grads,          Component::OptimizerState,
                            Component::Activations,    Component::KvCache,
                            Component::Reserve};
/// MoE training: the routed experts' share of the weights as its own segment.
std::vector<double> parts(const Result& r) {
    const MemoryBreakdown& m = r.memory;
    const double experts =
        r.moe.active ? std::min(r.moe.expertWeightsBytes, m.weightsBytes) : 0.0;
    const double tables =
        r.dlrmResult.active ? std::min(r.dlrmResult.tableWeightsBytes, m.weightsBytes) : 0.0;
    return {(m.weightsBytes - experts - tables) / 1e9, experts / 1e9, tables / 1e9,
            m.gradsBytes / 1e9,               m.optimizerBytes / 1e9,
            m.activationsBytes / 1e9,         m.kvCacheBytes / 1e9,
            m.reserveBytes / 1e9};
}
} // namespace

MemoryChart::MemoryChart(QWidget* parent) : ExplorerChart(parent) {
    QChart* c = chart();
    c->setTitle(title());
    series_ = new QStackedBarSeries;
    QStringList names;
    for (Component p : kParts) names << componentName(p);
    sets_ = appendBarSets(series_, names);
    c->addSeries(series_);
    capacity_ = new QLineSeries;
    capacity_->setName("Capacity");
    c->addSeries(capacity_);
    categories_ = new QBarCategoryAxis;
    values_ = new QValueAxis;
    values_->setTitleText("GB per GPU");
    values_->setLabelFormat("%.0f");
    lineX_ = new QValueAxis;
    lineX_->setVisible(false);
    c->addAxis(categories_, Qt::AlignBottom);
    c->addAxis(lineX_, Qt::AlignBottom);
    c->addAxis(values_, Qt::AlignLeft);
    series_->attachAxis(categories_);
    series_->attachAxis(values_);
    capacity_->attachAxis(lineX_);
    capacity_->attachAxis(values_);
    c->legend()->setAlignment(Qt::AlignRight);
    setToolTip(description());
    restyle();
    showComponentTooltips(series_, sets_,
                          std::vector<Component>(std::begin(kParts), std::end(kParts)), "GB");
}

QString MemoryChart::description() const {
    return "Memory of the fullest pipeline stage: 16-bit weights, gradients and Adam state sharded "
           "per ZeRO stage (Rajbhandari et al. SC20), activations per Korthikanti et al. 2022 "
           "times "
           "the micro-batches in flight, and a reserve; the line is the HBM capacity.";
}

void MemoryChart::restyle() {
    styleComponentSets(sets_, std::vector<Component>(std::begin(kParts), std::end(kParts)), style_);
    QPen pen(QColor(0xD5, 0x5E, 0x00));
    pen.setWidthF(2);
    pen.setStyle(Qt::DashLine);
    capacity_->setPen(pen);
}

void MemoryChart::setInput(const ChartInput& in) {
    if (!in.current) return;
    std::vector<std::vector<double>> bars;
    QStringList names;
    if (in.baseline) {
        bars.push_back(parts(in.baseline->eval.result));
        names << "Baseline";
    }
    bars.push_back(parts(in.current->result));
    names << (in.current->result.memory.fits() ? "Current" : "Current (does not fit)");
    setCategories(categories_, names_, names);
    const double maxTotal = fillStackedBars(sets_, bars);
    capacityGB_ = in.current->result.memory.capacityBytes / 1e9;
    const double n = double(bars.size());
    lineX_->setRange(-0.5, n - 0.5);
    capacity_->replace(QList<QPointF>{{-0.5, capacityGB_}, {n - 0.5, capacityGB_}});
    setNiceRange(values_, std::max(maxTotal, capacityGB_) * 1.05);
    // Serving has no gradients or optimizer state, training no KV cache: not in the legend.
    if (showOccurringSets(series_, sets_, bars, active_, this)) restyle();
}

ChartTable MemoryChart::table() const {
    ChartTable t;
    t.columns = {"bar", "component", "GB"};
    for (int i = 0; i < names_.size(); ++i)
        for (std::size_t k = 0; k < sets_.size(); ++k)
            t.rows.append({names_[i], sets_[k]->label(), formatNumber(sets_[k]->at(i), 6)});
    t.rows.append({"capacity", "HBM", formatNumber(capacityGB_, 6)});
    return t;
}

} // namespace madmax::ui
