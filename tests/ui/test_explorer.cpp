// The explorer, driven as a user would (offscreen): sliders, edits, pins, undo, files.
#include "charts/breakdown_chart.hpp"
#include "export.hpp"
#include "madmax/scenario_io.hpp"
#include "presets_store.hpp"
#include "ui_support.hpp"
#include "seed_import_dialog.hpp"
#include "calibrate_dialog.hpp"
#include "madmax/collectives.hpp"
#include "madmax/pipeline_schedule.hpp"

#include <QPushButton>

#include <catch2/catch.hpp>

#include <QCompleter>

#include <QStatusBar>
#include <QTabWidget>

#include <QFile>
#include <QSignalSpy>

#include <algorithm>
#include <random>

using namespace madmax;
using Catch::Matchers::Contains;

namespace {

/// The breakdown chart's "Overlapped" bar summed: the step time the chart shows.
double shownStepTime(ui::MainWindow& w) {
    const auto t = w.chart("breakdown")->table();
    double sum = 0;
    for (const auto& row : t.rows)
        if (row[0] == "Overlapped") sum += row[2].toDouble();
    return sum;
}

/// One segment of the breakdown chart's "Overlapped" bar, seconds (-1 when the chart has none).
double shownSegment(ui::MainWindow& w, const QString& component) {
    double v = -1;
    for (const auto& row : w.chart("breakdown")->table().rows)
        if (row[0] == "Overlapped" && row[1] == component) v = row[2].toDouble();
    return v;
}

int indexOf(const std::vector<int>& v, int x) {
    return int(std::find(v.begin(), v.end(), x) - v.begin());
}

} // namespace

TEST_CASE("The headline says how far to trust the prediction") {
    test::Explorer e;
    // The default is dense training on H100: 12 published runs (Llama 3 Table 4, NeMo 24.07,
    // Megatron-Bridge 25.11 and 26.02).
    CHECK(e.window->headline()->uncertaintyText().contains("12 published H100 dense training runs"));
}

TEST_CASE("The explorer opens on the default scenario with every chart filled") {
    test::Explorer e;
    auto& w = *e.window;
    REQUIRE(w.shown().generation > 0);
    const Result expected = evaluate(w.document()->scenario());
    CHECK(w.shown().result.stepTimeS == Approx(expected.stepTimeS));
    for (const QString id : {"breakdown", "comm", "memory", "timeline"}) {
        INFO(id.toStdString());
        CHECK(w.chart(id)->table().rows.size() > 0);
        CHECK(w.chart(id)->emptyMessage().isEmpty());
    }
    // Nothing pinned: the comparison says so instead of three 100% bars (issue #9).
    CHECK(w.chart("comparison")->table().rows.isEmpty());
    CHECK(w.chart("comparison")->emptyMessage().contains("Pin as Baseline"));
    CHECK(w.headline()->valueText(3).endsWith("%"));
}

TEST_CASE("A scenario that cannot be opened at start is said, with what is shown instead") {
    // It had flashed in the status bar and been replaced by the first result's line, leaving
    // the default scenario on screen with no word of why.
    test::Explorer e("/no/such/scenario.json");
    auto& w = *e.window;
    REQUIRE(w.shown().generation > 0);
    const QString status = w.statusBar()->currentMessage();
    CHECK(status.contains("/no/such/scenario.json"));
    CHECK(status.contains("built-in default"));
    CHECK(w.shown().scenario.name == PresetLibrary::builtin()
                                         .find(PresetKind::Scenario, "default")
                                         ->json.at("name")
                                         .get<std::string>());
}

TEST_CASE("Moving a slider updates the charts to what evaluate gives for the new scenario") {
    test::Explorer e;
    auto& w = *e.window;
    auto* tp = w.strategyPanel()->slider("tp");
    const auto choices = w.strategyPanel()->choices("tp");
    tp->setValue(indexOf(choices, 4)); // TP 8 → 4; DP follows (256 / (4·4) = 16)
    REQUIRE(e.settle());
    const Scenario& s = w.document()->scenario();
    CHECK(s.strategy.tp == 4);
    CHECK(s.strategy.dp == 16);
    const Result expected = evaluate(s);
    CHECK(w.shown().result.stepTimeS == Approx(expected.stepTimeS));
    CHECK(shownStepTime(w) == Approx(expected.stepTimeS).epsilon(1e-5));
    CHECK(w.headline()->valueText(3) == QString::number(expected.mfu * 100, 'f', 1) + "%");
}

TEST_CASE("A stated framework overhead is edited in the panel and shown as its own segment") {
    test::Explorer e;
    auto& w = *e.window;
    auto overhead = [&] { return shownSegment(w, "Overhead"); };
    // The default scenario states none: the box says so and the segment is empty.
    auto* perStep = w.strategyPanel()->stepOverheadBox();
    REQUIRE(perStep->isVisibleTo(&w));
    CHECK(perStep->text() == "none stated");
    CHECK(overhead() == 0.0);
    const double before = w.shown().result.stepTimeS;
    // 250 ms a step and 2 ms a micro-batch: the step grows by exactly that, shown apart.
    perStep->setValue(250);
    REQUIRE(e.settle());
    w.strategyPanel()->microBatchOverheadBox()->setValue(2);
    REQUIRE(e.settle());
    const Scenario& s = w.document()->scenario();
    CHECK(s.workload.stepOverheadS == Approx(0.25));
    CHECK(s.workload.microBatchOverheadS == Approx(2e-3));
    const Result& r = w.shown().result;
    CHECK(r.overheadS == Approx(0.25 + 2e-3 * r.microBatches));
    CHECK(r.stepTimeS - before == Approx(r.overheadS).epsilon(1e-9));
    CHECK(overhead() == Approx(r.overheadS).epsilon(1e-5));
    // Serving has no such step: the group hides.
    w.strategyPanel()->workloadSwitch()->setCurrentIndex(1);
    REQUIRE(e.settle());
    CHECK_FALSE(perStep->isVisibleTo(&w));
}

TEST_CASE("500 slider changes in a burst end on the final scenario, never showing a stale result") {
    test::Explorer e;
    auto& w = *e.window;
    QList<quint64> shownGenerations;
    QObject::connect(&w, &ui::MainWindow::resultShown,
                     [&](quint64 g) { shownGenerations.append(g); });
    std::mt19937 rng(7);
    const QStringList keys = {"tp", "pp", "vp", "micro_batch", "global_batch", "dp"};
    for (int i = 0; i < 500; ++i) {
        const QString key = keys[int(rng() % keys.size())];
        QSlider* sl = w.strategyPanel()->slider(key);
        sl->setValue(int(rng() % (sl->maximum() + 1)));
        if (i % 25 == 0) QCoreApplication::processEvents(); // let some results arrive mid-burst
    }
    REQUIRE(e.settle());
    for (int i = 1; i < shownGenerations.size(); ++i)
        CHECK(shownGenerations[i] > shownGenerations[i - 1]);
    const Result expected = evaluate(w.document()->scenario());
    CHECK(w.shown().result.stepTimeS == Approx(expected.stepTimeS));
    CHECK(toJson(w.shown().scenario) == toJson(w.document()->scenario()));
    CHECK(shownStepTime(w) == Approx(expected.stepTimeS).epsilon(1e-5));
}

