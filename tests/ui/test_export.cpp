// Exports: SVG is XML with the chart's text, PDF is a PDF with a page, PNG has the requested
// pixel size, CSV has one row per bar segment or point; and the headless `madmax figure`.
#include "charts/chart_factory.hpp"
#include "export.hpp"
#include "madmax/codesign.hpp"
#include "madmax/engine.hpp"
#include "madmax/scenario_io.hpp"
#include "madmax/search.hpp"
#include "presets_store.hpp"
#include "ui_support.hpp"

#include <catch2/catch.hpp>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QProcess>
#include <QRegularExpression>
#include <QCategoryAxis>
#include <QValueAxis>
#include <QXYSeries>
#include <QXmlStreamReader>

#include <cmath>

using namespace madmax;

namespace {

ui::Evaluation defaultEvaluation(double stepOverheadS = 0) {
    ui::Evaluation e;
    e.generation = 1;
    e.scenario = loadScenario("default", PresetLibrary::builtin());
    e.scenario.workload.stepOverheadS = stepOverheadS;
    EvaluateOptions o;
    o.timeline = true;
    e.result = evaluate(e.scenario, o);
    return e;
}

QByteArray readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

} // namespace

TEST_CASE("SVG export parses as XML and keeps the chart's text as text") {
    const auto ev = defaultEvaluation();
    ui::ChartInput in;
    in.current = &ev;
    in.pinned.append({"Pinned", ev}); // the comparison needs a pin to have anything to show
    QTemporaryDir dir;
    for (const QString& id : ui::chartIds()) {
        INFO(id.toStdString());
        const QString path = dir.filePath(id + ".svg");
        ui::ExportOptions o;
        o.format = ui::ExportFormat::Svg;
        if (id == "heatmap" || id == "scatter" || id == "tornado" || id == "sweep" ||
            id == "pareto" || id == "pareto_cost" || id == "cloud" || id == "request") {
            // No search or sweep has run (the request chart: no serving scenario): an error
            // saying so, not an empty frame.
            CHECK(ui::exportChart(id, in, path, o).contains("nothing to show"));
            continue;
        }
        REQUIRE(ui::exportChart(id, in, path, o).isEmpty());
        const QByteArray svg = readAll(path);
        QXmlStreamReader xml(svg);
        while (!xml.atEnd())
            xml.readNext();
        CHECK_FALSE(xml.hasError());
        CHECK(svg.contains(ui::createChart(id)->title().split(':').first().toUtf8()));
    }
}

TEST_CASE("PDF export is a vector PDF with one page at the paper size") {
    const auto ev = defaultEvaluation();
    ui::ChartInput in;
    in.current = &ev;
    QTemporaryDir dir;
    const QString path = dir.filePath("breakdown.pdf");
    ui::ExportOptions o;
    o.format = ui::ExportFormat::Pdf;
    o.widthIn = 7.0; // double column
    o.heightIn = 3.0;
    REQUIRE(ui::exportChart("breakdown", in, path, o).isEmpty());
    const QByteArray pdf = readAll(path);
    CHECK(pdf.startsWith("%PDF"));
    CHECK(pdf.contains("/Type /Page"));
    CHECK(pdf.contains("/MediaBox [0 0 504.000000 216.000000]")); // 7 × 3 in at 72 pt/in
    CHECK(pdf.contains("/FontFile"));                             // fonts embedded
}

TEST_CASE("PNG export has the requested pixel size at 1×, 2× and 3×") {
    const auto ev = defaultEvaluation();
    ui::ChartInput in;
    in.current = &ev;
    QTemporaryDir dir;
    for (int scale : {1, 2, 3}) {
        const QString path = dir.filePath(QString("memory%1.png").arg(scale));
        ui::ExportOptions o;
        o.format = ui::ExportFormat::Png;
        o.widthIn = 3.5;
        o.heightIn = 2.5;
        o.pixelScale = scale;
        REQUIRE(ui::exportChart("memory", in, path, o).isEmpty());
        const QImage img(path);
        CHECK(img.width() == 336 * scale); // 3.5 in × 96 px/in
        CHECK(img.height() == 240 * scale);
    }
}

