// Co-design sensitivity: the speedup of the best strategy when each hardware knob is halved or
// doubled (re-searched at each point), knobs sorted by impact — a tornado chart.
#pragma once

#include "explorer_chart.hpp"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QHorizontalBarSeries>
#include <QValueAxis>

namespace madmax::ui {

class TornadoChart : public ExplorerChart {
    Q_OBJECT
  public:
    explicit TornadoChart(QWidget* parent = nullptr);
    QString id() const override { return "tornado"; }
    QString title() const override { return "Hardware sensitivity: speedup at ×0.5 and ×2"; }
    QString description() const override;
    void setInput(const ChartInput& in) override;
    ChartTable table() const override;

  protected:
    void restyle() override;

  private:
    QHorizontalBarSeries* series_;
    QBarSet* half_;
    QBarSet* twice_;
    QBarCategoryAxis* knobs_;
    QValueAxis* values_;
    ChartTable table_;
};

} // namespace madmax::ui
