// The critical pipeline stage's streams: compute and communication lanes, one box per op, for
// one micro-batch's forward and backward (the step's later phases follow in the table).
#pragma once

#include "explorer_chart.hpp"

#include <QAreaSeries>
#include <QCategoryAxis>
#include <QLineSeries>
#include <QValueAxis>

#include <map>
#include <vector>

namespace madmax::ui {

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

  private:
    struct Track {
        Component component;
        int lane;
        QLineSeries* upper;
        QLineSeries* lower;
        QAreaSeries* area;
    };
    Track& track(Component c, int lane);
    void showTooltip(const QPointF& p, bool state);

    QValueAxis* time_;
    QCategoryAxis* lanes_;
    std::vector<Track> tracks_;
    std::vector<TimelineEvent> events_;
};

} // namespace madmax::ui
