// Every evaluated configuration (a deterministic sample): throughput per GPU against memory per
// GPU, with the Pareto front of throughput vs memory headroom and the best configuration marked.
#pragma once

#include "explorer_chart.hpp"

#include <QLineSeries>
#include <QScatterSeries>
#include <QValueAxis>

namespace madmax::ui {

class ScatterChart : public ExplorerChart {
    Q_OBJECT
  public:
    explicit ScatterChart(QWidget* parent = nullptr);
    QString id() const override { return "scatter"; }
    QString title() const override { return "Configurations: throughput vs memory"; }
    QString description() const override;
    void setInput(const ChartInput& in) override;
    ChartTable table() const override;

  protected:
    void restyle() override;

  private:
    QScatterSeries* points_;
    QLineSeries* front_;
    QScatterSeries* best_;
    QValueAxis* x_;
    QValueAxis* y_;
    ChartTable table_;
};

} // namespace madmax::ui