TEST_CASE("CSV has a header and one row per bar segment") {
    const auto ev = defaultEvaluation();
    ui::ChartInput in;
    in.current = &ev;
    QTemporaryDir dir;
    const QString path = dir.filePath("breakdown.csv");
    ui::ExportOptions o;
    o.format = ui::ExportFormat::Csv;
    REQUIRE(ui::exportChart("breakdown", in, path, o).isEmpty());
    const QStringList lines = QString::fromUtf8(readAll(path)).trimmed().split('\n');
    // 2 bars (serialized, overlapped) × 13 components (DLRM's embedding lookups, the host idle
    // time and the stated framework overhead included, zero here) + header.
    CHECK(lines.size() == 1 + 2 * 13);
    CHECK(lines.first() == "bar,component,seconds");
    // The overlapped bar is the predicted step: its segments add up to the step time.
    double overlapped = 0;
    for (const QString& line : lines)
        if (line.startsWith("Overlapped,")) overlapped += line.section(',', 2).toDouble();
    CHECK(overlapped == Approx(ev.result.stepTimeS).epsilon(1e-4));
    // A stated framework overhead is a segment of its own, and the bar still adds up.
    const auto withOverhead = defaultEvaluation(0.25);
    in.current = &withOverhead;
    REQUIRE(ui::exportChart("breakdown", in, path, o).isEmpty());
    const QStringList stated = QString::fromUtf8(readAll(path)).trimmed().split('\n');
    CHECK(stated.contains("Overlapped,Overhead,0.25"));
    double total = 0;
    for (const QString& line : stated)
        if (line.startsWith("Overlapped,")) total += line.section(',', 2).toDouble();
    CHECK(total == Approx(withOverhead.result.stepTimeS).epsilon(1e-4));
    in.current = &ev;
    o.format = ui::ExportFormat::Json;
    REQUIRE(ui::exportChart("memory", in, dir.filePath("memory.json"), o).isEmpty());
    CHECK(readAll(dir.filePath("memory.json")).contains("\"capacity\""));
}

TEST_CASE("Export all writes every chart in every format and the scenario") {
    const auto ev = defaultEvaluation();
    ui::ChartInput in;
    in.current = &ev;
    QTemporaryDir dir;
    REQUIRE(ui::exportAll(in, dir.filePath("out"), ui::ExportOptions{}).isEmpty());
    for (const QString& id : ui::trainingChartIds())
        for (const char* ext : {"svg", "pdf", "png", "csv", "json"})
            CHECK(QFile::exists(dir.filePath("out/" + id + "." + ext)) == (id != "comparison"));
    // Exporting the comparison alone with nothing pinned is an error with the reason.
    ui::ExportOptions svg;
    svg.format = ui::ExportFormat::Svg;
    CHECK(ui::exportChart("comparison", in, dir.filePath("c.svg"), svg)
              .contains("nothing to show"));
    CHECK_FALSE(QFile::exists(dir.filePath("out/heatmap.svg"))); // no search has run
    CHECK_FALSE(QFile::exists(dir.filePath("out/serving.svg"))); // a training scenario
    const auto j = nlohmann::json::parse(readAll(dir.filePath("out/scenario.json")).toStdString());
    CHECK(parseScenario(j, "scenario.json").model.id == "llama3-70b");
}

TEST_CASE("Bad export requests are refused with a reason") {
    const auto ev = defaultEvaluation();
    ui::ChartInput in;
    in.current = &ev;
    QTemporaryDir dir;
    ui::ExportOptions o;
    CHECK(ui::exportChart("nonesuch", in, dir.filePath("x.svg"), o).contains("unknown chart"));
    o.widthIn = -1;
    CHECK(ui::exportChart("memory", in, dir.filePath("x.svg"), o).contains("out of range"));
    o.widthIn = 3.5;
    CHECK(ui::exportChart("memory", in, dir.filePath("no/such/folder/x.svg"), o)
              .contains("cannot write"));
}