TEST_CASE("An invalid strategy value is explained and leaves the scenario unchanged") {
    test::Explorer e;
    auto& w = *e.window;
    const auto before = toJson(w.document()->scenario());
    w.strategyPanel()->spinBox("tp")->setValue(16); // Llama 3 70B has 8 KV heads
    CHECK_THAT(w.strategyPanel()->message().toStdString(),
               Contains("TP=16 does not divide 8 KV heads"));
    CHECK(toJson(w.document()->scenario()) == before);
    w.strategyPanel()->spinBox("tp")->setValue(4); // a valid value clears the message
    CHECK(w.strategyPanel()->message().isEmpty());
}

TEST_CASE("A refused slider value: slider, box and message agree, and say what the charts show") {
    // Issue #9: dragged past a valid value, the slider, the box and the message showed three
    // different values while the charts silently kept the last valid state.
    test::Explorer e;
    auto& w = *e.window;
    auto* panel = w.strategyPanel();
    const int tpBefore = w.document()->scenario().strategy.tp;
    panel->spinBox("tp")->setValue(16); // refused: 8 KV heads
    CHECK(panel->spinBox("tp")->value() == 16);
    CHECK_THAT(panel->message().toStdString(), Contains("TP = 16 is not applied"));
    CHECK_THAT(panel->message().toStdString(), Contains("charts still show the last valid"));
    CHECK(w.document()->scenario().strategy.tp == tpBefore);
}

TEST_CASE("An invalid field edit is marked with the core's message and changes nothing") {
    test::Explorer e;
    auto& w = *e.window;
    const auto before = toJson(w.document()->scenario());
    const QString err = w.scenarioPanel()->editField("model.layers", "-3");
    CHECK_THAT(err.toStdString(), Contains("model.layers: value -3 is out of range"));
    CHECK(w.scenarioPanel()->message() == err);
    CHECK(toJson(w.document()->scenario()) == before);
    // A number no double holds is refused with the field, not thrown out of the editor.
    const QString huge = w.scenarioPanel()->editField("system.gpu.hbm_gb", "1e400");
    CHECK_THAT(huge.toStdString(), Contains("system.gpu.hbm_gb: number overflow"));
    CHECK(toJson(w.document()->scenario()) == before);
    CHECK(w.scenarioPanel()->editField("system.gpu.hbm_gb", "141").isEmpty());
    CHECK(w.document()->scenario().system.gpu.hbmBytes == 141e9);
}

TEST_CASE("An invalid value typed into the tree is marked in its own row with the reason") {
    // Issue #9: only a faint tint, with the message far away at the bottom of the panel.
    test::Explorer e;
    auto& w = *e.window;
    QTreeWidgetItem* layers = w.scenarioPanel()->fieldItem("model.layers");
    REQUIRE(layers != nullptr);
    const QString allowed = layers->text(3);
    layers->setText(1, "-3"); // as if typed
    CHECK(layers->text(3).startsWith("✗ "));
    CHECK(layers->text(3).contains("out of range"));
    CHECK(layers->toolTip(1).contains("out of range"));
    layers->setText(1, "80"); // valid again: the allowed text comes back
    REQUIRE(e.settle());
    QTreeWidgetItem* again = w.scenarioPanel()->fieldItem("model.layers");
    REQUIRE(again != nullptr);
    CHECK(again->text(3) == allowed);
}

TEST_CASE("Choosing a model preset and editing a field re-evaluate the scenario") {
    test::Explorer e;
    auto& w = *e.window;
    auto* combo = w.scenarioPanel()->modelCombo();
    // Llama 2's context is 4,096 tokens: the default's 8,192 would be refused, so shorten first.
    REQUIRE(w.document()->setField("workload.seq_len", 4096).isEmpty());
    const int i = combo->findData("llama2-70b");
    REQUIRE(i >= 0);
    emit combo->activated(i);
    REQUIRE(e.settle());
    CHECK(w.document()->scenario().model.vocab == 32000);
    CHECK(w.shown().scenario.model.vocab == 32000);
}

TEST_CASE("Undo and redo walk every scenario edit") {
    test::Explorer e;
    auto& w = *e.window;
    w.strategyPanel()->check("tp_comm_overlap")->setChecked(true);
    w.strategyPanel()->combo("recompute")->setCurrentText("full");
    CHECK(w.document()->scenario().strategy.recompute == Recompute::Full);
    w.document()->undoStack()->undo();
    CHECK(w.document()->scenario().strategy.recompute == Recompute::Selective);
    CHECK(w.strategyPanel()->combo("recompute")->currentText() == "selective");
    w.document()->undoStack()->undo();
    CHECK_FALSE(w.document()->scenario().strategy.tpCommOverlap);
    w.document()->undoStack()->redo();
    CHECK(w.document()->scenario().strategy.tpCommOverlap);
    CHECK(w.document()->isModified());
}

TEST_CASE("Pinning a baseline shows it beside the current scenario with deltas") {
    test::Explorer e;
    auto& w = *e.window;
    w.pinBaseline("TP8");
    w.strategyPanel()->check("tp_comm_overlap")->setChecked(true);
    REQUIRE(e.settle());
    CHECK(w.headline()->deltaText(0).contains("vs baseline"));
    const auto rows = w.chart("breakdown")->table().rows;
    CHECK(std::any_of(rows.begin(), rows.end(),
                      [](const QStringList& r) { return r[0] == "Baseline overlapped"; }));
    CHECK(w.chart("comparison")->table().rows.size() == 2);
    w.pinBaseline("overlap");
    CHECK(w.chart("comparison")->table().rows.size() == 3);
    // Relative to the first pin: its own bars are 100%, and no ratio of near-zero times.
    CHECK(w.chart("comparison")->table().columns.last() == "step_time_s");
    w.clearPins();
    CHECK(w.chart("comparison")->table().rows.isEmpty());
}

TEST_CASE("Save then open round-trips a scenario exactly - a failed save keeps the old file") {
    test::Explorer e;
    auto& w = *e.window;
    QTemporaryDir dir;
    const QString path = dir.filePath("s.json");
    w.strategyPanel()->check("tp_comm_overlap")->setChecked(true);
    QString err;
    REQUIRE(w.saveTo(path, &err));
    CHECK_FALSE(w.document()->isModified());
    const auto saved = toJson(w.document()->scenario());
    w.strategyPanel()->combo("recompute")->setCurrentText("full");
    REQUIRE(w.openFile(path, &err));
    CHECK(toJson(w.document()->scenario()) == saved);

    QFile f(path);
    REQUIRE(f.open(QIODevice::ReadOnly));
    const QByteArray before = f.readAll();
    f.close();
    QDir(dir.path()).mkpath("blocked/inside");
    CHECK_FALSE(w.saveTo(dir.filePath("blocked"), &err));
    CHECK_FALSE(err.isEmpty());
    REQUIRE(f.open(QIODevice::ReadOnly));
    CHECK(f.readAll() == before);
}

TEST_CASE("Presentation mode hides the editors and enlarges the charts") {
    test::Explorer e;
    auto& w = *e.window;
    w.setPresentationMode(true);
    CHECK(w.presentationMode());
    CHECK(w.chart("breakdown")->chartStyle().fontScale > 1.0);
    w.setPresentationMode(false);
    CHECK(w.chart("breakdown")->chartStyle().fontScale == 1.0);
}

TEST_CASE("A faster configuration that does not fit in memory earns no green delta") {
    // Issue #9: "+15%" in green on a configuration that could not run.
    test::Explorer e;
    auto& w = *e.window;
    w.pinBaseline("base");
    w.strategyPanel()->combo("recompute")->setCurrentText("none"); // faster, needs more memory
    REQUIRE(e.settle());
    w.document()->setField("system.gpu.hbm_gb", 20); // now nothing fits
    REQUIRE(e.settle());
    REQUIRE_FALSE(w.shown().result.memory.fits());
    for (int tile : {0, 1, 2, 3}) {
        INFO(tile);
        CHECK_FALSE(w.headline()->deltaText(tile).contains("#009E73"));
        CHECK(w.headline()->deltaText(tile).contains("does not fit"));
    }
}

