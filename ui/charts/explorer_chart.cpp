#include "explorer_chart.hpp"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QCursor>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace madmax::ui {

ExplorerChart::ExplorerChart(QWidget* parent) : QChartView(new QChart, parent) {
    setRenderHint(QPainter::Antialiasing);
    chart()->setAnimationOptions(QChart::NoAnimation);
    setRubberBand(QChartView::NoRubberBand);
}

void ExplorerChart::setEmptyMessage(const QString& text) {
    empty_ = text;
    if (!emptyItem_) {
        emptyItem_ = new QGraphicsSimpleTextItem(chart());
        emptyItem_->setZValue(100);
        connect(chart(), &QChart::plotAreaChanged, this, [this] { placeEmptyMessage(); });
    }
    emptyItem_->setText(text);
    emptyItem_->setVisible(!text.isEmpty());
    placeEmptyMessage();
}

void ExplorerChart::placeEmptyMessage() {
    if (!emptyItem_ || empty_.isEmpty()) return;
    QFont f = chart()->font();
    emptyItem_->setFont(f);
    emptyItem_->setBrush(QColor(0x70, 0x70, 0x70));
    const QRectF area = chart()->plotArea();
    const QRectF box = emptyItem_->boundingRect();
    emptyItem_->setPos(area.center().x() - box.width() / 2, area.center().y() - box.height() / 2);
}

void ExplorerChart::resizeEvent(QResizeEvent* e) {
    QChartView::resizeEvent(e);
    placeEmptyMessage();
}

void ExplorerChart::setChartStyle(const ChartStyle& s) {
    style_ = s;
    applyChartStyle(chart(), s);
    restyle();
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

void setNiceRange(QValueAxis* axis, double max) {
    if (!(max > 0)) max = 1;
    const double scale = std::pow(10.0, std::floor(std::log10(max)));
    double nice = 10 * scale;
    for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
        if (max <= m * scale * (1 + 1e-12)) {
            nice = m * scale;
            break;
        }
    if (axis->min() != 0 || axis->max() != nice) axis->setRange(0, nice);
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

void setCategories(QBarCategoryAxis* axis, QStringList& shown, const QStringList& names) {
    if (names == shown) return;
    axis->clear();
    axis->append(names);
    shown = names;
}

} // namespace madmax::ui