TEST_CASE("madmax figure renders headless, and --list names the charts") {
    QTemporaryDir dir;
    QProcess p;
    p.start(MADMAX_CLI, {"figure", "--list"});
    REQUIRE(p.waitForFinished(60000));
    CHECK(p.exitCode() == 0);
    CHECK(p.readAllStandardOutput().contains("timeline"));

    const QString out = dir.filePath("fig.svg");
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove("DISPLAY");
    env.remove("QT_QPA_PLATFORM");
    p.setProcessEnvironment(env);
    p.start(MADMAX_CLI, {"figure", "default", "--chart", "breakdown", "--format", "svg",
                         "--width-in", "7", "-o", out});
    REQUIRE(p.waitForFinished(60000));
    CHECK(p.exitCode() == 0);
    CHECK(readAll(out).contains("<svg"));

    p.start(MADMAX_CLI, {"figure", "--chart", "nonesuch", "-o", out});
    REQUIRE(p.waitForFinished(60000));
    CHECK(p.exitCode() == 2);
    CHECK(p.readAllStandardError().contains("no chart named"));

    // The serving charts on a training scenario: refused with what they need.
    for (const char* chart : {"serving", "curve", "request"}) {
        INFO(chart);
        p.start(MADMAX_CLI, {"figure", "default", "--chart", chart, "-o", out});
        REQUIRE(p.waitForFinished(60000));
        CHECK(p.exitCode() == 2);
        CHECK(p.readAllStandardError().contains("needs an inference scenario"));
    }

    // Without --format the file name says it (it had written SVG into fig.png); a name that
    // says nothing, or contradicts --format, is refused before anything is written.
    const QString png = dir.filePath("fig.PNG");
    p.start(MADMAX_CLI, {"figure", "--chart", "memory", "-o", png});
    REQUIRE(p.waitForFinished(60000));
    CHECK(p.exitCode() == 0);
    CHECK(readAll(png).startsWith("\x89PNG"));
    for (const QStringList& args :
         {QStringList{"-o", dir.filePath("fig.xyz")},
          QStringList{"-o", dir.filePath("fig.svg"), "--format", "png"}}) {
        p.start(MADMAX_CLI, QStringList{"figure", "--chart", "memory"} + args);
        REQUIRE(p.waitForFinished(60000));
        CHECK(p.exitCode() == 2);
        const QByteArray err = p.readAllStandardError();
        CHECK((err.contains("cannot tell the format") || err.contains("make them agree")));
    }
    CHECK_FALSE(QFile::exists(dir.filePath("fig.xyz")));
}

TEST_CASE("madmax figure draws the throughput-vs-GPUs curve (MAD-Max Figure 1) for a DLRM") {
    // --chart sweep --knob gpus: at each GPU count the best plan is searched again; the CSV
    // has one row per factor, and the unscaled point is the reference (speedup 1).
    QTemporaryDir dir;
    const QString out = dir.filePath("gpus.csv");
    QProcess p;
    p.start(MADMAX_CLI, {"figure", "dlrm-dcnv2-64-h100", "--chart", "sweep", "--knob",
                         "gpus=0.5,1,2", "--format", "csv", "-o", out});
    REQUIRE(p.waitForFinished(120000));
    REQUIRE(p.exitCode() == 0);
    const QStringList lines = QString::fromUtf8(readAll(out)).trimmed().split('\n');
    REQUIRE(lines.size() == 4);
    CHECK(lines[2].startsWith("gpus,1,1,"));
    // Each point's best strategy is the plan searched there (it had read "tp=1,...,dp=128",
    // fields a DLRM does not use).
    CHECK(lines[3].startsWith("gpus,2,"));
    CHECK(lines[3].contains("emb="));
    CHECK_FALSE(lines[3].contains("tp="));
    // A bad knob is refused with the reason.
    p.start(MADMAX_CLI, {"figure", "default", "--chart", "sweep", "--knob", "gpus=x", "-o", out});
    REQUIRE(p.waitForFinished(60000));
    CHECK(p.exitCode() == 2);
    CHECK(p.readAllStandardError().contains("--knob"));
}

