#include "figure_command.hpp"

#include "charts/chart_factory.hpp"
#include "export.hpp"
#include "madmax/codesign.hpp"
#include "madmax/engine.hpp"
#include "madmax/seed_cloud_table.hpp"

#include <QApplication>
#include <QFileInfo>

#include <cstdio>

namespace madmax::cli {

std::vector<std::string> figureChartNames() {
    if (!QCoreApplication::instance()) {
        // chartIds() needs no application object; it is a plain list.
    }
    std::vector<std::string> out;
    for (const QString& id : ui::chartIds())
        out.push_back(id.toStdString());
    return out;
}

namespace {
/// Headless rendering makes Qt say two harmless things on every run (the offscreen platform has
/// no window manager to take size hints; no XDG runtime folder in a plain shell). They are
/// dropped; anything else Qt says still reaches stderr.
void quietBenignQtMessages(QtMsgType type, const QMessageLogContext& ctx, const QString& msg) {
    if (type == QtDebugMsg || type == QtInfoMsg) return;
    if (msg.contains("propagateSizeHints") || msg.startsWith("QStandardPaths: XDG_RUNTIME_DIR"))
        return;
    std::fprintf(stderr, "%s\n", qPrintable(qFormatLogMessage(type, ctx, msg)));
}
/// The format is the output name's unless --format says it; never a silent default. False:
/// refused, with the reason on stderr.
bool resolveFormat(const FigureRequest& r, ui::ExportFormat* format) {
    // The format is the output name's unless --format says it; never a silent default.
    ui::ExportFormat named{};
    const bool hasName =
        ui::parseExportFormat(QFileInfo(QString::fromStdString(r.output)).suffix(), &named);
    if (r.format.empty()) {
        if (!hasName) {
            std::fprintf(stderr,
                         "error: -o: %s: cannot tell the format from the file name: end it in "
                         ".svg, .pdf, .png, .csv or .json, or give --format\n",
                         r.output.c_str());
            return false;
        }
        *format = named;
    } else if (!ui::parseExportFormat(QString::fromStdString(r.format), format)) {
        std::fprintf(stderr, "error: --format: \"%s\" is not one of svg, pdf, png, csv, json\n",
                     r.format.c_str());
        return false;
    } else if (hasName && named != *format) {
        std::fprintf(stderr,
                     "error: -o: %s: the file name says .%s but --format is %s; make them "
                     "agree\n",
                     r.output.c_str(), qPrintable(ui::extensionOf(named)), r.format.c_str());
        return false;
    }
    return true;
}
} // namespace

namespace {

/// Why this chart cannot be drawn for this request (printed as the error), or empty.
std::string figureRefusal(const FigureRequest& r, const Scenario& s) {
    const bool serving = s.workload.kind == WorkloadKind::Inference;
    if ((r.chart == "serving" || r.chart == "curve" || r.chart == "request") && !serving)
        return "--chart " + r.chart + " needs an inference scenario (workload.kind \"inference\")";
    if (r.chart == "comparison" && r.pins.empty())
        return "--chart comparison compares pinned scenarios: give --baseline SCENARIO (and "
               "--pin SCENARIO for more)";
    return {};
}

/// What the design-space and co-design charts draw: their searches, run first.
struct FigureStudies {
    SearchResult searched;
    std::vector<Sensitivity> sens;
    std::vector<SweepResult> sweeps;
    ResourcePareto pareto;
    std::vector<seed::CloudTableRow> cloud;
};

void runFigureStudies(const FigureRequest& r, const Scenario& s, FigureStudies& st,
                      ui::ChartInput& in) {
    if (r.chart == "heatmap" || r.chart == "scatter") {
        st.searched = search(s, {}, SearchOptions{});
        in.search = &st.searched;
    } else if (r.chart == "tornado") {
        st.sens = sensitivity(s, {}, SearchOptions{});
        in.sensitivity = &st.sens;
    } else if (r.chart == "sweep") {
        if (r.knobs.empty()) {
            for (const char* knob : {"scale_up_bw", "scale_out_bw", "hbm_bw"})
                st.sweeps.push_back(sweep(s, {{knob, {0.25, 0.5, 1, 2, 4}}}, {}, SearchOptions{}));
        } else {
            for (const auto& k : r.knobs) {
                const KnobAxis axis = parseKnobAxis(k); // throws InputError, named
                SearchSpace space;
                if (axis.knob == "gpus") space.gpus = {}; // each point searches its own count
                st.sweeps.push_back(sweep(s, {axis}, space, SearchOptions{}));
            }
        }
        in.sweeps = &st.sweeps;
    } else if (r.chart == "pareto" || r.chart == "pareto_cost") {
        std::vector<ResourceSystem> systems;
        for (const auto& id : r.systems)
            systems.push_back(loadResourceSystem(id)); // throws InputError, named
        st.pareto = resourcePareto(s, systems, r.gpus, {}, SearchOptions{});
        in.pareto = &st.pareto;
    } else if (r.chart == "cloud") {
        st.cloud = seed::reproduceCloudTable(); // the artifact's table: no scenario needed
        in.cloud = &st.cloud;
    }
}

} // namespace

int runFigure(const FigureRequest& r, const char* argv0) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    qInstallMessageHandler(quietBenignQtMessages);
    int argc = 1;
    char* argv[] = {const_cast<char*>(argv0), nullptr};
    QApplication app(argc, argv);

    ui::ExportFormat format{};
    if (!resolveFormat(r, &format)) return 2;
    if (!ui::chartIds().contains(QString::fromStdString(r.chart))) {
        std::fprintf(stderr, "error: --chart: no chart named \"%s\"; charts: %s\n", r.chart.c_str(),
                     qPrintable(ui::chartIds().join(", ")));
        return 2;
    }
    const Scenario s = loadScenario(r.scenario, PresetLibrary::builtin(), r.overrides);
    const ui::Evaluation e = ui::evaluateForDisplay(1, s);
    if (const std::string why = figureRefusal(r, s); !why.empty()) {
        std::fprintf(stderr, "error: %s\n", why.c_str());
        return 2;
    }
    ui::ChartInput in;
    in.current = &e;
    for (std::size_t i = 0; i < r.pins.size(); ++i) {
        const Scenario pin = loadScenario(r.pins[i], PresetLibrary::builtin(), {});
        // Named as the user typed it (a preset id, or a file's name without its folder and
        // extension): short enough for a legend, and what they will recognise.
        const QString name = QFileInfo(QString::fromStdString(r.pins[i])).completeBaseName();
        in.pinned.append({name, ui::evaluateForDisplay(i + 2, pin)});
    }
    if (!in.pinned.isEmpty()) in.baseline = &in.pinned.front();
    FigureStudies studies;
    runFigureStudies(r, s, studies, in);
    ui::ExportOptions o;
    o.format = format;
    o.widthIn = r.widthIn;
    o.heightIn = r.heightIn;
    o.pixelScale = r.scale;
    o.style = ui::ChartStyle::paper(r.hatching);
    const QString err =
        ui::exportChart(QString::fromStdString(r.chart), in, QString::fromStdString(r.output), o);
    if (!err.isEmpty()) {
        std::fprintf(stderr, "error: %s\n", qPrintable(err));
        return 2;
    }
    return 0;
}

} // namespace madmax::cli
