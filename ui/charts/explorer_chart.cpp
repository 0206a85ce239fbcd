#include "explorer_chart.hpp"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QCursor>
#include <QLegend>
#include <QLegendMarker>
#include <QFontMetricsF>
#include <QTextDocument>
#include <QTextOption>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace madmax::ui {

ExplorerChart::ExplorerChart(QWidget* parent) : QChartView(new QChart, parent) {
    setRenderHint(QPainter::Antialiasing);
    chart()->setAnimationOptions(QChart::NoAnimation);
    setRubberBand(QChartView::NoRubberBand);
    // Legend entries come and go with the data: re-check the legend's fit whenever the layout
    // changes (settles at once: a second pass finds the alignment already right).
    connect(chart(), &QChart::plotAreaChanged, this, [this] {
        fitLegend();
        placeEmptyMessage();
    });
}

void ExplorerChart::setEmptyMessage(const QString& text) {
    empty_ = text;
    if (!emptyItem_) {
        emptyItem_ = new QGraphicsTextItem(chart());
        emptyItem_->setZValue(100);
    }
    emptyItem_->setPlainText(text);
    emptyItem_->setVisible(!text.isEmpty());
    chart()->legend()->setVisible(text.isEmpty()); // no legend of series that are not drawn
    placeEmptyMessage();
}

void ExplorerChart::placeEmptyMessage() {
    if (!emptyItem_ || empty_.isEmpty()) return;
    emptyItem_->setFont(chart()->font());
    emptyItem_->setDefaultTextColor(QColor(0x70, 0x70, 0x70));
    const QRectF area = chart()->plotArea();
    // Wrapped to the plot area, centred: never cut at the chart's edges.
    emptyItem_->setTextWidth(std::max(60.0, area.width() * 0.9));
    QTextOption centred(Qt::AlignHCenter);
    centred.setWrapMode(QTextOption::WordWrap);
    emptyItem_->document()->setDefaultTextOption(centred);
    const QRectF box = emptyItem_->boundingRect();
    emptyItem_->setPos(area.center().x() - box.width() / 2, area.center().y() - box.height() / 2);
}

void ExplorerChart::fitTitle() {
    const QString full = title();
    const QFontMetricsF fm(chart()->titleFont());
    const double room = std::max(40.0, width() - 90.0); // the chart's margins and padding
    if (fm.horizontalAdvance(full) <= room) {
        if (chart()->title() != full) chart()->setTitle(full);
        return;
    }
    QStringList lines;
    QString line;
    for (const QString& word : full.split(' ')) {
        const QString candidate = line.isEmpty() ? word : line + ' ' + word;
        if (!line.isEmpty() && fm.horizontalAdvance(candidate) > room) {
            lines << line;
            line = word;
        } else {
            line = candidate;
        }
    }
    lines << line;
    const QString wrapped = lines.join("<br>");
    if (chart()->title() != wrapped) chart()->setTitle(wrapped);
}

void ExplorerChart::fitLegend() {
    QLegend* legend = chart()->legend();
    if (!legend->isVisible() || legend->markers().isEmpty()) return;
    if (!preferredLegend_) preferredLegend_ = legend->alignment();
    if (preferredLegend_ != Qt::AlignBottom && preferredLegend_ != Qt::AlignTop) return;
    const QFontMetricsF fm(legend->font());
    double needed = 0;
    for (QLegendMarker* m : legend->markers())
        if (m->isVisible()) needed += fm.horizontalAdvance(m->label()) + 2 * fm.height() + 8;
    const Qt::Alignment want = needed > width() - 16 ? Qt::AlignRight : preferredLegend_;
    if (legend->alignment() != want) legend->setAlignment(want);
}

void ExplorerChart::resizeEvent(QResizeEvent* e) {
    QChartView::resizeEvent(e);
    // Axis labels whole, never "…": the axis takes the room its labels need (Qt 6.2+).
    for (QAbstractAxis* a : chart()->axes())
        if (a->truncateLabels()) a->setTruncateLabels(false);
    fitTitle();
    fitLegend();
    placeEmptyMessage();
}

void ExplorerChart::setChartStyle(const ChartStyle& s) {
    style_ = s;
    applyChartStyle(chart(), s);
    restyle();
    fitTitle();
}

QString formatNumber(double v, int precision) {
    return QString::number(v, 'g', precision);
}

double fillStackedBars(const std::vector<QBarSet*>& sets,
                       const std::vector<std::vector<double>>& bars) {
    double tallest = 0;
    for (const auto& b : bars) {
        double sum = 0;
        for (double v : b)
            sum += v;
        tallest = std::max(tallest, sum);
    }
    for (std::size_t k = 0; k < sets.size(); ++k) {
        QBarSet* set = sets[k];
        if (set->count() != int(bars.size())) {
            set->remove(0, set->count());
            for (const auto& b : bars)
                set->append(b[k]);
        } else {
            for (std::size_t i = 0; i < bars.size(); ++i)
                set->replace(int(i), bars[i][k]);
        }
    }
    return tallest;
}