TEST_CASE("madmax-explorer --screenshot grabs the window once the first result is shown") {
    QTemporaryDir dir;
    const QString out = dir.filePath("shot.png");
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("QT_QPA_PLATFORM", "offscreen");
    env.insert("XDG_CONFIG_HOME", dir.filePath("config"));
    p.setProcessEnvironment(env);
    p.start(MADMAX_EXPLORER, {"--screenshot", out});
    REQUIRE(p.waitForFinished(60000));
    CHECK(p.exitCode() == 0);
    const QImage img(out);
    CHECK(img.width() >= 1000);
    // Saved the way every writer saves (issue #30): over a 0600 picture it stays 0600, and a
    // symbolic link is refused rather than followed, the file it points at untouched.
    QFile::setPermissions(out, QFile::ReadOwner | QFile::WriteOwner);
    p.start(MADMAX_EXPLORER, {"--screenshot", out});
    REQUIRE(p.waitForFinished(60000));
    CHECK(p.exitCode() == 0);
    const QFile::Permissions kept = QFile::permissions(out);
    CHECK(kept.testFlags(QFile::ReadOwner | QFile::WriteOwner));
    CHECK_FALSE(kept & (QFile::ReadGroup | QFile::WriteGroup | QFile::ReadOther | QFile::WriteOther));
    const QString link = dir.filePath("link.png");
    REQUIRE(QFile::link(out, link));
    const qint64 size = QFileInfo(out).size();
    p.start(MADMAX_EXPLORER, {"--screenshot", link});
    REQUIRE(p.waitForFinished(60000));
    CHECK(p.exitCode() == 2);
    CHECK(p.readAllStandardError().contains("symbolic link"));
    CHECK(QFileInfo(out).size() == size);
}

TEST_CASE("Design-space and co-design charts export like the others") {
    const auto ev = defaultEvaluation();
    SearchOptions so;
    const SearchResult found = search(ev.scenario, {}, so);
    const std::vector<Sensitivity> sens = {{"flops", 0.6, 1.5}, {"hbm_bw", 0.9, 1.05}};
    ui::ChartInput in;
    in.current = &ev;
    in.search = &found;
    in.sensitivity = &sens;
    QTemporaryDir dir;
    for (const QString id : {"heatmap", "scatter", "tornado"}) {
        INFO(id.toStdString());
        ui::ExportOptions o;
        o.format = ui::ExportFormat::Svg;
        REQUIRE(ui::exportChart(id, in, dir.filePath(id + ".svg"), o).isEmpty());
        CHECK(readAll(dir.filePath(id + ".svg")).contains("<svg"));
        o.format = ui::ExportFormat::Csv;
        REQUIRE(ui::exportChart(id, in, dir.filePath(id + ".csv"), o).isEmpty());
        CHECK(QString::fromUtf8(readAll(dir.filePath(id + ".csv"))).count('\n') > 2);
    }
    QProcess p;
    p.start(MADMAX_CLI, {"figure", "default", "--chart", "heatmap", "--format", "png", "-o",
                         dir.filePath("h.png")});
    REQUIRE(p.waitForFinished(120000));
    CHECK(p.exitCode() == 0);
    CHECK(QImage(dir.filePath("h.png")).width() == 336 * 2);
}

TEST_CASE("A 2x PNG is the 1x figure at twice the resolution, not a crop of it") {
    const auto ev = defaultEvaluation();
    ui::ChartInput in;
    in.current = &ev;
    QTemporaryDir dir;
    ui::ExportOptions o;
    o.format = ui::ExportFormat::Png;
    o.pixelScale = 1;
    REQUIRE(ui::exportChart("breakdown", in, dir.filePath("a.png"), o).isEmpty());
    o.pixelScale = 2;
    REQUIRE(ui::exportChart("breakdown", in, dir.filePath("b.png"), o).isEmpty());
    const QImage one = QImage(dir.filePath("a.png")).convertToFormat(QImage::Format_Grayscale8);
    const QImage two = QImage(dir.filePath("b.png"))
                           .scaled(one.size(), Qt::IgnoreAspectRatio, Qt::SmoothTransformation)
                           .convertToFormat(QImage::Format_Grayscale8);
    double diff = 0;
    for (int y = 0; y < one.height(); ++y)
        for (int x = 0; x < one.width(); ++x)
            diff += std::abs(one.pixelColor(x, y).value() - two.pixelColor(x, y).value());
    diff /= double(one.width()) * one.height();
    CHECK(diff <
          12.0); // mean grey-level difference out of 255: the same picture, antialiased differently
}

