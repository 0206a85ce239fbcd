// The design space as a TP × PP heatmap of the best throughput per GPU in each cell; the best
// cell is marked, and cells where nothing fits in memory are marked as such.
#pragma once

#include "explorer_chart.hpp"

#include <QCategoryAxis>
#include <QColorAxis>
#include <QScatterSeries>

namespace madmax::ui {

class HeatmapChart : public ExplorerChart {
    Q_OBJECT
  public:
    explicit HeatmapChart(QWidget* parent = nullptr);
    QString id() const override { return "heatmap"; }
    QString title() const override { return "Best tokens/s per GPU, per TP × PP"; }
    QString description() const override;
    void setInput(const ChartInput& in) override;
    ChartTable table() const override;

  protected:
    void resizeEvent(QResizeEvent* e) override;
    void restyle() override;

  private:
    void setGrid(const SearchResult& search);  ///< the TP and PP categories the search visited
    void colourCells(const QList<qreal>& values); ///< feasible cells on the colour bar's ticks
    void resizeMarkers();
    QScatterSeries* cells_;
    QScatterSeries* infeasible_;
    QScatterSeries* best_;
    QCategoryAxis* x_;
    QCategoryAxis* y_;
    QColorAxis* colors_;
    QList<int> tps_, pps_;
    ChartTable table_;
};

} // namespace madmax::ui
