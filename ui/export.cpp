#include "export.hpp"

#include "charts/chart_factory.hpp"
#include "madmax/scenario_io.hpp"

#include <QCoreApplication>
#include <QDir>
#include <QBuffer>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QSvgGenerator>

#include <filesystem>
#include <random>

namespace madmax::ui {

QString extensionOf(ExportFormat f) {
    switch (f) {
    case ExportFormat::Png:
        return "png";
    case ExportFormat::Svg:
        return "svg";
    case ExportFormat::Pdf:
        return "pdf";
    case ExportFormat::Csv:
        return "csv";
    case ExportFormat::Json:
        return "json";
    }
    return {};
}

bool parseExportFormat(const QString& s, ExportFormat* out) {
    for (ExportFormat f : {ExportFormat::Png, ExportFormat::Svg, ExportFormat::Pdf,
                           ExportFormat::Csv, ExportFormat::Json})
        if (extensionOf(f) == s.toLower()) {
            *out = f;
            return true;
        }
    return false;
}

namespace {

/// Write rendered bytes through the core's atomic writer: every write checked, fsync, then a
/// rename; a device, folder or link at `path` is never replaced, and a failure leaves the old
/// file as it was.
QString writeBytes(const QString& path, const QByteArray& bytes) {
    try {
        writeFileAtomically(path.toStdString(), bytes.toStdString());
    } catch (const std::exception& e) {
        return QString::fromStdString(e.what());
    }
    return {};
}

QString writeText(const QString& path, const QString& text) {
    try {
        writeFileAtomically(path.toStdString(), text.toStdString());
    } catch (const std::exception& e) {
        return QString::fromStdString(e.what());
    }
    return {};
}

/// Lay the chart out at its logical size without showing a window.
void layOut(ExplorerChart& view, QSize logical) {
    view.setAttribute(Qt::WA_DontShowOnScreen);
    view.setFrameShape(QFrame::NoFrame);
    view.resize(logical);
    view.show();
    QCoreApplication::processEvents();
}

/// Draw the chart's scene (the chart and any items painted into it) into `target`: vector on an
/// SVG or PDF painter, at the target's resolution on an image.
void renderScene(ExplorerChart& chart, QPainter& p, const QRectF& target, QSize logical) {
    chart.scene()->render(&p, target, QRectF(QPointF(0, 0), QSizeF(logical)),
                          Qt::IgnoreAspectRatio);
}

} // namespace

QString exportChart(const QString& chartId, const ChartInput& input, const QString& path,
                    const ExportOptions& o) {
    if (o.format == ExportFormat::Csv || o.format == ExportFormat::Json) {
        auto chart = createChart(chartId);
        if (!chart)
            return QString("unknown chart \"%1\"; charts: %2").arg(chartId, chartIds().join(", "));
        chart->setInput(input);
        return exportTable(*chart, path, o.format);
    }
    if (o.widthIn <= 0 || o.heightIn <= 0 || o.widthIn > 100 || o.heightIn > 100)
        return QString("figure size %1 × %2 in is out of range (0 to 100 inches)")
            .arg(o.widthIn)
            .arg(o.heightIn);
    if (o.pixelScale < 1 || o.pixelScale > 8) return "the PNG scale must be 1 to 8";
    auto chart = createChart(chartId);
    if (!chart)
        return QString("unknown chart \"%1\"; charts: %2").arg(chartId, chartIds().join(", "));
    chart->setChartStyle(o.style);
    chart->setInput(input);
    // An empty frame is no figure: say why instead (exit code 2 from `madmax figure`).
    if (!chart->emptyMessage().isEmpty())
        return QString("the %1 chart has nothing to show: %2").arg(chartId, chart->emptyMessage());
    const QSize logical(qRound(o.widthIn * kLogicalDpi), qRound(o.heightIn * kLogicalDpi));
    layOut(*chart, logical);
    // Rendered into memory first: nothing touches `path` until the whole file exists.
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);