TEST_CASE("madmax figure never replaces a device or folder, and says nothing on success") {
    // Issue #9: `-o /dev/full` replaced the device by a regular file; every run printed Qt
    // plugin warnings. The figure is rendered in memory and written by the core's atomic
    // writer, which refuses anything that is not a regular file.
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove("XDG_RUNTIME_DIR");
    p.setProcessEnvironment(env);
    p.start(MADMAX_CLI, {"figure", "--chart", "breakdown", "--format", "svg", "-o", "/dev/full"});
    REQUIRE(p.waitForFinished(60000));
    CHECK(p.exitCode() == 2);
    CHECK(p.readAllStandardError().contains("not a regular file"));
    CHECK_FALSE(QFileInfo("/dev/full").isFile()); // still the device

    QTemporaryDir dir;
    p.start(MADMAX_CLI, {"figure", "--chart", "memory", "--format", "pdf", "-o", dir.path()});
    REQUIRE(p.waitForFinished(60000));
    CHECK(p.exitCode() == 2);
    CHECK(QFileInfo(dir.path()).isDir());

    const QString out = dir.filePath("m.pdf");
    p.start(MADMAX_CLI, {"figure", "--chart", "memory", "--format", "pdf", "-o", out});
    REQUIRE(p.waitForFinished(60000));
    CHECK(p.exitCode() == 0);
    CHECK(p.readAllStandardError().isEmpty());
    CHECK(readAll(out).startsWith("%PDF"));
    CHECK(QDir(dir.path()).entryList(QDir::Hidden | QDir::Files).size() == 1); // no temp left
}

TEST_CASE("madmax-explorer --help works without a display, and a plain start says what to do") {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const char* v : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"})
        env.remove(v);
    p.setProcessEnvironment(env);
    p.start(MADMAX_EXPLORER, {"--help"});
    REQUIRE(p.waitForFinished(60000));
    CHECK(p.exitCode() == 0);
    CHECK(p.readAllStandardOutput().contains("--screenshot"));
    p.start(MADMAX_EXPLORER, {});
    REQUIRE(p.waitForFinished(60000));
    CHECK(p.exitStatus() == QProcess::NormalExit); // was an abort inside Qt
    CHECK(p.exitCode() == 2);
    CHECK(p.readAllStandardError().contains("no display"));
}

namespace {
/// Every chart's input: the default training scenario pinned and current, a search, a
/// sensitivity study and sweeps; and the serving charts on a serving preset.
struct AllChartInputs {
    ui::Evaluation training = defaultEvaluation();
    ui::Evaluation serving = [] {
        ui::Evaluation e = ui::evaluateForDisplay(1, loadScenario("serve-llama2-70b-8xh100-server",
                                                                  PresetLibrary::builtin()));
        return e;
    }();
    SearchResult found = search(training.scenario, {}, SearchOptions{});
    std::vector<Sensitivity> sens = sensitivity(training.scenario, {}, SearchOptions{});
    std::vector<SweepResult> sweeps = {
        sweep(training.scenario, {{"scale_out_bw", {0.25, 0.5, 1, 2, 4}}}, {}, SearchOptions{}),
        sweep(training.scenario, {{"hbm_bw", {0.25, 0.5, 1, 2, 4}}}, {}, SearchOptions{})};
    ResourcePareto pareto =
        resourcePareto(training.scenario,
                       {loadResourceSystem("dgx-h100-superpod"),
                        loadResourceSystem("dgx-b200-superpod"),
                        loadResourceSystem("dgx-a100-80gb-superpod")},
                       {64, 128, 256, 512}, {}, SearchOptions{});
    std::vector<seed::CloudTableRow> cloud = seed::reproduceCloudTable();
    ui::ChartInput inputFor(const QString& id) const {
        ui::ChartInput in;
        const bool serve = id == "serving" || id == "curve" || id == "request";
        in.current = serve ? &serving : &training;
        in.pinned.append({"Baseline", serve ? serving : training});
        in.search = &found;
        in.sensitivity = &sens;
        in.sweeps = &sweeps;
        in.pareto = &pareto;
        in.cloud = &cloud;
        return in;
    }
};
} // namespace

