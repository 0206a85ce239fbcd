// MAD-Max's Figure 1, resource against performance: the best strategy of each system at each
// GPU count, one colour per system, and the front of points no other beats with no more of the
// resource. Two views: GPUs ("pareto") and dollars per hour ("pareto_cost").
#pragma once

#include "explorer_chart.hpp"

#include <QLogValueAxis>

#include <vector>

class QLineSeries;
class QScatterSeries;

namespace madmax::ui {

class ParetoChart : public ExplorerChart {
    Q_OBJECT
  public:
    /// `dollars`: the resource axis is dollars per hour (GPUs × the system's price).
    explicit ParetoChart(bool dollars, QWidget* parent = nullptr);
    QString id() const override { return dollars_ ? "pareto_cost" : "pareto"; }
    QString title() const override {
        return dollars_ ? "Throughput vs cost per hour" : "Throughput vs GPUs";
    }
    QString description() const override;
    void setInput(const ChartInput& in) override;
    ChartTable table() const override;

  protected:
    void restyle() override;

  private:
    /// Why nothing is drawn (no comparison, no prices, nothing feasible); empty when something is.
    QString emptyReason(const ResourcePareto* p) const;
    /// System index's series, created (named from labels, on both axes) if it is new.
    QScatterSeries* seriesAt(std::size_t index, const QStringList& labels);
    bool dollars_;
    QLogValueAxis* x_;
    QLogValueAxis* y_;
    std::vector<QScatterSeries*> systems_;
    QLineSeries* front_;
    ChartTable table_;
};

} // namespace madmax::ui
