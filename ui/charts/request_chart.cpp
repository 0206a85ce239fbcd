#include "request_chart.hpp"

#include <QChart>
#include <QLegend>
#include <QLegendMarker>

#include <algorithm>

namespace madmax::ui {

namespace {
// Stacked in this order along each lane: the lead-in (transparent: the time before the lane's
// first part), then the parts in the order a request meets them.
// The tokens after the second are listed (table) but not drawn: at a TPOT each they would
// dwarf the path to the first tokens, which is what the chart is for.
const char* kParts[] = {"", "Waiting", "Prefill", "KV transfer", "Next token"};
const char* kRemaining = "Remaining tokens";
const Component kColours[] = {Component::Forward, Component::Bubble, Component::Backward,
                              Component::CommDP, Component::Weights};
const char* kPrefillLane = "prefill";
const char* kNetworkLane = "network";
const char* kDecodeLane = "decode";

/// The output tokens after the first, from `start` on: the next one drawn (one decode round),
/// the rest listed.
void outputTokens(std::vector<RequestSegment>& out, const char* lane, double start,
                  const InferenceResult& i) {
    const double all = i.e2eLatencyS - i.ttftS, next = std::min(i.tpotS, all);
    if (next > 0) out.push_back({lane, kParts[4], start, next});
    if (all - next > 0) out.push_back({lane, kRemaining, start + next, all - next});
}

/// The prompt's time on its pool and the wait for a round, from a result's TTFT: on one pool
/// TTFT = wait + prompt, the wait half a round; a prefill pool's TTFT is the prompt and the KV
/// transfer; a decode pool's is the transfer and half a round.
double promptS(const Result& r, ServingPhase phase) {
    const InferenceResult& i = r.inference;
    const double halfRound = i.tpotS * i.tokensPerStep / 2;
    return phase == ServingPhase::Prefill   ? i.ttftS - i.kvTransferS
           : phase == ServingPhase::Decode ? 0.0
                                           : i.ttftS - halfRound;
}
} // namespace

std::vector<RequestSegment> requestSegments(const Result& r, ServingPhase phase,
                                            const Result* other, ServingPhase otherPhase) {
    std::vector<RequestSegment> out;
    auto add = [&](const char* lane, const char* part, double start, double dur) {
        if (dur > 0) out.push_back({lane, part, start, dur});
    };
    const InferenceResult& i = r.inference;
    if (phase == ServingPhase::Aggregated) {
        const double prompt = promptS(r, phase), wait = i.ttftS - prompt;
        add("one pool", kParts[1], 0, wait);
        add("one pool", kParts[2], wait, prompt);
        outputTokens(out, "one pool", i.ttftS, i);
        return out;
    }
    // Disaggregated: the prefill pool's result, the decode pool's, either possibly absent.
    const bool pairs = other && other->isInference &&
                       ((phase == ServingPhase::Prefill && otherPhase == ServingPhase::Decode) ||
                        (phase == ServingPhase::Decode && otherPhase == ServingPhase::Prefill));
    const Result* prefill = phase == ServingPhase::Prefill ? &r : pairs ? other : nullptr;
    const Result* decode = phase == ServingPhase::Decode ? &r : pairs ? other : nullptr;
    double t = 0;
    if (prefill) {
        // Below capacity the prompt first waits for the pool (its queue), then runs.
        const double queue = prefill->inference.prefillQueueS;
        const double prompt = promptS(*prefill, ServingPhase::Prefill) - queue;
        add(kPrefillLane, kParts[1], 0, queue);
        add(kPrefillLane, kParts[2], queue, prompt);
        t = queue + prompt;
    }
    // The KV cache leaves the prefill pool (its own transfer time) or, with no prefill pool
    // known, arrives at the decode pool.
    const double kv = prefill ? prefill->inference.kvTransferS : decode->inference.kvTransferS;
    add(kNetworkLane, kParts[3], t, kv);
    t += kv;
    if (decode) {
        const InferenceResult& d = decode->inference;
        const double wait = d.ttftS - d.kvTransferS;
        add(kDecodeLane, kParts[1], t, wait);
        outputTokens(out, kDecodeLane, t + wait, d);
    }
    return out;
}

RequestChart::RequestChart(QWidget* parent) : ExplorerChart(parent) {
    QChart* c = chart();
    c->setTitle(title());
    series_ = new QHorizontalStackedBarSeries;
    sets_ = appendBarSets(series_, QStringList(std::begin(kParts), std::end(kParts)));
    c->addSeries(series_);
    const BarAxes axes = addBarAxes(c, series_, Qt::Horizontal, "seconds", "%.3g");
    lanes_ = axes.categories;
    seconds_ = axes.values;
    c->legend()->setAlignment(Qt::AlignBottom);
    setToolTip(description());
    restyle();
}

QString RequestChart::description() const {
    return "One request from its arrival to its second token. On one pool: the wait for the next "
           "continuous-batching round (half a round on average), the prompt's prefill (which "
           "gives the first token), then one decode round (one TPOT) for the next. "
           "Disaggregated (workload.phase prefill or decode): the prompt on the prefill pool, "
           "its KV cache over the scale-out network, the decode pool's wait for its next round, "
           "then its next token; pin the other pool's scenario to draw the whole path. The "
           "remaining tokens (one TPOT each, to the end-to-end latency) are in the exported "
           "table, not drawn: they would dwarf the rest.";
}

void RequestChart::restyle() {
    styleComponentSets(sets_, std::vector<Component>(std::begin(kColours), std::end(kColours)),
                       style_);
    // The lead-in is the time before a lane's first part: drawn as nothing.
    sets_[0]->setColor(Qt::transparent);
    sets_[0]->setBorderColor(Qt::transparent);
}

void RequestChart::setInput(const ChartInput& in) {
    segments_.clear();
    if (!in.current || !in.current->result.isInference) {
        setEmptyMessage("A serving scenario draws one request's path");
        return;
    }
    const Evaluation& cur = *in.current;
    const Evaluation* pin = in.baseline ? &in.baseline->eval : nullptr;
    segments_ = requestSegments(cur.result, cur.scenario.workload.inference.phase,
                                pin ? &pin->result : nullptr,
                                pin ? pin->scenario.workload.inference.phase
                                    : ServingPhase::Aggregated);
    setEmptyMessage(segments_.empty() ? QString("The request takes no time") : QString());
    // Lanes in the order the request meets them, top to bottom (a horizontal bar chart draws
    // its first category at the bottom).
    QStringList lanes;
    for (const RequestSegment& s : segments_)
        if (!lanes.contains(s.lane)) lanes.prepend(s.lane);
    std::vector<std::vector<double>> bars(std::size_t(lanes.size()),
                                          std::vector<double>(sets_.size(), 0.0));
    QStringList started;
    for (const RequestSegment& s : segments_) {
        if (s.part == kRemaining) continue; // listed, not drawn
        auto& bar = bars[std::size_t(lanes.indexOf(s.lane))];
        // The lead-in: a lane's first part starts where the request has got to.
        if (!started.contains(s.lane)) {
            started << s.lane;
            bar[0] = s.startS;
        }
        const auto part = std::find_if(std::begin(kParts), std::end(kParts),
                                       [&](const char* p) { return s.part == p; });
        bar[std::size_t(part - std::begin(kParts))] += s.durationS;
    }
    setCategories(lanes_, names_, lanes);
    const double end = fillStackedBars(sets_, bars);
    setNiceRange(seconds_, std::max(end, 1e-9) * 1.02);
    if (showOccurringSets(series_, sets_, bars, active_, this)) restyle();
    // The lead-in stays out of the legend.
    const auto markers = chart()->legend()->markers(series_);
    for (QLegendMarker* m : markers)
        if (m->label().isEmpty()) m->setVisible(false);
}

ChartTable RequestChart::table() const {
    ChartTable t;
    t.columns = {"lane", "part", "start_s", "duration_s"};
    for (const RequestSegment& s : segments_)
        t.rows.append({s.lane, s.part, formatNumber(s.startS, 6), formatNumber(s.durationS, 6)});
    return t;
}

} // namespace madmax::ui