TEST_CASE("Every chart at 3.5 in and 7 in: no text elided, round ticks") {
    // Issue #9: figures a reviewer accepts as they are. Elided text shows as "…" in the SVG;
    // tick steps must be 1, 2 or 5 × 10^k from a multiple of the step.
    static const AllChartInputs inputs;
    QTemporaryDir dir;
    for (const QString& id : ui::chartIds()) {
        for (double width : {3.5, 7.0}) {
            INFO(id.toStdString() << " at " << width << " in");
            ui::ExportOptions o;
            o.format = ui::ExportFormat::Svg;
            o.widthIn = width;
            o.heightIn = width * 0.7;
            o.style = ui::ChartStyle::paper(false);
            const QString path = dir.filePath(QString("%1-%2.svg").arg(id).arg(width));
            REQUIRE(ui::exportChart(id, inputs.inputFor(id), path, o).isEmpty());
            const QString svg = QString::fromUtf8(readAll(path));
            QStringList elided; // text elements ending in "…" or "..."
            const QRegularExpression text(">([^<]*(\\.\\.\\.|\u2026)[^<]*)<");
            for (auto it = text.globalMatch(svg); it.hasNext();)
                elided << it.next().captured(1);
            INFO("elided: " << elided.join(" | ").toStdString());
            CHECK(elided.isEmpty());
            if (id == "scatter") CHECK(svg.size() < 1000000); // ≤ 1 MB: the cloud is one path
            auto chart = ui::createChart(id);
            chart->setInput(inputs.inputFor(id));
            for (QAbstractAxis* a : chart->chart()->axes()) {
                auto* v = qobject_cast<QValueAxis*>(a);
                // Category axes (timeline lanes) derive from QValueAxis but label categories.
                if (!v || !v->isVisible() || qobject_cast<QCategoryAxis*>(a)) continue;
                INFO("axis " << v->titleText().toStdString());
                REQUIRE(v->tickType() == QValueAxis::TicksDynamic);
                const double step = v->tickInterval();
                const double mant = step / std::pow(10.0, std::floor(std::log10(step)));
                CHECK((std::abs(mant - 1) < 1e-9 || std::abs(mant - 2) < 1e-9 ||
                       std::abs(mant - 5) < 1e-9));
                CHECK(std::abs(v->min() / step - std::round(v->min() / step)) < 1e-6);
                CHECK_FALSE(v->labelFormat().contains('e'));
            }
        }
    }
}

TEST_CASE("A series keeps its colour whatever else is drawn (explorer and figure alike)") {
    // Issue #9: colours were assigned by position, so "Current" changed colour as pins came
    // and went, and differed between the explorer (with pins) and `madmax figure` (without).
    const ui::Evaluation serving = ui::evaluateForDisplay(
        1, loadScenario("serve-llama2-70b-8xh100-server", PresetLibrary::builtin()));
    auto currentColour = [&](int pins) {
        ui::ChartInput in;
        in.current = &serving;
        for (int i = 0; i < pins; ++i)
            in.pinned.append({QString("Pin %1").arg(i + 1), serving});
        auto chart = ui::createChart("curve");
        chart->setChartStyle(ui::ChartStyle::paper(false));
        chart->setInput(in);
        for (QAbstractSeries* s : chart->chart()->series())
            if (s->name() == "Current") return qobject_cast<QXYSeries*>(s)->pen().color();
        return QColor();
    };
    const QColor alone = currentColour(0);
    REQUIRE(alone.isValid());
    CHECK(currentColour(1) == alone);
    CHECK(currentColour(3) == alone);
}

