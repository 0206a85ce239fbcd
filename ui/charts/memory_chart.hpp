// Memory per GPU: weights, gradients, optimizer state, activations and reserve against capacity.
#pragma once

#include "explorer_chart.hpp"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QLineSeries>
#include <QStackedBarSeries>
#include <QValueAxis>

#include <vector>

namespace madmax::ui {

class MemoryChart : public ExplorerChart {
    Q_OBJECT
  public:
    explicit MemoryChart(QWidget* parent = nullptr);
    QString id() const override { return "memory"; }
    QString title() const override { return "Memory per GPU"; }
    QString description() const override;
    void setInput(const ChartInput& in) override;
    ChartTable table() const override;

  protected:
    void restyle() override;

  private:
    QStackedBarSeries* series_;
    QBarCategoryAxis* categories_;
    QValueAxis* values_;
    QValueAxis* lineX_;
    QLineSeries* capacity_;
    std::vector<QBarSet*> sets_;
    QStringList names_;
    std::vector<bool> active_; ///< which sets the series holds now
    double capacityGB_ = 0;
};

} // namespace madmax::ui
