// Serving: what one output token (TPOT) and the first token (TTFT) cost, split by cause —
// weight reads, KV-cache reads, compute, communication, kernel overheads, interleaved prefills.
#pragma once

#include "explorer_chart.hpp"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QHorizontalStackedBarSeries>
#include <QValueAxis>

#include <vector>

namespace madmax::ui {

class ServingChart : public ExplorerChart {
    Q_OBJECT
  public:
    explicit ServingChart(QWidget* parent = nullptr);
    QString id() const override { return "serving"; }
    QString title() const override { return "Serving latency: TTFT and TPOT by cause"; }
    QString description() const override;
    void setInput(const ChartInput& in) override;
    ChartTable table() const override;

  protected:
    void restyle() override;

  private:
    QHorizontalStackedBarSeries* series_;
    QBarCategoryAxis* bars_;
    QValueAxis* ms_;
    std::vector<QBarSet*> sets_;
    std::vector<bool> active_; ///< which sets the series holds now
    QStringList names_;
};

} // namespace madmax::ui