TEST_CASE("madmax figure compares pinned scenarios: --baseline first, --pin after, then the current") {
    // The comparison chart's table holds each scenario's absolute numbers; every row must be
    // what evaluate() predicts for that scenario (the current one with its --set overrides).
    QTemporaryDir dir;
    const QString out = dir.filePath("cmp.csv");
    QProcess p;
    p.start(MADMAX_CLI, {"figure", "default", "--set", "strategy.tp=4", "--set", "strategy.dp=16",
                         "--chart", "comparison", "--baseline", "default", "--pin",
                         "llama2-7b-8-a100-40gb", "-o", out});
    REQUIRE(p.waitForFinished(60000));
    REQUIRE(p.exitCode() == 0);
    const QStringList lines = QString::fromUtf8(readAll(out)).trimmed().split('\n');
    REQUIRE(lines.size() == 4);
    const PresetLibrary& lib = PresetLibrary::builtin();
    const Scenario tp4 = loadScenario("default", lib,
                                      {parseOverride("strategy.tp=4"), parseOverride("strategy.dp=16")});
    const std::vector<std::pair<QString, Scenario>> want = {
        {"default", loadScenario("default", lib)},
        {"llama2-7b-8-a100-40gb", loadScenario("llama2-7b-8-a100-40gb", lib)},
        {"Current", tp4}};
    for (std::size_t i = 0; i < want.size(); ++i) {
        const QStringList cells = lines[int(i) + 1].split(',');
        REQUIRE(cells.size() == 4);
        CHECK(cells[0] == want[i].first);
        const Result r = evaluate(want[i].second);
        CHECK(cells[1].toDouble() == Approx(r.tokensPerSPerGpu).epsilon(1e-4));
        CHECK(cells[3].toDouble() == Approx(r.stepTimeS).epsilon(1e-4));
    }
    // Without a baseline there is nothing to compare: refused, naming the option to add.
    p.start(MADMAX_CLI, {"figure", "--chart", "comparison", "-o", out});
    REQUIRE(p.waitForFinished(60000));
    CHECK(p.exitCode() == 2);
    CHECK(p.readAllStandardError().contains("--baseline"));
    p.start(MADMAX_CLI, {"figure", "--chart", "comparison", "--pin", "default", "-o", out});
    REQUIRE(p.waitForFinished(60000));
    CHECK(p.exitCode() == 2);
    CHECK(p.readAllStandardError().contains("needs --baseline"));
}

TEST_CASE("A serving search's configurations chart is throughput per GPU against TPOT, exportable") {
    // The serving search (DeepSeek-V3 on 16 H200): the scatter plots each configuration's TPOT
    // and tokens/s per GPU, and its front is the one no configuration beats on both, fastest
    // TPOT first (SearchResult::paretoLatency).
    ui::Evaluation ev;
    ev.generation = 1;
    ev.scenario = loadScenario("serve-deepseek-v3-16xh200", PresetLibrary::builtin());
    ev.result = evaluate(ev.scenario);
    const SearchResult found = search(ev.scenario, {}, SearchOptions{});
    REQUIRE_FALSE(found.paretoLatency.empty());
    for (std::size_t i = 1; i < found.paretoLatency.size(); ++i) {
        const auto& a = found.paretoLatency[i - 1];
        const auto& b = found.paretoLatency[i];
        CHECK(b.stepTimeS >= a.stepTimeS);
        CHECK(b.tokensPerS / b.gpus > a.tokensPerS / a.gpus);
    }
    for (const auto& f : found.paretoLatency)
        for (const auto& c : found.scatter)
            CHECK_FALSE((c.stepTimeS < f.stepTimeS && c.tokensPerS / c.gpus > f.tokensPerS / f.gpus));
    ui::ChartInput in;
    in.current = &ev;
    in.search = &found;
    QTemporaryDir dir;
    ui::ExportOptions o;
    o.format = ui::ExportFormat::Csv;
    REQUIRE(ui::exportChart("scatter", in, dir.filePath("s.csv"), o).isEmpty());
    const QString csv = QString::fromUtf8(readAll(dir.filePath("s.csv")));
    CHECK(csv.startsWith("tpot_ms,tokens_per_s_per_gpu,on_pareto_front,strategy"));
    CHECK(csv.count(",1,") == int(found.paretoLatency.size()));
    o.format = ui::ExportFormat::Svg;
    REQUIRE(ui::exportChart("scatter", in, dir.filePath("s.svg"), o).isEmpty());
    CHECK(readAll(dir.filePath("s.svg")).contains("TPOT (ms)"));
}