TEST_CASE("The explorer fits a 1280x720 screen, the charts keeping most of the width") {
    // Issue #9: at 1280x720 the left panel kept half the width and the charts were cut.
    test::Explorer e;
    auto& w = *e.window;
    CHECK(w.minimumSizeHint().width() <= 1280);
    CHECK(w.minimumSizeHint().height() <= 720);
    w.resize(1280, 720);
    REQUIRE(e.settle());
    QTest::qWait(50);
    CHECK(w.width() == 1280);
    CHECK(w.strategyPanel()->window() == &w);
    CHECK(w.chart("breakdown")->width() >= 340); // readable; the chart area scrolls instead
    const QWidget* editors = w.strategyPanel()->parentWidget();
    while (editors && editors->parentWidget() && !qobject_cast<const QTabWidget*>(editors))
        editors = editors->parentWidget();
    REQUIRE(editors != nullptr);
    CHECK(editors->width() <= 0.4 * 1280);
}

TEST_CASE("Presentation mode can be left with F11 or Escape while the menu bar is hidden") {
    // Issue #9: the menu bar hid and took its shortcuts with it.
    test::Explorer e;
    auto& w = *e.window;
    w.activateWindow();
    QTest::keyClick(&w, Qt::Key_F11);
    REQUIRE(w.presentationMode());
    QTest::keyClick(&w, Qt::Key_F11);
    CHECK_FALSE(w.presentationMode());
    QTest::keyClick(&w, Qt::Key_F11);
    REQUIRE(w.presentationMode());
    QTest::keyClick(&w, Qt::Key_Escape);
    CHECK_FALSE(w.presentationMode());
}

TEST_CASE("Loading a scenario preset detaches the open file, so Save cannot overwrite it") {
    // Issue #9: after switching presets the title still named the old file and Ctrl+S would
    // have replaced it with a different scenario.
    test::Explorer e;
    auto& w = *e.window;
    QTemporaryDir dir;
    const QString path = dir.filePath("mine.json");
    QString err;
    REQUIRE(w.saveTo(path, &err));
    REQUIRE(w.openFile(path, &err));
    CHECK(w.windowTitle().startsWith("mine.json"));
    REQUIRE(w.scenarioPanel()->loadScenarioPreset("gpt3-175b-1024-a100").isEmpty());
    CHECK(w.document()->filePath().isEmpty());
    CHECK_FALSE(w.windowTitle().contains("mine.json"));
}

TEST_CASE("A scenario preset loads as one undoable edit - fields show units and what is allowed") {
    test::Explorer e;
    auto& w = *e.window;
    CHECK(w.scenarioPanel()->loadScenarioPreset("gpt3-175b-1024-a100").isEmpty());
    REQUIRE(e.settle());
    CHECK(w.document()->scenario().gpus == 1024);
    CHECK(w.shown().scenario.model.hidden == 12288);
    w.document()->undoStack()->undo();
    CHECK(w.document()->scenario().gpus == 256);
    // Units and rules come from the core's parser (describeScenarioFields), not a GUI table.
    auto* hbm = w.scenarioPanel()->fieldItem("system.gpu.hbm_gb");
    REQUIRE(hbm != nullptr);
    CHECK(hbm->text(2) == "GB");
    CHECK(hbm->text(3) == "0.01 to 1e+06"); // the physical floor of issue #30
    auto* kv = w.scenarioPanel()->fieldItem("model.kv_heads");
    REQUIRE(kv != nullptr);
    CHECK(kv->text(3).startsWith("integer, 1 to 1048576; divides heads"));
    auto* tree = w.scenarioPanel()->fields();
    REQUIRE(tree->topLevelItemCount() == 3);
    CHECK(tree->topLevelItem(0)->text(0) == "model");
}

TEST_CASE("The scenario preset box names the scenario shown, and none once it is your own") {
    // Issue #32's review: opening a serving preset showed the list's first (a training
    // scenario) in the box.
    test::Explorer e("serve-deepseek-v3-16xh200");
    auto& w = *e.window;
    auto* box = w.scenarioPanel()->scenarioCombo();
    CHECK(box->currentData().toString() == "serve-deepseek-v3-16xh200");
    REQUIRE(w.scenarioPanel()->loadScenarioPreset("gpt3-175b-1024-a100").isEmpty());
    CHECK(box->currentData().toString() == "gpt3-175b-1024-a100");
    REQUIRE(w.document()->setField("name", "mine").isEmpty());
    CHECK(box->currentIndex() == -1); // the placeholder, not a preset it no longer is
    CHECK(box->currentText().isEmpty());
}

TEST_CASE("At 1280x720 every button of the Scenario tab shows its whole label") {
    // Issue #32's review: "Save model as preset…" and "Save system as preset…" were cut.
    test::Explorer e;
    auto& w = *e.window;
    w.resize(1280, 720);
    REQUIRE(e.settle());
    QTest::qWait(50);
    const auto buttons = w.scenarioPanel()->findChildren<QPushButton*>();
    REQUIRE(buttons.size() >= 4);
    for (const QPushButton* b : buttons) {
        INFO(b->text().toStdString());
        CHECK(b->width() >= b->sizeHint().width());
    }
}

TEST_CASE("User presets are saved beside, never over, the installed ones") {
    QTemporaryDir dir;
    ui::PresetStore store(dir.path());
    nlohmann::json m = store.library().find(PresetKind::Model, "llama3-8b")->json;
    m["layers"] = 40;
    CHECK(store.save(PresetKind::Model, "llama3-8b", m).contains("installed preset"));
    CHECK(store.save(PresetKind::Model, "my llama", m).contains("letters, digits"));
    REQUIRE(store.save(PresetKind::Model, "llama3-8b-deep", m).isEmpty());
    CHECK(store.isUserPreset(PresetKind::Model, "llama3-8b-deep"));
    ui::PresetStore reloaded(dir.path());
    CHECK(reloaded.library().find(PresetKind::Model, "llama3-8b-deep")->json["layers"] == 40);
    CHECK(reloaded.library().find(PresetKind::Model, "llama3-8b")->json["layers"] == 32);
    CHECK(reloaded.skipped().isEmpty());
    // A broken file and one named like an installed preset are skipped and said (they were
    // skipped without a word), and the explorer says so when it opens.
    QFile broken(dir.path() + "/" + ui::kindFolder(PresetKind::Model) + "/half.json");
    REQUIRE(broken.open(QIODevice::WriteOnly));
    broken.write("{\"id\": \"half\", \"layers\": ");
    broken.close();
    QFile shadow(dir.path() + "/" + ui::kindFolder(PresetKind::Model) + "/llama3-70b.json");
    REQUIRE(shadow.open(QIODevice::WriteOnly));
    shadow.write(m.dump().c_str());
    shadow.close();
    ui::PresetStore third(dir.path());
    REQUIRE(third.skipped().size() == 2);
    CHECK(third.skipped().join("\n").contains("half.json"));
    CHECK(third.skipped().join("\n").contains("named like an installed preset"));
    CHECK(third.isUserPreset(PresetKind::Model, "llama3-8b-deep")); // the rest still loads
    ui::WindowOptions o;
    o.restoreSession = false;
    o.scenario = "default";
    o.presetFolder = dir.path();
    ui::MainWindow w(o);
    w.show();
    for (int i = 0; i < 10000 && w.shown().generation == 0; ++i)
        QTest::qWait(2);
    CHECK(w.statusBar()->currentMessage().contains("2 user preset files were not loaded"));
}

