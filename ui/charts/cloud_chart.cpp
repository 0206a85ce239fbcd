#include "cloud_chart.hpp"

#include <QChart>
#include <QLegend>
#include <QScatterSeries>

#include <algorithm>
#include <cmath>

namespace madmax::ui {

namespace {
const Component kProviderColours[] = {Component::Forward, Component::CommTP, Component::Recompute,
                                      Component::CommDP, Component::CommPP};
const QScatterSeries::MarkerShape kShapes[] = {
    QScatterSeries::MarkerShapeCircle, QScatterSeries::MarkerShapeRectangle,
    QScatterSeries::MarkerShapeTriangle, QScatterSeries::MarkerShapeRotatedRectangle,
    QScatterSeries::MarkerShapePentagon};
double decadeBelow(double v) { return std::pow(10.0, std::floor(std::log10(v))); }
double decadeAbove(double v) { return std::pow(10.0, std::ceil(std::log10(v))); }
} // namespace

CloudChart::CloudChart(QWidget* parent) : ExplorerChart(parent) {
    QChart* c = chart();
    c->setTitle(title());
    x_ = new QLogValueAxis;
    x_->setBase(10);
    x_->setTitleText("energy (MWh)");
    x_->setLabelFormat("%g");
    x_->setMinorTickCount(8);
    y_ = new QLogValueAxis;
    y_->setBase(10);
    y_->setTitleText("cost ($)");
    y_->setLabelFormat("%g");
    y_->setMinorTickCount(8);
    c->addAxis(x_, Qt::AlignBottom);
    c->addAxis(y_, Qt::AlignLeft);
    c->legend()->setAlignment(Qt::AlignBottom);
    setToolTip(description());
    restyle();
}

QString CloudChart::description() const {
    return "The MAD-Max artifact's DLRM-A training table ('[A] Cloud Provider Results.xlsx'): "
           "each point is a provider's GPU at its GPU count and MLP strategy, its QPS from the "
           "reference engine on the artifact's system file, cost = GPU-hours × the instance's "
           "hourly rate per GPU, energy = GPU-hours × the node's TDP per GPU. Lower left is "
           "cheaper and greener; the table lists the sheet's own figures beside them.";
}

void CloudChart::restyle() {
    for (std::size_t i = 0; i < providers_.size(); ++i) {
        const QColor col = componentColor(kProviderColours[i % 5]);
        providers_[i]->setColor(col);
        providers_[i]->setBorderColor(col.darker(130));
        providers_[i]->setMarkerSize(9);
        providers_[i]->setMarkerShape(style_.hatching ? kShapes[i % 5] : kShapes[0]);
    }
}

void CloudChart::setInput(const ChartInput& in) {
    table_ = {};
    table_.columns = {"provider",   "gpu",           "gpus",          "strategy",
                      "qps_sheet",  "qps_reference", "cost_usd_sheet", "cost_usd_reference",
                      "energy_mwh_sheet", "energy_mwh_reference"};
    for (auto* s : providers_)
        chart()->removeSeries(s);
    qDeleteAll(providers_);
    providers_.clear();
    const bool any = in.cloud && std::any_of(in.cloud->begin(), in.cloud->end(), [](const auto& r) {
                         return r.reference5b.costUsd > 0 && r.reference5b.energyMwh > 0;
                     });
    setEmptyMessage(any ? QString()
                        : QString("Reproduce the artifact's cloud table to draw it (madmax "
                                  "figure --chart cloud, or Co-design → Cloud table)"));
    for (auto* a : chart()->axes())
        a->setVisible(any);
    if (!any) return;
    QStringList names;
    double xlo = 1e300, xhi = 0, ylo = 1e300, yhi = 0;
    for (const seed::CloudTableRow& r : *in.cloud) {
        table_.rows.append({QString::fromStdString(r.provider), QString::fromStdString(r.gpu),
                            QString::number(r.gpus), QString::fromStdString(r.strategy),
                            formatNumber(r.publishedQps, 8), formatNumber(r.referenceQps, 8),
                            formatNumber(r.published5b.costUsd, 8),
                            formatNumber(r.reference5b.costUsd, 8),
                            formatNumber(r.published5b.energyMwh, 6),
                            formatNumber(r.reference5b.energyMwh, 6)});
        const double x = r.reference5b.energyMwh, y = r.reference5b.costUsd;
        if (!(x > 0 && y > 0)) continue; // an internal cluster: no hourly rate
        const QString name = QString::fromStdString(r.provider).replace('_', ' ');
        if (!names.contains(name)) {
            names << name;
            auto* s = new QScatterSeries;
            s->setName(name);
            chart()->addSeries(s);
            s->attachAxis(x_);
            s->attachAxis(y_);
            providers_.push_back(s);
        }
        providers_[std::size_t(names.indexOf(name))]->append(x, y);
        xlo = std::min(xlo, x), xhi = std::max(xhi, x);
        ylo = std::min(ylo, y), yhi = std::max(yhi, y);
    }
    x_->setRange(decadeBelow(xlo / 1.1), decadeAbove(xhi * 1.1));
    y_->setRange(decadeBelow(ylo / 1.1), decadeAbove(yhi * 1.1));
    applyChartStyle(chart(), style_);
    restyle();
}

ChartTable CloudChart::table() const { return table_; }

} // namespace madmax::ui
