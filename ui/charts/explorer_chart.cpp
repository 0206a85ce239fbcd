#include "explorer_chart.hpp"

#include <QChart>

namespace madmax::ui {

ExplorerChart::ExplorerChart(QWidget* parent) : QChartView(new QChart, parent) {
    setRenderHint(QPainter::Antialiasing);
    chart()->setAnimationOptions(QChart::NoAnimation);
    setRubberBand(QChartView::NoRubberBand);
}

void ExplorerChart::setChartStyle(const ChartStyle& s) {
    style_ = s;
    applyChartStyle(chart(), s);
    restyle();
}

QString formatNumber(double v, int precision) { return QString::number(v, 'g', precision); }

} // namespace madmax::ui