TEST_CASE("The explorer switches to serving and back without restarting") {
    test::Explorer e;
    auto& w = *e.window;
    w.strategyPanel()->workloadSwitch()->setCurrentIndex(1);
    REQUIRE(e.settle());
    REQUIRE(w.document()->scenario().workload.kind == WorkloadKind::Inference);
    REQUIRE(w.shown().result.isInference);
    CHECK(w.chart("serving")->isVisibleTo(&w));
    CHECK(w.chart("curve")->isVisibleTo(&w));
    CHECK_FALSE(w.chart("breakdown")->isVisibleTo(&w));
    CHECK_FALSE(w.chart("timeline")->isVisibleTo(&w));
    // TTFT and TPOT × 10 components (weights, KV, compute, TP comm, EP all-to-all, overheads,
    // prefills, p2p, the disaggregated KV transfer, the offloaded prefix cache's load); the
    // table keeps the zero ones the legend hides.
    CHECK(w.chart("serving")->table().rows.size() == 2 * 10);
    CHECK(w.chart("curve")->table().rows.size() >= 6);
    const Result expected = evaluate(w.document()->scenario());
    CHECK(w.shown().result.inference.tpotS == Approx(expected.inference.tpotS));
    CHECK(w.strategyPanel()->slider("batch")->isVisibleTo(&w));
    CHECK_FALSE(w.strategyPanel()->slider("micro_batch")->isVisibleTo(&w));

    // A serving slider: the batch.
    w.strategyPanel()->spinBox("batch")->setValue(16);
    REQUIRE(e.settle());
    CHECK(w.shown().result.inference.batch == 16);
    CHECK(w.shown().result.inference.tpotS ==
          Approx(evaluate(w.document()->scenario()).inference.tpotS));

    // Back to training in one undo step each.
    w.document()->undoStack()->undo();
    w.document()->undoStack()->undo();
    REQUIRE(e.settle());
    CHECK(w.document()->scenario().workload.kind == WorkloadKind::Training);
    CHECK(w.chart("breakdown")->isVisibleTo(&w));
    CHECK_FALSE(w.chart("serving")->isVisibleTo(&w));
}

TEST_CASE("Serving presets open with their charts, and objectives draw the box") {
    test::Explorer e("serve-llama2-70b-8xh100-server");
    auto& w = *e.window;
    REQUIRE(w.shown().result.isInference);
    CHECK(w.shown().result.inference.tpotS <= 0.2);
    CHECK(w.strategyPanel()->combo("mode")->currentText() == "server");
    QTemporaryDir dir;
    ui::ExportOptions o;
    o.format = ui::ExportFormat::Svg;
    for (const QString id : {"serving", "curve", "memory"}) {
        INFO(id.toStdString());
        REQUIRE(ui::exportChart(id, w.chartInput(), dir.filePath(id + ".svg"), o).isEmpty());
    }
    QFile f(dir.filePath("curve.svg"));
    REQUIRE(f.open(QIODevice::ReadOnly));
    CHECK(f.readAll().contains("TPOT objective"));
}

TEST_CASE("MoE in the explorer: EP and ETP sliders, expert controls, all-to-all and expert memory") {
    test::Explorer e("deepseek-v3-256-gb200");
    auto& w = *e.window;
    REQUIRE(w.document()->scenario().model.isMoe());
    auto* panel = w.strategyPanel();
    CHECK(panel->slider("ep")->isVisibleTo(&w));
    CHECK(panel->slider("etp")->isVisibleTo(&w));
    CHECK(panel->moeBox()->isVisibleTo(&w));
    CHECK(panel->spinBox("ep")->value() == 64);
    // The communication chart has the all-to-all with its network share; the memory chart the
    // experts' weights; the timeline the dispatch and combine.
    bool a2a = false;
    for (const auto& row : w.chart("comm")->table().rows)
        a2a = a2a || row.join(" ").contains("EP all-to-all");
    CHECK(a2a);
    bool experts = false;
    for (const auto& row : w.chart("memory")->table().rows)
        if (row.size() >= 3 && row[1] == "Expert weights") experts = experts || row[2].toDouble() > 0;
    CHECK(experts);
    bool dispatch = false;
    for (const auto& row : w.chart("timeline")->table().rows)
        dispatch = dispatch || row.join(" ").contains("EP dispatch all-to-all");
    CHECK(dispatch);

    // An EP that does not divide the stage's GPUs is refused with the reason; the rest holds.
    panel->spinBox("ep")->setValue(256);
    CHECK(panel->message().contains("EP"));
    CHECK(w.document()->scenario().strategy.ep == 64);
    // A valid EP applies and the charts follow.
    panel->spinBox("ep")->setValue(32);
    REQUIRE(e.settle());
    CHECK(w.document()->scenario().strategy.ep == 32);
    CHECK(w.shown().result.moe.localExperts == 8);
    // Load imbalance slows the step.
    const double before = w.shown().result.stepTimeS;
    panel->loadImbalance()->setValue(1.3);
    REQUIRE(e.settle());
    CHECK(w.document()->scenario().model.moe.loadImbalance == Approx(1.3));
    CHECK(w.shown().result.stepTimeS > before);
    // Serving works for MoE: the experts stay on EP ranks.
    panel->workloadSwitch()->setCurrentIndex(1);
    REQUIRE(e.settle());
    REQUIRE(w.shown().result.isInference);
    CHECK(w.shown().result.inference.outputTokensPerSPerGpu > 0);
    CHECK(panel->slider("ep")->isVisibleTo(&w));
}

TEST_CASE("A host-bound MoE shows its host idle time, and CUDA graphs take it away") {
    test::Explorer e("qwen3-30b-a3b-8-b200-eager");
    auto& w = *e.window;
    auto hostIdle = [&] { return shownSegment(w, "Host idle"); };
    // Micro-batch 1 of Qwen3-30B-A3B on B200: most of the step is the GPU waiting for the host.
    const double eager = w.shown().result.stepTimeS;
    CHECK(hostIdle() > 0.5 * eager);
    bool timelineIdle = false;
    for (const auto& row : w.chart("timeline")->table().rows)
        timelineIdle = timelineIdle || row.join(" ").contains("host launch stalls");
    CHECK(timelineIdle);
    w.strategyPanel()->check("cuda_graphs")->setChecked(true);
    REQUIRE(e.settle());
    CHECK(w.document()->scenario().strategy.cudaGraphs);
    CHECK(hostIdle() == 0.0);
    CHECK(w.shown().result.stepTimeS < 0.5 * eager);
}