NiceTicks niceTicks(double lo, double hi, int targetTicks) {
    if (!(hi > lo)) hi = lo + 1;
    const double raw = (hi - lo) / std::max(1, targetTicks);
    const double scale = std::pow(10.0, std::floor(std::log10(raw)));
    double step = 10 * scale;
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (raw <= m * scale * (1 + 1e-12)) {
            step = m * scale;
            break;
        }
    NiceTicks t;
    t.step = step;
    t.min = std::floor(lo / step + 1e-9) * step;
    t.max = std::ceil(hi / step - 1e-9) * step;
    t.decimals = std::max(0, int(-std::floor(std::log10(step) + 1e-9)));
    return t;
}

void setNiceAxis(QValueAxis* axis, double lo, double hi, bool signedLabels) {
    const NiceTicks t = niceTicks(lo, hi);
    // Ticks at whole multiples of a 1-2-5 step from 0, labels with just the decimals the step
    // needs: never 1e+03, never 33 / 67 / 100.
    const QString format = QString("%%1.%2f").arg(signedLabels ? "+" : "").arg(t.decimals);
    if (axis->tickType() != QValueAxis::TicksDynamic) axis->setTickType(QValueAxis::TicksDynamic);
    if (axis->tickAnchor() != 0) axis->setTickAnchor(0);
    if (axis->tickInterval() != t.step) axis->setTickInterval(t.step);
    if (axis->labelFormat() != format) axis->setLabelFormat(format);
    if (axis->min() != t.min || axis->max() != t.max) axis->setRange(t.min, t.max);
}

void setNiceRange(QValueAxis* axis, double max) {
    setNiceAxis(axis, 0, max > 0 ? max : 1);
}

void styleComponentSets(const std::vector<QBarSet*>& sets, const std::vector<Component>& components,
                        const ChartStyle& style) {
    for (std::size_t i = 0; i < sets.size() && i < components.size(); ++i) {
        sets[i]->setBrush(componentBrush(components[i], style));
        sets[i]->setPen(QPen(style.publication ? Qt::black : Qt::transparent, 0.5));
    }
}

void showComponentTooltips(QAbstractBarSeries* series, const std::vector<QBarSet*>& sets,
                           std::vector<Component> components, const QString& unit) {
    QObject::connect(
        series, &QAbstractBarSeries::hovered, series,
        [sets, components = std::move(components), unit](bool on, int index, QBarSet* set) {
            if (!on) {
                QToolTip::hideText();
                return;
            }
            const auto it = std::find(sets.begin(), sets.end(), set);
            if (it == sets.end()) return;
            const Component c = components[std::size_t(it - sets.begin())];
            QToolTip::showText(QCursor::pos(), QString("<b>%1</b>: %2 %3<br>%4")
                                                   .arg(componentName(c))
                                                   .arg(set->at(index), 0, 'g', 4)
                                                   .arg(unit, componentTooltip(c)));
        });
}

BarAxes addBarAxes(QChart* chart, QAbstractSeries* series, Qt::Orientation bars,
                   const QString& valueTitle, const QString& labelFormat) {
    BarAxes a{new QBarCategoryAxis, new QValueAxis};
    a.values->setTitleText(valueTitle);
    a.values->setLabelFormat(labelFormat);
    const bool horizontal = bars == Qt::Horizontal;
    chart->addAxis(a.categories, horizontal ? Qt::AlignLeft : Qt::AlignBottom);
    chart->addAxis(a.values, horizontal ? Qt::AlignBottom : Qt::AlignLeft);
    series->attachAxis(a.categories);
    series->attachAxis(a.values);
    return a;
}

bool showOccurringSets(QAbstractBarSeries* series, const std::vector<QBarSet*>& sets,
                       const std::vector<std::vector<double>>& bars, std::vector<bool>& active,
                       QObject* owner) {
    std::vector<bool> now(sets.size());
    for (std::size_t k = 0; k < sets.size(); ++k)
        for (const auto& b : bars)
            now[k] = now[k] || (k < b.size() && b[k] > 0);
    if (now == active) return false;
    for (QBarSet* set : sets)
        if (series->barSets().contains(set)) {
            series->take(set);
            set->setParent(owner);
        }
    for (std::size_t k = 0; k < sets.size(); ++k)
        if (now[k]) series->append(sets[k]);
    active = now;
    return true;
}

void setCategories(QBarCategoryAxis* axis, QStringList& shown, const QStringList& names) {
    if (names == shown) return;
    axis->clear();
    axis->append(names);
    shown = names;
}

std::vector<QBarSet*> appendBarSets(QAbstractBarSeries* series, const QStringList& labels) {
    std::vector<QBarSet*> sets;
    for (const QString& label : labels) {
        auto* set = new QBarSet(label);
        sets.push_back(set);
        series->append(set);
    }
    return sets;
}

} // namespace madmax::ui
