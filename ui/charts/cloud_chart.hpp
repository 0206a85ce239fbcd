// The MAD-Max artifact's cloud figure: what training DLRM-A on 5B samples costs in dollars and
// in energy on each cloud's GPUs (the artifact's '[A] Cloud Provider Results.xlsx', reproduced
// with the reference engine), one colour per provider, log axes.
#pragma once

#include "explorer_chart.hpp"

#include <QLogValueAxis>

#include <vector>

class QScatterSeries;

namespace madmax::ui {

class CloudChart : public ExplorerChart {
    Q_OBJECT
  public:
    explicit CloudChart(QWidget* parent = nullptr);
    QString id() const override { return "cloud"; }
    QString title() const override { return "DLRM-A on the clouds, 5B samples: cost vs energy"; }
    QString description() const override;
    void setInput(const ChartInput& in) override;
    ChartTable table() const override;

  protected:
    void restyle() override;

  private:
    QLogValueAxis* x_;
    QLogValueAxis* y_;
    std::vector<QScatterSeries*> providers_;
    ChartTable table_;
};

} // namespace madmax::ui