TEST_CASE("Import the seed's files: reference result, native side by side, open in the explorer") {
    test::Explorer e;
    auto& w = *e.window;
    ui::SeedImportDialog dlrm(&w);
    dlrm.setFiles("dlrm_a", "zionex_128", "dlrm_train_val_128");
    const QString text = dlrm.run();
    // docs/reference/seed-format.md §1.1 worked check: 54.00 ms.
    CHECK(text.contains("Iteration time       54.002 ms"));
    CHECK(text.contains("--engine reference")); // the seed DLRM has no interaction: said so
    CHECK_FALSE(dlrm.scenario().has_value());

    ui::SeedImportDialog llm(&w);
    llm.setFiles("llama2_70b", "dc_A_2048", "llm_train");
    CHECK(llm.run().contains("Side by side"));
    REQUIRE(llm.scenario().has_value());
    w.document()->reset(*llm.scenario());
    REQUIRE(e.settle());
    CHECK(w.document()->scenario().gpus == 2048);
    CHECK(w.document()->scenario().strategy.zeroStage == 3);

    ui::SeedImportDialog bad(&w);
    bad.setFiles("dlrm_b", "zionex_128", "dlrm_train");
    CHECK(bad.run().contains("did you mean \"dlrm_a\""));

    // Each field completes the shipped ids from any part of one: the whole zoo and every
    // cloud size is reachable by typing (33 models, 66 systems, 12 tasks).
    auto matches = [&](const QString& kind, const QString& typed) {
        QCompleter* c = bad.field(kind)->completer();
        REQUIRE(c != nullptr);
        c->setCompletionPrefix(typed);
        QStringList got;
        for (int i = 0; c->setCurrentRow(i); ++i)
            got << c->currentCompletion();
        return got;
    };
    CHECK(matches("models", "dlrm_i").size() == 6); // I, I-Small, each with MoE and Transformer
    CHECK(matches("models", "DLRM_F") == QStringList{"dlrm_f"});
    CHECK(matches("systems", "a100.80_2048").size() == 1); // Azure NC96ds_A100_v4
    CHECK(matches("systems", "zionex").size() == 3);
    CHECK(matches("tasks", "llm_").size() == 3);
    bad.setFiles("dlrm_f", "cloud_B_a100.80_128", "dlrm_train");
    CHECK(bad.run().contains("CloudB-128-NC96ds_A100_v4"));
}

TEST_CASE("DLRM in the explorer: sharding per table group, lookups and tables in the charts, the "
          "plan search applies its best plan") {
    test::Explorer e("dlrm-dcnv2-64-h100");
    auto& w = *e.window;
    REQUIRE(w.document()->scenario().model.isDlrm());
    auto* panel = w.strategyPanel();
    auto* dlrm = panel->dlrmPanel();
    CHECK(dlrm->isVisibleTo(&w));
    // Transformer controls are hidden; the GPUs and the batch stay.
    CHECK_FALSE(panel->slider("tp")->isVisibleTo(&w));
    CHECK_FALSE(panel->moeBox()->isVisibleTo(&w));
    CHECK(panel->slider("gpus")->isVisibleTo(&w));
    CHECK_FALSE(panel->workloadSwitch()->isEnabled());
    CHECK(dlrm->tables()->rowCount() == 26);
    // The breakdown has the lookups apart; the memory chart the tables; the timeline the
    // all-to-alls (pipelined: the next batch's embeddings and this batch's gradients).
    bool lookups = false, tables = false, a2a = false;
    for (const auto& row : w.chart("breakdown")->table().rows)
        if (row.size() >= 3 && row[1] == "Embedding lookups") lookups = lookups || row[2].toDouble() > 0;
    for (const auto& row : w.chart("memory")->table().rows)
        if (row.size() >= 3 && row[1] == "Embedding tables") tables = tables || row[2].toDouble() > 0;
    for (const auto& row : w.chart("timeline")->table().rows)
        a2a = a2a || row.join(" ").contains("sparse all-to-alls (next batch's embeddings");
    CHECK(lookups);
    CHECK(tables);
    CHECK(a2a);

    // Eager per-table embedding kernels: with CUDA graphs (the preset's) no launch stalls, but
    // the per-table copies (the concatenation, the gradient passes) cost HBM time, hidden here
    // under the sparse all-to-alls; eager, the host's launches show as host idle in the
    // breakdown, and the box follows the file.
    CHECK_FALSE(dlrm->perTableKernels()->isChecked());
    const double graphed = w.shown().result.stepTimeS;
    const double fusedInteraction = w.shown().result.dlrmResult.interactionS;
    const double fusedBackward = w.shown().result.dlrmResult.embBackwardS;
    dlrm->perTableKernels()->setChecked(true);
    REQUIRE(e.settle());
    CHECK(w.document()->scenario().strategy.dlrm.perTableKernels);
    CHECK(w.shown().result.stepTimeS == Approx(graphed)); // the all-to-alls still bound it
    CHECK(w.shown().result.dlrmResult.interactionS > fusedInteraction);
    CHECK(w.shown().result.dlrmResult.embBackwardS > fusedBackward);
    CHECK(w.shown().result.compute.hostStallS == 0);
    REQUIRE(w.document()->setFields({{"strategy.cuda_graphs", false}}, "eager").isEmpty());
    REQUIRE(e.settle());
    CHECK(w.shown().result.compute.hostStallS > 0);
    bool idle = false;
    for (const auto& row : w.chart("breakdown")->table().rows)
        if (row.size() >= 3 && row[1] == "Host idle") idle = idle || row[2].toDouble() > 0;
    CHECK(idle);
    REQUIRE(w.document()->setFields({{"strategy.cuda_graphs", true},
                                     {"strategy.emb_kernels", "fused"}}, "graphs").isEmpty());
    REQUIRE(e.settle());
    CHECK_FALSE(dlrm->perTableKernels()->isChecked());

    // A sharding type per table group applies and the charts follow.
    const double before = w.shown().result.stepTimeS;
    dlrm->shardingCombo(0)->setCurrentText("rw");
    REQUIRE(e.settle());
    CHECK(w.document()->scenario().strategy.dlrm.sharding[0] == EmbSharding::RowWise);
    CHECK(w.shown().result.stepTimeS != before);
    // Replicating the 40M-row table on every GPU puts all its 20 GB on each.
    const double rwMemory = w.shown().result.memory.totalBytes();
    dlrm->shardingCombo(0)->setCurrentText("dp");
    REQUIRE(e.settle());
    CHECK(w.shown().result.memory.totalBytes() > rwMemory + 19e9);
    // A row-wise type on a 3-row table is refused with the reason.
    dlrm->shardingCombo(5)->setCurrentText("rw");
    CHECK(dlrm->message().contains("fewer than one each"));
    CHECK(w.document()->scenario().strategy.dlrm.sharding[5] != EmbSharding::RowWise);

    // The plan search ranks plans; double-clicking the best applies it, and the shown step is
    // the search's.
    dlrm->searchButton()->click();
    dlrm->waitForSearch();
    REQUIRE(dlrm->results()->rowCount() > 0);
    CHECK(dlrm->explanation()->text().contains("the best plan takes"));
    emit dlrm->results()->cellDoubleClicked(0, 0);
    REQUIRE(e.settle());
    CHECK(w.shown().result.memory.fits());
    const Scenario applied = w.document()->scenario();
    CHECK(w.shown().result.stepTimeS == Approx(evaluate(applied).stepTimeS));
    CHECK(w.shown().result.stepTimeS < before);
}

