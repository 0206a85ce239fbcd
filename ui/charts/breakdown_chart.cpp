#include "breakdown_chart.hpp"

#include <QChart>
#include <QCursor>
#include <QLegend>
#include <QLegendMarker>
#include <QToolTip>

#include <algorithm>

namespace madmax::ui {

const std::vector<Component>& BreakdownChart::components() {
    static const std::vector<Component> c = {
        Component::Embedding, Component::Forward, Component::Backward, Component::Recompute, Component::Optimizer,
        Component::CommTP,  Component::CommCP,   Component::CommEP,    Component::CommDP,
        Component::CommPP,  Component::Bubble,   Component::HostIdle, Component::Overhead};
    return c;
}

std::vector<double> BreakdownChart::barValues(const Result& r, bool overlapped) {
    auto comm = [&](ParallelDim d) {
        const CommTime t = r.dimTotal(d);
        return overlapped ? t.exposedS : t.serializedS;
    };
    // DLRM: the sparse part's lookups and updates apart from the dense forward and backward.
    const double lookup = r.dlrmResult.active ? r.dlrmResult.lookupFwdS : 0.0;
    const double update = r.dlrmResult.active ? r.dlrmResult.embBackwardS : 0.0;
    // Host idle (eager launches) is shown apart from the forward and backward it sits in.
    const double idleFwd = r.compute.hostStallForwardS;
    const double idleBwd = r.compute.hostStallS - idleFwd;
    return {lookup + update,
            r.compute.forwardS - lookup - idleFwd,
            r.compute.backwardS - update - idleBwd,
            r.compute.recomputeS,
            r.compute.optimizerS,
            comm(ParallelDim::TP),
            comm(ParallelDim::CP),
            comm(ParallelDim::EP),
            comm(ParallelDim::DP),
            comm(ParallelDim::PP),
            overlapped ? r.bubbleS : 0.0,
            r.compute.hostStallS,
            r.overheadS};
}

BreakdownChart::BreakdownChart(QWidget* parent) : ExplorerChart(parent) {
    QChart* c = chart();
    c->setTitle(title());
    series_ = new QHorizontalStackedBarSeries;
    for (Component comp : components()) {
        auto* set = new QBarSet(componentName(comp), this);
        sets_.push_back(set);
        series_->append(set);
    }
    c->addSeries(series_);
    const BarAxes axes = addBarAxes(c, series_, Qt::Horizontal, "seconds per step", "%.3g");
    categories_ = axes.categories;
    values_ = axes.values;
    c->legend()->setAlignment(Qt::AlignRight);
    setToolTip(description());
    restyle();
    showComponentTooltips(series_, sets_, components(), "s");
}

QString BreakdownChart::description() const {
    return "MAD-Max's breakdown (Hsia et al., ISCA 2024, Fig. 1): the serialized bar puts every "
           "collective at full length after the compute; the overlapped bar is the predicted step, "
           "compute + exposed communication + pipeline bubble + any stated framework overhead.";
}

void BreakdownChart::restyle() {
    styleComponentSets(sets_, components(), style_);
}

void BreakdownChart::setInput(const ChartInput& in) {
    if (!in.current) return;
    std::vector<std::vector<double>> bars;
    QStringList names;
    if (in.baseline) {
        bars.push_back(barValues(in.baseline->eval.result, false));
        bars.push_back(barValues(in.baseline->eval.result, true));
        names << "Baseline serialized"
              << "Baseline overlapped";
    }
    bars.push_back(barValues(in.current->result, false));
    bars.push_back(barValues(in.current->result, true));
    names << "Serialized"
          << "Overlapped";
    setCategories(categories_, barNames_, names);
    const double maxTotal = fillStackedBars(sets_, bars);
    setNiceRange(values_, maxTotal * 1.02);
    // CP, EP and the bubble are often absent.
    if (showOccurringSets(series_, sets_, bars, active_, this)) restyle();
}

ChartTable BreakdownChart::table() const {
    ChartTable t;
    t.columns = {"bar", "component", "seconds"};
    for (int i = 0; i < barNames_.size(); ++i)
        for (std::size_t k = 0; k < sets_.size(); ++k)
            t.rows.append({barNames_[i], sets_[k]->label(), formatNumber(sets_[k]->at(i), 6)});
    return t;
}

} // namespace madmax::ui
