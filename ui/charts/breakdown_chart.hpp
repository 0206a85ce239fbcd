// MAD-Max's signature figure: the step "serialized" (compute + every collective at full length)
// against "overlapped" (compute + exposed communication + bubble), a colour per component.
#pragma once

#include "explorer_chart.hpp"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QHorizontalStackedBarSeries>
#include <QValueAxis>

#include <vector>

namespace madmax::ui {

class BreakdownChart : public ExplorerChart {
    Q_OBJECT
  public:
    explicit BreakdownChart(QWidget* parent = nullptr);
    QString id() const override { return "breakdown"; }
    QString title() const override { return "Step time: serialized vs overlapped"; }
    QString description() const override;
    void setInput(const ChartInput& in) override;
    ChartTable table() const override;

    static const std::vector<Component>& components();
    /// The values of one bar: serialized (false) or overlapped (true), per component (seconds).
    static std::vector<double> barValues(const Result& r, bool overlapped);

  protected:
    void restyle() override;

  private:
    QHorizontalStackedBarSeries* series_;
    QBarCategoryAxis* categories_;
    QValueAxis* values_;
    std::vector<QBarSet*> sets_; ///< one per component, whether or not in the series
    std::vector<bool> active_;   ///< which sets the series holds now
    QStringList barNames_;
};

} // namespace madmax::ui