TEST_CASE("Fine-tuning in the explorer: frozen layers, embedding and head, and a DLRM's parts") {
    test::Explorer e;
    auto& w = *e.window;
    auto* panel = w.strategyPanel();
    REQUIRE(panel->frozenBox()->isVisibleTo(&w));
    CHECK_FALSE(panel->check("frozen_bottom_mlp")->isVisibleTo(&w));
    const Result pre = w.shown().result;
    // Freeze the embedding and all 80 layers of Llama 3 70B: a linear probe, forward-only
    // layers; the step and the gradient memory fall, and the charts show evaluate's numbers.
    panel->check("frozen_embedding")->setChecked(true);
    REQUIRE(e.settle());
    panel->frozenCount()->setValue(80);
    REQUIRE(e.settle());
    const Scenario& s = w.document()->scenario();
    CHECK(s.workload.frozen.embedding);
    CHECK(s.workload.frozen.layers == 80);
    CHECK(w.shown().result.stepTimeS == Approx(evaluate(s).stepTimeS));
    CHECK(w.shown().result.stepTimeS < 0.6 * pre.stepTimeS);
    CHECK(w.shown().result.memory.gradsBytes < 0.1 * pre.memory.gradsBytes);
    // Freezing the head too leaves nothing to train: refused with the reason, nothing changed.
    panel->check("frozen_head")->setChecked(true);
    CHECK(panel->message().contains("nothing is left to train"));
    CHECK_FALSE(w.document()->scenario().workload.frozen.head);
    // Undo walks the edits back to pre-training.
    w.document()->undoStack()->undo();
    w.document()->undoStack()->undo();
    REQUIRE(e.settle());
    CHECK_FALSE(w.document()->scenario().workload.frozen.any());
    CHECK(w.shown().result.stepTimeS == Approx(pre.stepTimeS));

    // LoRA: the whole base frozen, only the adapters train; off again restores pre-training.
    panel->loraRank()->setValue(16);
    REQUIRE(e.settle());
    CHECK(w.document()->scenario().workload.frozen.loraRank == 16);
    CHECK(w.document()->scenario().workload.frozen.layers == 80);
    CHECK_FALSE(panel->frozenCount()->isEnabled());
    CHECK(w.shown().result.memory.gradsBytes < 0.01 * pre.memory.gradsBytes);
    CHECK(w.shown().result.stepTimeS == Approx(evaluate(w.document()->scenario()).stepTimeS));
    // QLoRA: an NF4 base holds far less weight memory.
    const double bf16Weights = w.shown().result.memory.weightsBytes;
    panel->combo("lora_base")->setCurrentText("nf4");
    REQUIRE(e.settle());
    CHECK(w.document()->scenario().workload.frozen.loraBaseBytes < 1.0);
    CHECK(w.shown().result.memory.weightsBytes < 0.4 * bf16Weights);
    panel->loraRank()->setValue(0);
    REQUIRE(e.settle());
    CHECK_FALSE(w.document()->scenario().workload.frozen.any());
    CHECK(w.shown().result.stepTimeS == Approx(pre.stepTimeS));

    // A DLRM freezes its tables and MLPs instead.
    test::Explorer d("dlrm-dcnv2-64-h100");
    auto* dp = d.window->strategyPanel();
    CHECK(dp->check("frozen_bottom_mlp")->isVisibleTo(d.window.get()));
    CHECK_FALSE(dp->loraRank()->isVisibleTo(d.window.get()));
    CHECK_FALSE(dp->frozenCount()->isVisibleTo(d.window.get()));
    const double before = d.window->shown().result.stepTimeS;
    dp->check("frozen_embedding")->setChecked(true);
    REQUIRE(d.settle());
    CHECK(d.window->document()->scenario().workload.frozen.embedding);
    CHECK(d.window->shown().result.dlrmResult.embBackwardS == 0.0);
    CHECK(d.window->shown().result.stepTimeS < before);
}

TEST_CASE("Calibrate from measurements: fit, before/after chart, saved as a user GPU preset") {
    test::Explorer e;
    auto& w = *e.window;
    // A machine whose NVLink reaches 60% at every size, as nccl-tests would print it.
    nlohmann::json sysDoc = {{"system", "dgx-h100-superpod"}};
    resolvePresetRefs(sysDoc, PresetLibrary::builtin(), "t");
    System sys = parseSystem(sysDoc["system"], "t", "system");
    sys.tiers[0].efficiency = LogCurve::constant(0.6);
    NcclTable t;
    t.op = Collective::AllReduce;
    t.ranks = 8;
    t.hosts = 1;
    for (double b : {16777216.0, 268435456.0, 4294967296.0})
        t.rows.push_back({b, collectiveTime(sys, layoutGroup(sys, 8, 1), t.op, b), 0});
    QTemporaryDir dir;
    const QString file = dir.filePath("all_reduce_perf.txt");
    {
        QFile f(file);
        REQUIRE(f.open(QIODevice::WriteOnly));
        f.write(QByteArray::fromStdString(formatNcclTests(t)));
    }
    ui::CalibrateDialog d(w.presetStore(), &w);
    d.setInputs("h100-sxm5-80gb", "dgx-h100-superpod", {file}, "", "my-h100");
    const QString text = d.run();
    CHECK(text.contains("links.scale_up.efficiency"));
    REQUIRE(d.result());
    for (const auto& p : d.result()->preset["links"]["scale_up"]["efficiency"])
        CHECK(p[1].get<double>() == Approx(0.6).epsilon(1e-3));
    CHECK(d.chartBarCount() == 3);
    CHECK(d.save().isEmpty());
    CHECK(w.presetStore()->library().find(PresetKind::Gpu, "my-h100") != nullptr);
    // A shipped id is refused, with the reason.
    d.setInputs("h100-sxm5-80gb", "dgx-h100-superpod", {file}, "", "h100-sxm5-80gb");
    CHECK(d.run().contains("never overwritten"));
    // A profiler trace fits the GEMM curve: one bar per compute-bound GEMM shape.
    KinetoTrace trace;
    trace.file = "trace.json";
    trace.gemms.push_back({"aten::mm", 8192, 8192, 8192, 1, Precision::BF16, 2, 2.0e-3});
    trace.gemms.push_back({"aten::mm", 4096, 4096, 4096, 1, Precision::BF16, 2, 3.0e-4});
    const QString traceFile = dir.filePath("trace.json");
    {
        QFile f(traceFile);
        REQUIRE(f.open(QIODevice::WriteOnly));
        f.write(QByteArray::fromStdString(formatKinetoTrace(trace)));
    }
    d.setInputs("h100-sxm5-80gb", "dgx-h100-superpod", {}, "", "my-h100-gemm", {traceFile});
    CHECK(d.run().contains("GEMM efficiency curve"));
    REQUIRE(d.result());
    CHECK(d.chartBarCount() == 2);
}

TEST_CASE("Partial recompute in the explorer: layers per chunk under full recompute only") {
    test::Explorer e("gpt3-175b-1024-a100"); // 96 layers on PP 8 × VP 2: chunks of 6
    auto& w = *e.window;
    auto* panel = w.strategyPanel();
    auto* layers = panel->recomputeLayersBox();
    panel->combo("recompute")->setCurrentText("full");
    REQUIRE(e.settle());
    CHECK(layers->isEnabled());
    CHECK(layers->maximum() == 6);
    const double every = w.shown().result.memory.totalBytes();
    const double everyTime = w.shown().result.stepTimeS;
    layers->setValue(2);
    REQUIRE(e.settle());
    CHECK(w.document()->scenario().strategy.recomputeLayers == 2);
    // The result shown is evaluate()'s for that scenario: more memory, less time than every
    // layer recomputed.
    const Result direct = evaluate(w.document()->scenario());
    CHECK(w.shown().result.stepTimeS == Approx(direct.stepTimeS));
    CHECK(w.shown().result.memory.totalBytes() > every);
    CHECK(w.shown().result.stepTimeS < everyTime);
    // Leaving full recompute drops the layer count (it applies to full only) and disables it.
    panel->combo("recompute")->setCurrentText("selective");
    REQUIRE(e.settle());
    CHECK(w.document()->scenario().strategy.recompute == Recompute::Selective);
    CHECK(w.document()->scenario().strategy.recomputeLayers == 0);
    CHECK_FALSE(layers->isEnabled());
}