    switch (o.format) {
    case ExportFormat::Png: {
        QImage img(logical * o.pixelScale, QImage::Format_ARGB32);
        img.fill(Qt::white);
        QPainter p(&img);
        p.setRenderHint(QPainter::Antialiasing);
        p.setRenderHint(QPainter::TextAntialiasing);
        renderScene(*chart, p, QRectF(QPointF(0, 0), QSizeF(img.size())), logical);
        p.end();
        img.setDotsPerMeterX(qRound(kLogicalDpi * o.pixelScale / 0.0254));
        img.setDotsPerMeterY(qRound(kLogicalDpi * o.pixelScale / 0.0254));
        if (!img.save(&buffer, "PNG")) return QString("cannot encode the PNG for %1").arg(path);
        break;
    }
    case ExportFormat::Svg: {
        QSvgGenerator gen;
        gen.setOutputDevice(&buffer);
        gen.setSize(logical);
        gen.setViewBox(QRect(QPoint(0, 0), logical));
        gen.setResolution(int(kLogicalDpi));
        gen.setTitle(chart->title());
        gen.setDescription(chart->description());
        QPainter p;
        if (!p.begin(&gen)) return QString("cannot render the SVG for %1").arg(path);
        renderScene(*chart, p, QRectF(QPointF(0, 0), QSizeF(logical)), logical);
        p.end();
        break;
    }
    case ExportFormat::Pdf: {
        QPdfWriter pdf(&buffer);
        pdf.setPageSize(QPageSize(QSizeF(o.widthIn, o.heightIn), QPageSize::Inch));
        pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
        pdf.setResolution(1200);
        pdf.setTitle(chart->title());
        pdf.setCreator("MAD-Max Explorer");
        QPainter p;
        if (!p.begin(&pdf)) return QString("cannot render the PDF for %1").arg(path);
        const double f = pdf.resolution() / kLogicalDpi;
        renderScene(*chart, p, QRectF(0, 0, logical.width() * f, logical.height() * f), logical);
        p.end();
        break;
    }
    default:
        break;
    }
    buffer.close();
    if (bytes.isEmpty()) return QString("nothing was rendered for %1").arg(path);
    return writeBytes(path, bytes);
}

QString tableToCsv(const ChartTable& t) {
    auto field = [](QString s) {
        if (s.contains(',') || s.contains('"') || s.contains('\n'))
            s = '"' + s.replace("\"", "\"\"") + '"';
        return s;
    };
    QString out;
    QStringList head;
    for (const auto& c : t.columns)
        head << field(c);
    out += head.join(',') + '\n';
    for (const auto& row : t.rows) {
        QStringList cells;
        for (const auto& c : row)
            cells << field(c);
        out += cells.join(',') + '\n';
    }
    return out;
}

QString tableToJson(const QString& chartId, const ChartTable& t) {
    QJsonArray rows;
    for (const auto& row : t.rows) {
        QJsonObject o;
        for (int i = 0; i < t.columns.size() && i < row.size(); ++i) {
            bool ok = false;
            const double v = row[i].toDouble(&ok);
            o[t.columns[i]] = ok ? QJsonValue(v) : QJsonValue(row[i]);
        }
        rows.append(o);
    }
    QJsonObject doc{
        {"chart", chartId}, {"columns", QJsonArray::fromStringList(t.columns)}, {"rows", rows}};
    return QString::fromUtf8(QJsonDocument(doc).toJson(QJsonDocument::Indented));
}

QString exportTable(const ExplorerChart& chart, const QString& path, ExportFormat format) {
    const ChartTable t = chart.table();
    return writeText(path,
                     format == ExportFormat::Csv ? tableToCsv(t) : tableToJson(chart.id(), t));
}

QString exportAll(const ChartInput& input, const QString& folder, const ExportOptions& options) {
    if (!QDir().mkpath(folder)) return QString("cannot create the folder %1").arg(folder);
    const QDir dir(folder);
    for (const QString& id : chartIds()) {
        // Design-space and co-design charts only when their data has been computed.
        if ((id == "heatmap" || id == "scatter") && !input.search) continue;
        if (id == "tornado" && !input.sensitivity) continue;
        if (id == "sweep" && !input.sweeps) continue;
        if (id == "cloud" && !input.cloud) continue;
        // Only the charts of the scenario's kind of workload.
        const bool serving = input.current && input.current->result.isInference;
        if (serving && trainingChartIds().contains(id) && !servingChartIds().contains(id)) continue;
        if (!serving && (id == "serving" || id == "curve" || id == "request")) continue;
        {
            // Charts with nothing to show (the comparison with nothing pinned) are left out.
            auto probe = createChart(id);
            probe->setInput(input);
            if (!probe->emptyMessage().isEmpty()) continue;
        }
        for (ExportFormat f : {ExportFormat::Svg, ExportFormat::Pdf, ExportFormat::Png,
                               ExportFormat::Csv, ExportFormat::Json}) {
            ExportOptions o = options;
            o.format = f;
            const QString err = exportChart(id, input, dir.filePath(id + "." + extensionOf(f)), o);
            if (!err.isEmpty()) return err;
        }
    }
    if (input.current) {
        const auto j = toJson(input.current->scenario);
        const QString err =
            writeText(dir.filePath("scenario.json"), QString::fromStdString(j.dump(2) + "\n"));
        if (!err.isEmpty()) return err;
    }
    return {};
}

} // namespace madmax::ui
