// Communication by parallel dimension and collective: serialized vs exposed seconds per step.
#pragma once

#include "explorer_chart.hpp"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QHorizontalBarSeries>
#include <QValueAxis>

namespace madmax::ui {

class CommChart : public ExplorerChart {
    Q_OBJECT
  public:
    explicit CommChart(QWidget* parent = nullptr);
    QString id() const override { return "comm"; }
    QString title() const override { return "Communication per step: serialized vs exposed"; }
    QString description() const override;
    void setInput(const ChartInput& in) override;
    ChartTable table() const override;

  protected:
    void restyle() override;

  private:
    QHorizontalBarSeries* series_;
    QBarCategoryAxis* categories_;
    QValueAxis* values_;
    QBarSet* serialized_;
    QBarSet* exposed_;
    QBarSet* baselineExposed_ = nullptr;
    QStringList names_;
};

} // namespace madmax::ui