TEST_CASE("Activation offloading in the explorer: memory falls, a refused value says why") {
    test::Explorer e("llama3-8b-fsdp-64-h100"); // PP 1, DGX H100 (PCIe Gen5 host links)
    auto& w = *e.window;
    auto* panel = w.strategyPanel();
    panel->combo("recompute")->setCurrentText("none");
    REQUIRE(e.settle());
    REQUIRE(w.document()->scenario().strategy.pp == 1);
    auto* box = panel->offloadLayersBox();
    CHECK(box->maximum() == w.document()->scenario().model.layers - 1);
    const double before = w.shown().result.memory.activationsBytes;
    box->setValue(16);
    REQUIRE(e.settle());
    CHECK(w.document()->scenario().strategy.offloadLayers == 16);
    const Result direct = evaluate(w.document()->scenario());
    CHECK(w.shown().result.stepTimeS == Approx(direct.stepTimeS));
    CHECK(w.shown().result.memory.activationsBytes < before);
    // Megatron-Core does not offload with recompute: the choice is refused, with the reason.
    panel->combo("recompute")->setCurrentText("selective");
    REQUIRE(e.settle());
    CHECK(w.document()->scenario().strategy.recompute == Recompute::None);
    CHECK(w.document()->scenario().strategy.offloadLayers == 16);
}

TEST_CASE("The pipeline schedule control: every schedule the core models, reasons when refused") {
    test::Explorer e;
    auto& w = *e.window;
    QComboBox* sched = w.strategyPanel()->combo("schedule");
    // The choices are the core's schedule table (madmax/pipeline_schedule.hpp).
    REQUIRE(sched->count() == int(scheduleModels().size()));
    CHECK(sched->currentText() == "interleaved"); // the default scenario: vp = 5
    // DualPipe with five chunks per GPU is refused, naming the field; the scenario is unchanged.
    sched->setCurrentText("dualpipe");
    CHECK(w.document()->scenario().strategy.schedule == PipelineSchedule::Interleaved);
    CHECK(w.strategyPanel()->message().contains("strategy.vp"));
    // With one chunk it applies, and the GPU holds two stages' weights.
    const double weights = w.shown().result.memory.weightsBytes;
    w.strategyPanel()->spinBox("vp")->setValue(1);
    REQUIRE(w.document()->scenario().strategy.schedule == PipelineSchedule::OneFOneB);
    sched->setCurrentText("dualpipe");
    CHECK(w.document()->scenario().strategy.schedule == PipelineSchedule::DualPipe);
    e.settle();
    CHECK(w.shown().result.memory.weightsBytes > weights);
}

TEST_CASE("Serving deployment controls: pool, prefix cache and speculation, each undoable") {
    test::Explorer e("serve-deepseek-v3-16xh200");
    auto& w = *e.window;
    auto* panel = w.strategyPanel();
    REQUIRE(w.shown().result.isInference);
    const double tpot = w.shown().result.inference.tpotS;
    // A decode pool: no interleaved prefills, so each token comes sooner.
    panel->combo("phase")->setCurrentText("decode");
    REQUIRE(e.settle());
    CHECK(w.document()->scenario().workload.inference.phase == ServingPhase::Decode);
    CHECK(w.shown().result.inference.tpotS < tpot);
    CHECK(w.shown().result.inference.kvTransferS > 0);
    // Speculation: the acceptance control wakes with draft tokens, and tokens per step follow.
    CHECK_FALSE(panel->acceptanceBox()->isEnabled());
    panel->draftTokensBox()->setValue(1);
    REQUIRE(e.settle());
    CHECK(panel->acceptanceBox()->isEnabled());
    CHECK(w.shown().result.inference.tokensPerStep == Approx(1.85)); // 1 + 0.85
    panel->acceptanceBox()->setValue(90);
    REQUIRE(e.settle());
    CHECK(w.shown().result.inference.tokensPerStep == Approx(1.9));
    // A prefix cache: half the prompt tokens skip prefill.
    panel->prefixHitBox()->setValue(50);
    CHECK(w.document()->scenario().workload.inference.prefixCacheHit == Approx(0.5));
    // The cache in host memory: the load rate wakes, and a slow rate shows in TTFT's bar.
    CHECK_FALSE(panel->prefixLoadBox()->isEnabled());
    panel->combo("prefix_cache_tier")->setCurrentText("host");
    REQUIRE(e.settle());
    CHECK(w.document()->scenario().workload.inference.prefixCacheTier == PrefixCacheTier::Host);
    CHECK(panel->prefixLoadBox()->isEnabled());
    panel->prefixLoadBox()->setValue(1);
    REQUIRE(e.settle());
    CHECK(w.document()->scenario().workload.inference.prefixCacheLoadBytesPerS == 1e9);
    CHECK(w.shown().result.inference.prefixLoadWaitS == 0.0); // a decode pool runs no prompt
    panel->combo("phase")->setCurrentText("aggregated");
    REQUIRE(e.settle());
    const Result& r = w.shown().result;
    CHECK(r.inference.prefixLoadWaitS > 0);
    double shownLoad = 0;
    for (const auto& row : w.chart("serving")->table().rows)
        if (row[0] == "TTFT" && row[1].startsWith("Prefix-cache load"))
            shownLoad = row[2].toDouble() / 1e3;
    CHECK(shownLoad == Approx(r.inference.prefixLoadWaitS).epsilon(1e-4));
    // MLA decode: DeepSeek-V3 is MLA, so the switch is live; expanded is far slower.
    REQUIRE(panel->combo("mla_decode")->isEnabled());
    const double absorbedTpot = r.inference.tpotS;
    panel->combo("mla_decode")->setCurrentText("expanded");
    REQUIRE(e.settle());
    CHECK(w.document()->scenario().workload.inference.mlaDecode == MlaDecode::Expanded);
    CHECK(w.shown().result.inference.tpotS > absorbedTpot);
    // Mean load: at half its capacity's traffic a replica holds half the batch.
    const int atCapacity = w.shown().result.inference.batch;
    panel->meanLoadBox()->setValue(50);
    REQUIRE(e.settle());
    CHECK(w.document()->scenario().workload.inference.meanLoad == Approx(0.5));
    CHECK(w.shown().result.inference.batch == std::max(1, int(std::lround(0.5 * atCapacity))));
    // Each was one undo step: nine back is the preset again.
    for (int i = 0; i < 9; ++i)
        w.document()->undoStack()->undo();
    CHECK(w.document()->scenario().workload.inference.phase == ServingPhase::Aggregated);
    CHECK(w.document()->scenario().workload.inference.draftTokens == 0);
    CHECK(w.document()->scenario().workload.inference.mlaDecode == MlaDecode::Absorbed);
    CHECK(w.document()->scenario().workload.inference.meanLoad == 1.0);
    // A model without MLA greys the switch out.
    test::Explorer dense("serve-llama2-70b-8xh100-offline");
    CHECK_FALSE(dense.window->strategyPanel()->combo("mla_decode")->isEnabled());
}

