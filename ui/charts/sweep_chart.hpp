// Co-design sweeps: for each swept knob, the best throughput's speedup against the knob's
// factor, with a marker wherever the best strategy changes.
#pragma once

#include "explorer_chart.hpp"

#include <QLogValueAxis>
#include <QValueAxis>

#include <vector>

class QLineSeries;
class QScatterSeries;

namespace madmax::ui {

class SweepChart : public ExplorerChart {
    Q_OBJECT
  public:
    explicit SweepChart(QWidget* parent = nullptr);
    QString id() const override { return "sweep"; }
    QString title() const override { return "Speedup vs hardware scaling"; }
    QString description() const override;
    void setInput(const ChartInput& in) override;
    ChartTable table() const override;

  protected:
    void restyle() override;

  private:
    QLogValueAxis* x_;
    QValueAxis* y_;
    std::vector<QLineSeries*> lines_;
    QScatterSeries* changes_;
    ChartTable table_;
};

} // namespace madmax::ui
