// Charts to PNG (1×/2×/3×), SVG (text stays text) and PDF (vector, fonts embedded) at paper
// sizes, their data to CSV and JSON, and "export all" to a folder. Works without a display
// (offscreen platform); every file is written to a temporary name and renamed into place.
#pragma once

#include "charts/explorer_chart.hpp"

#include <QString>

namespace madmax::ui {

enum class ExportFormat { Png, Svg, Pdf, Csv, Json };
QString extensionOf(ExportFormat f);
bool parseExportFormat(const QString& s, ExportFormat* out);

struct ExportOptions {
    ExportFormat format = ExportFormat::Svg;
    double widthIn = 3.5; ///< single column; 7.0 for double column
    double heightIn = 2.6;
    int pixelScale = 2; ///< PNG: 1, 2 or 3 × the 96-dpi logical size
    ChartStyle style = ChartStyle::paper();
};

inline constexpr double kLogicalDpi = 96.0;

/// Render chart `chartId` for `input` into `path`. Returns an error message, or empty.
QString exportChart(const QString& chartId, const ChartInput& input, const QString& path,
                    const ExportOptions& options);
/// Write a chart's data table as CSV or JSON.
QString exportTable(const ExplorerChart& chart, const QString& path, ExportFormat format);
/// Every chart as SVG, PDF and PNG plus its CSV and JSON, and the scenario as scenario.json.
QString exportAll(const ChartInput& input, const QString& folder, const ExportOptions& options);

QString tableToCsv(const ChartTable& t);
QString tableToJson(const QString& chartId, const ChartTable& t);

} // namespace madmax::ui
