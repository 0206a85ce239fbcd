// The base of every explorer chart: fed a ChartInput, styled for screen or paper, and able to
// list its data as a table (CSV/JSON export). Qt Charts lives behind this folder only.
#pragma once

#include "madmax/codesign.hpp"
#include "madmax/search.hpp"
#include "madmax/seed_cloud_table.hpp"
#include "style.hpp"
#include "worker.hpp"

#include <QAbstractBarSeries>
#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChartView>
#include <QGraphicsTextItem>
#include <QList>
#include <QString>
#include <QStringList>
#include <QValueAxis>

namespace madmax::ui {

struct PinnedEvaluation {
    QString name;
    Evaluation eval;
};

struct ChartInput {
    const Evaluation* current = nullptr;
    const PinnedEvaluation* baseline = nullptr; ///< shown beside the current scenario
    QList<PinnedEvaluation> pinned;             ///< every pinned scenario (comparison chart)
    const SearchResult* search = nullptr;       ///< design-space views
    const std::vector<Sensitivity>* sensitivity = nullptr; ///< tornado chart
    const std::vector<SweepResult>* sweeps = nullptr;      ///< speedup-vs-factor lines
    const ResourcePareto* pareto = nullptr; ///< resource vs performance (Figure 1)
    const std::vector<seed::CloudTableRow>* cloud = nullptr; ///< the artifact's cloud table
};

struct ChartTable {
    QStringList columns;
    QList<QStringList> rows;
};

class ExplorerChart : public QChartView {
    Q_OBJECT
  public:
    explicit ExplorerChart(QWidget* parent = nullptr);
    virtual QString id() const = 0;
    virtual QString title() const = 0;
    virtual QString description() const = 0; ///< tooltip: what the chart shows and its sources
    virtual void setInput(const ChartInput& in) = 0;
    virtual ChartTable table() const = 0;

    void setChartStyle(const ChartStyle& s);
    const ChartStyle& chartStyle() const { return style_; }
    /// Why the chart has nothing to show (empty when it has data): drawn centred in the plot
    /// area on screen; exporting an empty chart is an error that gives this reason.
    QString emptyMessage() const { return empty_; }

  protected:
    void setEmptyMessage(const QString& text);
    void resizeEvent(QResizeEvent* e) override;
    /// Re-apply brushes and fonts after a style change (a theme resets series colours).
    virtual void restyle() {}
    ChartStyle style_;

  private:
    void placeEmptyMessage();
    /// Break the title into lines at word boundaries when it is wider than the chart, so a
    /// narrow (3.5 in) figure never shows it elided.
    void fitTitle();
    /// A legend below the plot that would not fit on one line moves beside it (one entry per
    /// line) instead of eliding its entries; it moves back when there is room.
    void fitLegend();
    Qt::Alignment preferredLegend_ = {};
    QString empty_;
    QGraphicsTextItem* emptyItem_ = nullptr;
};

QString formatNumber(double v, int precision = 4);

/// Set bar k of every set to bars[k][set]: values replaced in place when the bar count is
/// unchanged (QT-NOTES: keep QBarSets alive). Returns the tallest bar's total.
double fillStackedBars(const std::vector<QBarSet*>& sets,
                       const std::vector<std::vector<double>>& bars);
/// Round ticks for [lo, hi]: a 1-2-5 × 10^k step giving about `targetTicks` intervals, the range
/// widened to whole steps, and the decimals the step needs.
struct NiceTicks {
    double min = 0, max = 1, step = 1;
    int decimals = 0;
};
NiceTicks niceTicks(double lo, double hi, int targetTicks = 5);
/// Put a value axis on round ticks covering [lo, hi] (see niceTicks), changing it only when the
/// range changes: slider drags then rarely re-lay out the axes.
void setNiceAxis(QValueAxis* axis, double lo, double hi, bool signedLabels = false);
/// setNiceAxis(axis, 0, max).
void setNiceRange(QValueAxis* axis, double max);

/// Component colours (or hatching) on bar sets, with thin black outlines on paper.
void styleComponentSets(const std::vector<QBarSet*>& sets, const std::vector<Component>& components,
                        const ChartStyle& style);
/// Hovering a bar segment shows its component, its value in `unit` and what it counts.
void showComponentTooltips(QAbstractBarSeries* series, const std::vector<QBarSet*>& sets,
                           std::vector<Component> components, const QString& unit);

/// The two axes of a bar chart, created once (docs/developer/qt-notes.md "Charts").
struct BarAxes {
    QBarCategoryAxis* categories;
    QValueAxis* values;
};
/// Add a category axis and a value axis (its title and label format) to the chart and attach
/// the series to both. Horizontal: categories on the left, values along the bottom.
BarAxes addBarAxes(QChart* chart, QAbstractSeries* series, Qt::Orientation bars,
                   const QString& valueTitle, const QString& labelFormat);

/// Keep in the series (and so in the legend) only the sets with a non-zero value in some bar
/// (`bars[bar][set]`); the others stay alive, parented to `owner` (QT-NOTES: keep QBarSets).
/// `active` remembers what is shown; returns true when that changed (restyle then).
bool showOccurringSets(QAbstractBarSeries* series, const std::vector<QBarSet*>& sets,
                       const std::vector<std::vector<double>>& bars, std::vector<bool>& active,
                       QObject* owner);

/// A bar set per label, appended to the series in order (they keep the series' lifetime).
std::vector<QBarSet*> appendBarSets(QAbstractBarSeries* series, const QStringList& labels);

/// Replace the axis categories only when they changed.
void setCategories(QBarCategoryAxis* axis, QStringList& shown, const QStringList& names);

} // namespace madmax::ui
