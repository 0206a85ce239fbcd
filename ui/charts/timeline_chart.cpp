#include "timeline_chart.hpp"

#include <QChart>
#include <QLegend>
#include <QLegendMarker>
#include <QToolTip>

#include <algorithm>

namespace madmax::ui {

namespace {

int laneIndex(Lane l) {
    switch (l) {
    case Lane::Compute: return 2;
    case Lane::Comm: return 1;
    case Lane::DataParallelComm: return 0;
    }
    return 0;
}

Component componentOf(const TimelineEvent& e) {
    if (e.isComm) {
        switch (e.dim) {
        case ParallelDim::TP: return Component::CommTP;
        case ParallelDim::CP: return Component::CommCP;
        case ParallelDim::EP: return Component::CommEP;
        case ParallelDim::DP: return Component::CommDP;
        case ParallelDim::PP: return Component::CommPP;
        }
    }
    switch (e.kind) {
    case TimelineKind::Backward: return Component::Backward;
    case TimelineKind::Recompute: return Component::Recompute;
    case TimelineKind::Optimizer: return Component::Optimizer;
    case TimelineKind::Bubble: return Component::Bubble;
    default: return Component::Forward;
    }
}

bool inMicroBatch(const TimelineEvent& e) {
    return e.kind != TimelineKind::Steady && e.kind != TimelineKind::Bubble &&
           e.kind != TimelineKind::Optimizer && e.label.rfind("DP gradient sync", 0) != 0;
}

} // namespace

TimelineChart::TimelineChart(QWidget* parent) : ExplorerChart(parent) {
    QChart* c = chart();
    c->setTitle(title());
    time_ = new QValueAxis;
    time_->setTitleText("milliseconds");
    time_->setLabelFormat("%.3g");
    lanes_ = new QCategoryAxis;
    lanes_->setRange(0, 3);
    lanes_->append("DP stream", 1);
    lanes_->append("TP/CP stream", 2);
    lanes_->append("compute", 3);
    lanes_->setLabelsPosition(QCategoryAxis::AxisLabelsPositionCenter);
    c->addAxis(time_, Qt::AlignBottom);
    c->addAxis(lanes_, Qt::AlignLeft);
    c->legend()->setAlignment(Qt::AlignBottom);
    setRenderHint(QPainter::Antialiasing, false); // axis-aligned boxes: crisp and cheaper
    setToolTip(description());
}

QString TimelineChart::description() const {
    return "The ops of one micro-batch on the slowest pipeline stage, list-scheduled onto the "
           "compute stream and the communication streams (MODEL.md §4). Gaps on the compute lane "
           "are exposed communication. Hover a box for the op.";
}

TimelineChart::Track& TimelineChart::track(Component comp, int lane) {
    for (auto& t : tracks_)
        if (t.component == comp && t.lane == lane) return t;
    Track t{comp, lane, new QLineSeries, new QLineSeries, nullptr};
    t.area = new QAreaSeries(t.upper, t.lower);
    t.upper->setParent(t.area); // QAreaSeries does not own its boundary series
    t.lower->setParent(t.area);
    t.area->setName(componentName(comp));
    chart()->addSeries(t.area);
    t.area->attachAxis(time_);
    t.area->attachAxis(lanes_);
    connect(t.area, &QAreaSeries::hovered, this, &TimelineChart::showTooltip);
    tracks_.push_back(t);
    restyle();
    return tracks_.back();
}

void TimelineChart::restyle() {
    for (auto& t : tracks_) {
        t.area->setBrush(componentBrush(t.component, style_));
        t.area->setPen(QPen(style_.publication ? QColor(Qt::black) : componentColor(t.component).darker(130), 0.5));
    }
    // One legend entry per component, even when it appears on two lanes.
    std::vector<Component> seen;
    for (auto& t : tracks_) {
        const bool dup = std::find(seen.begin(), seen.end(), t.component) != seen.end();
        for (auto* m : chart()->legend()->markers(t.area)) m->setVisible(!dup);
        seen.push_back(t.component);
    }
}

void TimelineChart::setInput(const ChartInput& in) {
    if (!in.current) return;
    events_.clear();
    double end = 0;
    for (const auto& e : in.current->result.timeline)
        if (inMicroBatch(e)) {
            events_.push_back(e);
            end = std::max(end, e.endS);
        }
    // One box per run of back-to-back ops of the same component: far fewer points to paint
    // (each op stays in events_ for the tooltip and the exported table).
    std::map<std::pair<int, int>, QList<QPointF>> points;
    const double joinS = end * 1e-4; // boxes closer than this are drawn as one
    for (const auto& e : events_) {
        const int lane = laneIndex(e.lane);
        const double y0 = lane + 0.15, y1 = lane + 0.85;
        auto& p = points[{int(componentOf(e)), lane}];
        const double s = e.startS * 1e3, f = e.endS * 1e3;
        if (p.size() >= 4 && s - p.back().x() <= joinS * 1e3) {
            p[p.size() - 2].setX(f); // extend the previous box
            p.back().setX(f);
            continue;
        }
        p << QPointF(s, y0) << QPointF(s, y1) << QPointF(f, y1) << QPointF(f, y0);
    }
    for (auto& t : tracks_) {
        t.upper->clear();
        t.lower->clear();
    }
    for (auto& [key, pts] : points) {
        Track& t = track(Component(key.first), key.second);
        const double y0 = key.second + 0.15;
        t.upper->replace(pts);
        t.lower->replace(QList<QPointF>{{0, y0}, {end * 1e3, y0}});
    }
    time_->setRange(0, std::max(end * 1e3, 1e-6));
}

void TimelineChart::showTooltip(const QPointF& p, bool state) {
    if (!state) {
        QToolTip::hideText();
        return;
    }
    const double t = p.x() / 1e3;
    const int lane = int(p.y());
    for (const auto& e : events_)
        if (laneIndex(e.lane) == lane && e.startS <= t && t <= e.endS) {
            QToolTip::showText(QCursor::pos(), QString("%1\n%2 – %3 ms")
                                                   .arg(QString::fromStdString(e.label))
                                                   .arg(e.startS * 1e3, 0, 'f', 3)
                                                   .arg(e.endS * 1e3, 0, 'f', 3));
            return;
        }
}

ChartTable TimelineChart::table() const {
    ChartTable t;
    t.columns = {"lane", "op", "start_s", "end_s"};
    for (const auto& e : events_) {
        const QString lane = e.lane == Lane::Compute ? "compute" : e.lane == Lane::Comm ? "comm" : "dp_comm";
        t.rows.append({lane, QString::fromStdString(e.label), formatNumber(e.startS, 8), formatNumber(e.endS, 8)});
    }
    return t;
}

} // namespace madmax::ui
