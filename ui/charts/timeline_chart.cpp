#include "timeline_chart.hpp"

#include <QChart>
#include <QGraphicsScene>
#include <QLegend>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>

namespace madmax::ui {

namespace {

int laneIndex(Lane l) {
    switch (l) {
    case Lane::Compute:
        return 2;
    case Lane::Comm:
        return 1;
    case Lane::DataParallelComm:
        return 0;
    }
    return 0;
}

Component componentOf(const TimelineEvent& e) {
    if (e.isComm) {
        switch (e.dim) {
        case ParallelDim::TP:
            return Component::CommTP;
        case ParallelDim::CP:
            return Component::CommCP;
        case ParallelDim::EP:
            return Component::CommEP;
        case ParallelDim::DP:
            return Component::CommDP;
        case ParallelDim::PP:
            return Component::CommPP;
        }
    }
    switch (e.kind) {
    case TimelineKind::Backward:
        return Component::Backward;
    case TimelineKind::Recompute:
        return Component::Recompute;
    case TimelineKind::Optimizer:
        return Component::Optimizer;
    case TimelineKind::Bubble:
        return Component::Bubble;
    case TimelineKind::HostIdle:
        return Component::HostIdle;
    case TimelineKind::Embedding:
        return Component::Embedding;
    default:
        return Component::Forward;
    }
}

bool inMicroBatch(const TimelineEvent& e) {
    return e.kind != TimelineKind::Steady && e.kind != TimelineKind::Bubble &&
           e.kind != TimelineKind::Optimizer && e.label.rfind("DP gradient sync", 0) != 0;
}

} // namespace

QRectF TimelineBoxes::boundingRect() const {
    return owner_->chart()->plotArea();
}

void TimelineBoxes::paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) {
    QChart* c = owner_->chart();
    const QRectF area = c->plotArea();
    p->save();
    p->setClipRect(area);
    p->setPen(Qt::NoPen); // boxes are often narrower than an outline would be
    for (const auto& e : owner_->events_) {
        // Exposed communication is the compute lane's gap (description()), not a box.
        if (e.kind == TimelineKind::Wait) continue;
        const int lane = laneIndex(e.lane);
        const QPointF a = c->mapToPosition(QPointF(e.startS * 1e3, lane + 0.85));
        const QPointF b = c->mapToPosition(QPointF(e.endS * 1e3, lane + 0.15));
        QRectF r(a, b);
        if (r.width() < 0.5) r.setWidth(0.5); // every op stays visible
        p->setBrush(componentBrush(componentOf(e), owner_->style_));
        p->drawRect(r);
    }
    p->restore();
}

TimelineChart::TimelineChart(QWidget* parent) : ExplorerChart(parent) {
    QChart* c = chart();
    c->setTitle(title());
    time_ = new QValueAxis;
    time_->setTitleText("milliseconds");
    time_->setLabelFormat("%.3g");
    lanes_ = new QCategoryAxis;
    lanes_->setRange(0, 3);
    lanes_->append("DP stream", 1);
    lanes_->append("TP/CP/EP/PP stream", 2);
    lanes_->append("compute", 3);
    lanes_->setLabelsPosition(QCategoryAxis::AxisLabelsPositionCenter);
    c->addAxis(time_, Qt::AlignBottom);
    c->addAxis(lanes_, Qt::AlignLeft);
    c->legend()->setAlignment(Qt::AlignBottom);
    boxes_ = new TimelineBoxes(this);
    boxes_->setZValue(5);
    c->scene()->addItem(boxes_);
    connect(c, &QChart::plotAreaChanged, this, [this](const QRectF&) {
        boxes_->geometryChanged();
        boxes_->update();
    });
    setMouseTracking(true);
    setToolTip(description());
}

QString TimelineChart::description() const {
    return "The ops of one micro-batch on the slowest pipeline stage, list-scheduled onto the "
           "compute stream and the communication streams (docs/developer/model.md §4). Gaps on the compute lane "
           "are exposed communication. Hover a box for the op.";
}

QScatterSeries* TimelineChart::legendEntry(Component comp) {
    auto it = legend_.find(int(comp));
    if (it != legend_.end()) return it->second;
    auto* s = new QScatterSeries;
    s->setName(componentName(comp));
    s->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
    chart()->addSeries(s);
    s->attachAxis(time_);
    s->attachAxis(lanes_);
    legend_[int(comp)] = s;
    restyle();
    return s;
}

void TimelineChart::restyle() {
    for (auto& [c, s] : legend_) {
        s->setBrush(componentBrush(Component(c), style_));
        s->setBorderColor(style_.publication ? QColor(Qt::black) : componentColor(Component(c)));
    }
    boxes_->update();
}

void TimelineChart::setInput(const ChartInput& in) {
    if (!in.current) return;
    events_.clear();
    double end = 0;
    std::vector<bool> present(32, false);
    for (const auto& e : in.current->result.timeline)
        if (inMicroBatch(e)) {
            events_.push_back(e);
            end = std::max(end, e.endS);
            if (e.kind != TimelineKind::Wait) present[std::size_t(componentOf(e))] = true;
        }
    for (std::size_t c = 0; c < present.size(); ++c)
        if (present[c]) legendEntry(Component(c));
    for (auto& [c, s] : legend_)
        s->setVisible(present[std::size_t(c)]);
    setNiceRange(time_, std::max(end * 1e3, 1e-6));
    boxes_->update();
}

void TimelineChart::mouseMoveEvent(QMouseEvent* e) {
    ExplorerChart::mouseMoveEvent(e);
    const QPointF v = chart()->mapToValue(mapToScene(e->pos()));
    const double t = v.x() / 1e3;
    const int lane = int(v.y());
    for (const auto& ev : events_)
        if (laneIndex(ev.lane) == lane && ev.startS <= t && t <= ev.endS && v.y() - lane > 0.15 &&
            v.y() - lane < 0.85) {
            QToolTip::showText(e->globalPosition().toPoint(),
                               QString("%1\n%2 – %3 ms")
                                   .arg(QString::fromStdString(ev.label))
                                   .arg(ev.startS * 1e3, 0, 'f', 3)
                                   .arg(ev.endS * 1e3, 0, 'f', 3));
            return;
        }
}

ChartTable TimelineChart::table() const {
    ChartTable t;
    t.columns = {"lane", "op", "start_s", "end_s"};
    for (const auto& e : events_) {
        const QString lane = e.lane == Lane::Compute ? "compute"
                             : e.lane == Lane::Comm  ? "comm"
                                                     : "dp_comm";
        t.rows.append({lane, QString::fromStdString(e.label), formatNumber(e.startS, 8),
                       formatNumber(e.endS, 8)});
    }
    return t;
}

} // namespace madmax::ui
