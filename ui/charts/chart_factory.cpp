#include "chart_factory.hpp"

#include "breakdown_chart.hpp"
#include "cloud_chart.hpp"
#include "comm_chart.hpp"
#include "comparison_chart.hpp"
#include "curve_chart.hpp"
#include "heatmap_chart.hpp"
#include "memory_chart.hpp"
#include "pareto_chart.hpp"
#include "request_chart.hpp"
#include "scatter_chart.hpp"
#include "serving_chart.hpp"
#include "sweep_chart.hpp"
#include "timeline_chart.hpp"
#include "tornado_chart.hpp"

namespace madmax::ui {

QStringList chartIds() {
    return explorerChartIds() + designChartIds();
}
QStringList explorerChartIds() {
    return trainingChartIds() + QStringList{"serving", "curve", "request"};
}
QStringList trainingChartIds() {
    return {"breakdown", "comm", "memory", "timeline", "comparison"};
}
QStringList servingChartIds() {
    return {"serving", "memory", "curve", "comparison", "request"};
}
QStringList designChartIds() {
    return {"heatmap", "scatter", "tornado", "sweep", "pareto", "pareto_cost", "cloud"};
}

std::unique_ptr<ExplorerChart> createChart(const QString& id, QWidget* parent) {
    if (id == "breakdown") return std::make_unique<BreakdownChart>(parent);
    if (id == "comm") return std::make_unique<CommChart>(parent);
    if (id == "memory") return std::make_unique<MemoryChart>(parent);
    if (id == "timeline") return std::make_unique<TimelineChart>(parent);
    if (id == "comparison") return std::make_unique<ComparisonChart>(parent);
    if (id == "serving") return std::make_unique<ServingChart>(parent);
    if (id == "curve") return std::make_unique<CurveChart>(parent);
    if (id == "request") return std::make_unique<RequestChart>(parent);
    if (id == "heatmap") return std::make_unique<HeatmapChart>(parent);
    if (id == "scatter") return std::make_unique<ScatterChart>(parent);
    if (id == "tornado") return std::make_unique<TornadoChart>(parent);
    if (id == "sweep") return std::make_unique<SweepChart>(parent);
    if (id == "pareto") return std::make_unique<ParetoChart>(false, parent);
    if (id == "pareto_cost") return std::make_unique<ParetoChart>(true, parent);
    if (id == "cloud") return std::make_unique<CloudChart>(parent);
    return nullptr;
}

} // namespace madmax::ui
