#include "serving_chart.hpp"

#include <QChart>
#include <QLegend>

#include <algorithm>

namespace madmax::ui {

namespace {
const char* kParts[] = {"Weight reads",  "KV-cache reads", "Compute",
                        "TP comm",       "EP all-to-all",  "Overheads",
                        "Prefills / waiting", "Pipeline p2p", "KV transfer (prefill → decode pool)",
                        "Prefix-cache load"};
const Component kColours[] = {Component::Weights,   Component::KvCache, Component::Backward,
                              Component::CommTP,    Component::CommEP,  Component::Optimizer,
                              Component::Recompute, Component::Bubble,  Component::CommDP,
                              Component::CommPP};

/// TPOT = one iteration; TTFT = the prompt's prefill + half an iteration of waiting.
std::vector<double> tpotParts(const Result& r) {
    const auto& i = r.inference;
    // A prefill pool paces no tokens: no TPOT bar (its round's figures are not its own).
    if (i.prefillPool()) return std::vector<double>(std::size(kParts), 0.0);
    const double a2a = r.commTime(ParallelDim::EP, Collective::AllToAll).serializedS;
    return {i.decodeWeightReadS,
            i.decodeKvReadS,
            i.decodeComputeS,
            i.decodeCommS - a2a,
            a2a,
            i.decodeOverheadS,
            i.prefillPerIterationS,
            r.commTime(ParallelDim::PP, Collective::P2P).serializedS,
            0.0,
            0.0};
}
/// Disaggregated, the first token crosses both pools: the prompt's prefill on the prefill pool,
/// then its KV cache over the network; the decode pool's share is that arrival and the wait for
/// its next round. Each pool's bar shows its own share of TTFT (what its scenario reports).
std::vector<double> ttftParts(const Result& r, ServingPhase phase) {
    const auto& i = r.inference;
    const bool decodePool = phase == ServingPhase::Decode;
    const double prefill = decodePool ? 0.0 : 1.0; // the prompt runs on the prefill pool
    const double wait =
        std::max(0.0, i.ttftS - prefill * (i.prefillComputeS + i.prefillCommS +
                                           i.prefillOverheadS + i.prefixLoadWaitS) -
                          i.kvTransferS);
    // (Below a part in 1e9 of TTFT the remainder is rounding, not waiting.)
    const double shownWait = wait > 1e-9 * i.ttftS ? wait : 0.0;
    return {0.0,
            0.0,
            prefill * i.prefillComputeS,
            prefill * (i.prefillCommS - i.prefillAllToAllS),
            prefill * i.prefillAllToAllS,
            prefill * i.prefillOverheadS,
            shownWait,
            0.0,
            i.kvTransferS,
            prefill * i.prefixLoadWaitS};
}
} // namespace

ServingChart::ServingChart(QWidget* parent) : ExplorerChart(parent) {
    QChart* c = chart();
    c->setTitle(title());
    series_ = new QHorizontalStackedBarSeries;
    sets_ = appendBarSets(series_, QStringList(std::begin(kParts), std::end(kParts)));
    c->addSeries(series_);
    const BarAxes axes = addBarAxes(c, series_, Qt::Horizontal, "milliseconds", "%.3g");
    bars_ = axes.categories;
    ms_ = axes.values;
    c->legend()->setAlignment(Qt::AlignRight);
    setToolTip(description());
    restyle();
    showComponentTooltips(series_, sets_,
                          std::vector<Component>(std::begin(kColours), std::end(kColours)), "ms");
}

QString ServingChart::description() const {
    return "TPOT is one continuous-batching iteration: a decode step (every weight read once, "
           "every "
           "sequence's KV cache read, two TP all-reduces per layer, for MoE the experts the batch "
           "touches and a dispatch/combine all-to-all per layer, kernel overheads; Pope et al. "
           "2022) "
           "plus the prefills of the requests admitted meanwhile. TTFT is the prompt's prefill "
           "plus, on "
           "average, half an iteration of waiting. Disaggregated (workload.phase prefill or "
           "decode), the first token crosses both pools: the prompt's prefill on the prefill "
           "pool, its KV cache over the network, then the decode pool's wait for its next round. "
           "With the prefix cache in an offload tier, the prompt also waits on the part of its "
           "hits' KV load that its prefill did not hide.";
}

void ServingChart::restyle() {
    styleComponentSets(sets_, std::vector<Component>(std::begin(kColours), std::end(kColours)),
                       style_);
}

void ServingChart::setInput(const ChartInput& in) {
    if (!in.current || !in.current->result.isInference) return;
    std::vector<std::vector<double>> bars;
    QStringList names;
    if (in.baseline && in.baseline->eval.result.isInference) {
        bars.push_back(ttftParts(in.baseline->eval.result,
                                  in.baseline->eval.scenario.workload.inference.phase));
        bars.push_back(tpotParts(in.baseline->eval.result));
        names << "Baseline TTFT"
              << "Baseline TPOT";
    }
    bars.push_back(
        ttftParts(in.current->result, in.current->scenario.workload.inference.phase));
    bars.push_back(tpotParts(in.current->result));
    names << "TTFT"
          << "TPOT";

    for (auto& b : bars)
        for (double& v : b)
            v *= 1e3; // milliseconds
    setCategories(bars_, names_, names);
    const double maxTotal = fillStackedBars(sets_, bars);
    setNiceRange(ms_, std::max(maxTotal, 1e-6) * 1.02);
    // Dense models have no all-to-all, single-stage engines no p2p: not in the legend.
    if (showOccurringSets(series_, sets_, bars, active_, this)) restyle();
}

ChartTable ServingChart::table() const {
    ChartTable t;
    t.columns = {"bar", "component", "ms"};
    for (int i = 0; i < names_.size(); ++i)
        for (std::size_t k = 0; k < sets_.size(); ++k)
            t.rows.append({names_[i], sets_[k]->label(), formatNumber(sets_[k]->at(i), 6)});
    return t;
}

} // namespace madmax::ui