TEST_CASE("The serving chart follows a request across disaggregated pools") {
    // A decode pool's TTFT share is the KV cache's arrival and the wait for its next round (the
    // prompt ran on the prefill pool); a prefill pool's is the prompt and the transfer. Each
    // bar sums to the pool's own TTFT.
    for (const char* phase : {"prefill", "decode"}) {
        test::Explorer e("serve-deepseek-v3-16xh200");
        auto& w = *e.window;
        REQUIRE(w.document()->setField("workload.phase", phase).isEmpty());
        REQUIRE(e.settle());
        const Result r = evaluate(w.document()->scenario());
        double ttft = 0, kv = 0, compute = 0, tpot = 0;
        for (const auto& row : w.chart("serving")->table().rows) {
            if (row[0] == "TPOT") tpot += row[2].toDouble() / 1e3;
            if (row[0] != "TTFT") continue;
            ttft += row[2].toDouble() / 1e3;
            if (row[1].startsWith("KV transfer")) kv = row[2].toDouble() / 1e3;
            if (row[1] == "Compute") compute = row[2].toDouble() / 1e3;
        }
        INFO(phase);
        CHECK(ttft == Approx(r.inference.ttftS).epsilon(1e-4));
        CHECK(kv == Approx(r.inference.kvTransferS).epsilon(1e-4));
        CHECK(kv > 0);
        CHECK((std::string(phase) == "decode" ? compute == 0 : compute > 0));
        // A prefill pool paces no tokens: no TPOT bar, and its headline counts prompt tokens.
        const bool prefill = std::string(phase) == "prefill";
        CHECK((prefill ? tpot == 0 : tpot == Approx(r.inference.tpotS).epsilon(1e-4)));
        CHECK(w.headline()->nameText(2) == (prefill ? "Prompt tokens/s" : "Output tokens/s"));
        if (prefill)
            CHECK(w.headline()->valueText(3) == QString::number(r.tokensPerSPerGpu, 'f', 0));
        // Its curve sweeps the load, TTFT against prompt tokens/s per GPU; a decode pool's
        // sweeps the batch.
        const ui::ChartTable curve = w.chart("curve")->table();
        CHECK(curve.columns.contains("load") == prefill);
        CHECK(curve.columns.contains("tpot_ms") == !prefill);
        CHECK(w.chart("curve")->title().startsWith(prefill ? "TTFT" : "Latency"));
        if (prefill) {
            REQUIRE(curve.rows.size() >= 11);
            const int load = int(curve.columns.indexOf("load"));
            const int ttftCol = int(curve.columns.indexOf("ttft_ms"));
            for (int i = 1; i < curve.rows.size(); ++i) {
                CHECK(curve.rows[i][load].toDouble() > curve.rows[i - 1][load].toDouble());
                CHECK(curve.rows[i][ttftCol].toDouble() > curve.rows[i - 1][ttftCol].toDouble());
            }
        }
    }
}

TEST_CASE("The request chart draws one request's path: one pool, or prefill pool, transfer and "
          "decode pool with the other pool pinned") {
    // One pool (the preset): a wait of half a round, the prompt (the first token), the next
    // token one TPOT later, then the remaining tokens (listed, not drawn), which end at the
    // end-to-end latency.
    test::Explorer e("serve-deepseek-v3-16xh200");
    auto& w = *e.window;
    REQUIRE(e.settle());
    const ui::ExplorerChart* c = w.chart("request");
    REQUIRE(c != nullptr);
    CHECK(c->isVisible());
    const Result one = evaluate(w.document()->scenario());
    auto ends = [](const ui::ChartTable& t, const QString& lane) {
        double end = 0;
        for (const auto& row : t.rows)
            if (row[0] == lane) end = std::max(end, row[2].toDouble() + row[3].toDouble());
        return end;
    };
    ui::ChartTable t = c->table();
    REQUIRE(t.rows.size() == 4);
    CHECK(t.rows[0][1] == "Waiting");
    CHECK(t.rows[0][3].toDouble() ==
          Approx(one.inference.tpotS * one.inference.tokensPerStep / 2).epsilon(1e-5));
    CHECK(t.rows[1][1] == "Prefill");
    CHECK(t.rows[2][1] == "Next token");
    CHECK(t.rows[2][2].toDouble() == Approx(one.inference.ttftS).epsilon(1e-5));
    CHECK(t.rows[2][3].toDouble() == Approx(one.inference.tpotS).epsilon(1e-5));
    CHECK(t.rows[3][1] == "Remaining tokens");
    CHECK(ends(t, "one pool") == Approx(one.inference.e2eLatencyS).epsilon(1e-5));

    // Disaggregated: the decode pool alone starts with the KV cache's arrival; pinned with its
    // prefill pool, the prompt runs first on the prefill pool, the transfer follows, then the
    // decode pool's wait and tokens: the path ends at the prefill pool's prompt + transfer +
    // the decode pool's own end-to-end latency (which counts the transfer it waits for once).
    REQUIRE(w.document()->setField("workload.phase", "prefill").isEmpty());
    REQUIRE(e.settle());
    const Result prefill = evaluate(w.document()->scenario());
    w.pinBaseline("prefill pool");
    REQUIRE(w.document()->setField("workload.phase", "decode").isEmpty());
    REQUIRE(e.settle());
    const Result decode = evaluate(w.document()->scenario());
    t = w.chart("request")->table();
    QStringList lanes;
    for (const auto& row : t.rows) lanes << row[0];
    CHECK(lanes == QStringList{"prefill", "network", "decode", "decode", "decode"});
    const double prompt = prefill.inference.ttftS - prefill.inference.kvTransferS;
    CHECK(t.rows[0][3].toDouble() == Approx(prompt).epsilon(1e-5));
    CHECK(t.rows[1][2].toDouble() == Approx(prompt).epsilon(1e-5));
    CHECK(t.rows[1][3].toDouble() == Approx(prefill.inference.kvTransferS).epsilon(1e-5));
    CHECK(ends(t, "decode") ==
          Approx(prompt + prefill.inference.kvTransferS + decode.inference.e2eLatencyS -
                 decode.inference.kvTransferS)
              .epsilon(1e-5));
}

TEST_CASE("The ZeRO-3 coordinator: chosen at stage 3, its fetches on the timeline, reset below it") {
    test::Explorer e("llama3-8b-fsdp-64-h100");
    auto& w = *e.window;
    auto* style = w.strategyPanel()->combo("fsdp_style");
    REQUIRE(w.document()->scenario().strategy.zeroStage == 3);
    CHECK(style->isEnabled());
    const double overlapped = w.shown().result.stepTimeS;
    style->setCurrentText("deepspeed-legacy");
    REQUIRE(e.settle());
    CHECK(w.document()->scenario().strategy.fsdpStyle == FsdpStyle::DeepSpeedLegacy);
    // The legacy coordinator is never faster, and the timeline shows its host syncs.
    CHECK(w.shown().result.stepTimeS > overlapped);
    bool hook = false;
    for (const auto& row : w.chart("timeline")->table().rows)
        hook = hook || row.join(" ").contains("ZeRO-3 fetch hook");
    CHECK(hook);
    // Leaving stage 3 leaves the coordinator in the same edit (one undo step) and disables it.
    w.strategyPanel()->combo("zero_stage")->setCurrentIndex(1);
    REQUIRE(e.settle());
    CHECK(w.document()->scenario().strategy.zeroStage == 1);
    CHECK(w.document()->scenario().strategy.fsdpStyle == FsdpStyle::Overlapped);
    CHECK_FALSE(style->isEnabled());
    w.document()->undoStack()->undo();
    CHECK(w.document()->scenario().strategy.zeroStage == 3);
    CHECK(w.document()->scenario().strategy.fsdpStyle == FsdpStyle::DeepSpeedLegacy);
    CHECK(style->currentText() == "deepspeed-legacy");
}
