// Latency vs throughput as the batch grows, for the current configuration and every pinned one,
// with the latency objective drawn as a box (the acceptable region) and the operating point.
#pragma once

#include "explorer_chart.hpp"

#include <QAreaSeries>
#include <QLineSeries>
#include <QScatterSeries>
#include <QValueAxis>

#include <vector>

namespace madmax::ui {

class CurveChart : public ExplorerChart {
    Q_OBJECT
  public:
    explicit CurveChart(QWidget* parent = nullptr);
    QString id() const override { return "curve"; }
    QString title() const override {
        return prompts_ ? "TTFT vs prompt throughput (load swept)"
                        : "Latency vs throughput (batch swept)";
    }
    QString description() const override;
    void setInput(const ChartInput& in) override;
    ChartTable table() const override;

  protected:
    void restyle() override;

  private:
    QValueAxis* x_;
    QValueAxis* y_;
    QAreaSeries* sla_;
    QLineSeries* slaUpper_;
    QLineSeries* slaLower_;
    QScatterSeries* point_;
    std::vector<QLineSeries*> lines_;
    ChartTable table_;
    bool prompts_ = false; ///< the current configuration is a prefill pool: its load is swept
};

} // namespace madmax::ui
