// The critical pipeline stage's streams: compute and communication lanes, one box per op, for
// one micro-batch's forward and backward (the step's later phases follow in the table).
#pragma once

#include "explorer_chart.hpp"

#include <QCategoryAxis>
#include <QGraphicsItem>
#include <QScatterSeries>
#include <QValueAxis>

#include <map>
#include <vector>

namespace madmax::ui {

class TimelineChart;

/// Paints the op boxes straight into the chart's scene: hundreds of rectangles cost far less
/// than area series, and stay vector shapes in SVG and PDF exports.
class TimelineBoxes : public QGraphicsItem {
  public:
    explicit TimelineBoxes(TimelineChart* owner) : owner_(owner) {}
    QRectF boundingRect() const override;
    void paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) override;
    void geometryChanged() { prepareGeometryChange(); }

  private:
    TimelineChart* owner_;
};

class TimelineChart : public ExplorerChart {
    Q_OBJECT
  public:
    explicit TimelineChart(QWidget* parent = nullptr);
    QString id() const override { return "timeline"; }
    QString title() const override { return "Timeline of the critical stage (one micro-batch)"; }
    QString description() const override;
    void setInput(const ChartInput& in) override;
    ChartTable table() const override;

  protected:
    void restyle() override;
    void mouseMoveEvent(QMouseEvent* e) override;

  private:
    friend class TimelineBoxes;
    /// A legend entry per component present (an empty series carrying the name and colour).
    QScatterSeries* legendEntry(Component c);

    QValueAxis* time_;
    QCategoryAxis* lanes_;
    TimelineBoxes* boxes_;
    std::map<int, QScatterSeries*> legend_;
    std::vector<TimelineEvent> events_;
};

} // namespace madmax::ui
