// Charts by name, for the window, the exporters and `madmax figure`.
#pragma once

#include "explorer_chart.hpp"

#include <QStringList>

#include <memory>

namespace madmax::ui {

QStringList chartIds();
QStringList explorerChartIds(); ///< fed by one evaluation (and pins): training and serving
QStringList trainingChartIds(); ///< shown for training workloads
QStringList servingChartIds();  ///< shown for inference workloads
QStringList designChartIds();   ///< fed by a search, a sensitivity run or sweeps
/// A new chart of kind `id`, or nullptr for an unknown id.
std::unique_ptr<ExplorerChart> createChart(const QString& id, QWidget* parent = nullptr);

} // namespace madmax::ui
