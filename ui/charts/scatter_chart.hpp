// Every evaluated configuration (a deterministic sample): throughput per GPU against memory per
// GPU, with the Pareto front of throughput vs memory headroom and the best configuration marked.
#pragma once

#include "explorer_chart.hpp"

#include <QGraphicsPathItem>

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
    /// The sample drawn as one path of small squares in the chart's scene, one square per
    /// occupied pixel: a vector export stays small (one <path>, not 20,000 elements).
    void drawCloud();
    QList<QPointF> cloud_;
    QGraphicsPathItem* cloudItem_ = nullptr;
    QScatterSeries* points_; ///< empty: gives the cloud its legend entry and its axes
    QLineSeries* front_;
    QScatterSeries* best_;
    QValueAxis* x_;
    QValueAxis* y_;
    ChartTable table_;
};

} // namespace madmax::ui
