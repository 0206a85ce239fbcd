// Pinned scenarios side by side: throughput per GPU, MFU and exposed communication.
#pragma once

#include "explorer_chart.hpp"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QValueAxis>

namespace madmax::ui {

class ComparisonChart : public ExplorerChart {
    Q_OBJECT
  public:
    explicit ComparisonChart(QWidget* parent = nullptr);
    QString id() const override { return "comparison"; }
    QString title() const override { return "Pinned scenarios compared"; }
    QString description() const override;
    void setInput(const ChartInput& in) override;
    ChartTable table() const override;

  protected:
    void restyle() override;

  private:
    QBarSeries* series_;
    QBarCategoryAxis* categories_;
    QStringList categoryNames_; ///< the metrics shown (training or serving)
    QValueAxis* values_;
    ChartTable table_;
};

} // namespace madmax::ui
