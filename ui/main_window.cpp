#include "main_window.hpp"

#include "seed_import_dialog.hpp"
#include "calibrate_dialog.hpp"

#include "charts/chart_factory.hpp"
#include "export.hpp"
#include "export_dialog.hpp"
#include "madmax/error.hpp"
#include "madmax/scenario_io.hpp"
#include "madmax/search.hpp"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QInputDialog>
#include <QMenuBar>
#include <QMessageBox>
#include <QScrollArea>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QStyleHints>
#include <QTabWidget>
#include <QTimer>
#include <QVBoxLayout>

namespace madmax::ui {

/// The Explorer tab: the headline over the charts, which keep a readable size and scroll when
/// the window is small (1280×720): nothing is squeezed until its legend or axis labels are cut.
QWidget* MainWindow::explorerView() {
    auto* right = new QWidget;
    auto* rv = new QVBoxLayout(right);
    headline_ = new HeadlineStrip;
    rv->addWidget(headline_);
    auto* chartsArea = new QScrollArea;
    chartsArea->setWidgetResizable(true);
    chartsArea->setFrameShape(QFrame::NoFrame);
    auto* chartsHolder = new QWidget;
    auto* grid = new QGridLayout(chartsHolder);
    const QStringList ids = explorerChartIds();
    for (int i = 0; i < ids.size(); ++i) {
        ExplorerChart* c = createChart(ids[i]).release();
        c->setParent(chartsHolder);
        c->setMinimumSize(340, 290);
        attachExportMenu(c);
        charts_[ids[i]] = c;
    }
    // Training: the timeline is wide and gets a row of its own. Serving: its breakdown, the
    // latency-throughput curve and one request's path take the places of the training-only
    // charts.
    grid->addWidget(charts_["breakdown"], 0, 0);
    grid->addWidget(charts_["serving"], 0, 0);
    grid->addWidget(charts_["comm"], 0, 1);
    grid->addWidget(charts_["curve"], 0, 1);
    grid->addWidget(charts_["memory"], 1, 0);
    grid->addWidget(charts_["comparison"], 1, 1);
    grid->addWidget(charts_["timeline"], 2, 0, 1, 2);
    grid->addWidget(charts_["request"], 2, 0, 1, 2);
    chartsArea->setWidget(chartsHolder);
    rv->addWidget(chartsArea, 1);

    return right;
}

/// The scenario to open with: the one named on the command line, else the last session's
/// (unless --no-restore); false when neither was loaded (the built-in default then), with the
/// reason kept for the startup notice.
bool MainWindow::loadStartupScenario(const WindowOptions& options, QSettings& settings) {
    bool loaded = false;
    if (!options.scenario.isEmpty()) {
        QString err;
        loaded = openFile(options.scenario, &err);
        if (!loaded) startupNotice_ = err + " — showing the built-in default scenario instead";
    } else if (restoreSession_) {
        restoreGeometry(settings.value("window/geometry").toByteArray());
        restoreState(settings.value("window/state").toByteArray());
        const QString last = settings.value("session/lastScenario").toString();
        if (!last.isEmpty()) {
            try {
                doc_->reset(nlohmann::json::parse(last.toStdString()),
                            settings.value("session/lastPath").toString());
                loaded = true;
            } catch (const std::exception& e) {
                loaded = false; // said, then the built-in default
                startupNotice_ = QString("The last session's scenario could not be restored (") +
                                 e.what() + ") — showing the built-in default scenario instead";
            }
        }
    }
    return loaded;
}

/// User preset files that could not be loaded, added to the startup notice.
void MainWindow::noteSkippedPresets() {
    if (const QStringList& bad = store_->skipped(); !bad.isEmpty()) {
        const QString presets =
            QString("%1 user preset file%2 not loaded: %3%4")
                .arg(bad.size())
                .arg(bad.size() == 1 ? " was" : "s were")
                .arg(bad.front())
                .arg(bad.size() > 1 ? QString(" (and %1 more)").arg(bad.size() - 1) : QString());
        startupNotice_ = startupNotice_.isEmpty() ? presets : startupNotice_ + "; " + presets;
    }
}

MainWindow::MainWindow(const WindowOptions& options, QWidget* parent)
    : QMainWindow(parent), store_(std::make_unique<PresetStore>(options.presetFolder)),
      restoreSession_(options.restoreSession) {
    setWindowIcon(QIcon(":/madmax-explorer.svg"));
    doc_ = new ScenarioDocument(store_->library(), this);

    // Left: strategy and scenario editors.
    strategy_ = new StrategyPanel(doc_);
    scenarioPanel_ = new ScenarioPanel(doc_, store_.get());
    auto* tabs = new QTabWidget;
    auto* strategyScroll = new QScrollArea;
    strategyScroll->setWidget(strategy_);
    strategyScroll->setWidgetResizable(true);
    tabs->addTab(strategyScroll, "Strategy");
    tabs->addTab(scenarioPanel_, "Scenario");
    leftPanel_ = tabs;

    QWidget* right = explorerView();
    designSpace_ = new DesignSpacePanel(doc_);
    coDesign_ = new CoDesignPanel(doc_);
    views_ = new QTabWidget;
    views_->addTab(right, "Explorer");
    views_->addTab(designSpace_, "Design space");
    views_->addTab(coDesign_, "Co-design");
    views_->setTabToolTip(1, "Rank every valid parallelization strategy for the current scenario.");
    views_->setTabToolTip(2,
                          "Which hardware change would buy the most? Scale knobs and re-search.");
    for (const QString& id : designChartIds()) {
        ExplorerChart* c = chart(id);
        attachExportMenu(c);
    }

    auto* split = new QSplitter;
    split->addWidget(leftPanel_);
    split->addWidget(views_);
    split->setStretchFactor(0, 0);
    split->setStretchFactor(1, 1);
    // The editors keep a sensible width (at 1280×720 the charts get two thirds of the window).
    leftPanel_->setMaximumWidth(420);
    split->setSizes({380, 1000});
    setCentralWidget(split);
    buildMenus();
    statusBar()->showMessage("Ready");

    connect(&worker_, &EvaluationWorker::evaluated, this, &MainWindow::showEvaluation);
    connect(doc_, &ScenarioDocument::changed, this, [this](const Scenario& s) {
        worker_.request(s);
        updateTitle();
    });
    connect(doc_->undoStack(), &QUndoStack::cleanChanged, this, &MainWindow::updateTitle);
    connect(doc_, &ScenarioDocument::filePathChanged, this, &MainWindow::updateTitle);

    QSettings settings;
    const bool loaded = loadStartupScenario(options, settings);
    noteSkippedPresets();
    if (!loaded) worker_.request(doc_->scenario()); // the built-in default
    if (!restoreSession_ || settings.value("window/geometry").isNull()) resize(1500, 920);
    applyStyle();
    updateTitle();
}

MainWindow::~MainWindow() {
    // The document is a child destroyed after this object: its last signals (the undo stack's
    // cleanChanged on destruction) must not reach a half-destroyed window.
    doc_->undoStack()->disconnect(this);
    doc_->disconnect(this);
    worker_.disconnect(this);
}

void MainWindow::buildMenus() {
    QMenu* file = menuBar()->addMenu("&File");
    file->addAction("&Open…", QKeySequence::Open, this, &MainWindow::openInteractive);
    file->addAction("&Import the Seed's Files…", this, [this] {
        SeedImportDialog dialog(this);
        connect(&dialog, &SeedImportDialog::openScenario, this, [this](const nlohmann::json& doc) {
            if (!maybeSave()) return;
            try {
                doc_->reset(doc);
            } catch (const std::exception& e) {
                QMessageBox::warning(this, "Import", QString::fromStdString(e.what()));
            }
        });
        dialog.exec();
    });
    file->addAction("&Calibrate from Measurements…", this, [this] {
        CalibrateDialog dialog(store_.get(), this);
        dialog.exec();
    });
    recentMenu_ = file->addMenu("Open &Recent");
    rebuildRecentMenu();
    file->addAction("&Save", QKeySequence::Save, this, [this] { saveInteractive(false); });
    file->addAction("Save &As…", QKeySequence::SaveAs, this, [this] { saveInteractive(true); });
    file->addSeparator();
    QMenu* exp = file->addMenu("&Export Chart");
    for (const QString& id : chartIds())
        exp->addAction(chart(id)->title() + "…", this, [this, id] { exportChartInteractive(id); });
    file->addAction("Export &All…", QKeySequence(Qt::CTRL | Qt::Key_E), this,
                    &MainWindow::exportAllInteractive);
    file->addSeparator();
    file->addAction("&Quit", QKeySequence::Quit, this, &QWidget::close);

    QMenu* edit = menuBar()->addMenu("&Edit");
    QAction* undo = doc_->undoStack()->createUndoAction(this, "&Undo");
    undo->setShortcut(QKeySequence::Undo);
    QAction* redo = doc_->undoStack()->createRedoAction(this, "&Redo");
    redo->setShortcut(QKeySequence::Redo);
    edit->addAction(undo);
    edit->addAction(redo);

    QMenu* view = menuBar()->addMenu("&View");
    // Pinning is instant (no prompt): the pin is named after its strategy.
    view->addAction("&Pin as Baseline", QKeySequence(Qt::CTRL | Qt::Key_B), this, [this] {
        pinBaseline(QString("Pin %1: %2")
                        .arg(pinned_.size() + 1)
                        .arg(QString::fromStdString(scenarioSpec(shown_.scenario))));
    });
    view->addAction("&Clear Pinned", QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_B), this,
                    &MainWindow::clearPins);
    QAction* pres = view->addAction("P&resentation Mode", QKeySequence(Qt::Key_F11), this,
                                    [this] { setPresentationMode(!presentation_); });
    pres->setCheckable(true);
    // The menu bar hides in presentation mode, and a hidden menu's shortcuts stop working: the
    // window itself carries F11, and Escape leaves the mode.
    addAction(pres);
    auto* leave = new QAction("Leave Presentation Mode", this);
    leave->setShortcut(QKeySequence(Qt::Key_Escape));
    connect(leave, &QAction::triggered, this, [this] {
        if (presentation_) setPresentationMode(false);
    });
    addAction(leave);
    connect(this, &MainWindow::resultShown, pres,
            [this, pres] { pres->setChecked(presentation_); });

    QMenu* help = menuBar()->addMenu("&Help");
    help->addAction("&About MAD-Max Explorer", this, &MainWindow::about);
}

bool MainWindow::showTab(const QString& name) {
    const QString want = name.toLower().replace('-', ' ');
    for (QTabWidget* tabs : {qobject_cast<QTabWidget*>(leftPanel_), views_})
        for (int i = 0; tabs && i < tabs->count(); ++i)
            if (tabs->tabText(i).toLower().replace('-', ' ') == want) {
                tabs->setCurrentIndex(i);
                return true;
            }
    return false;
}

ExplorerChart* MainWindow::chart(const QString& id) const {
    if (ExplorerChart* c = charts_.value(id)) return c;
    if (ExplorerChart* c = designSpace_->chart(id)) return c;
    return coDesign_->chart(id);
}

ChartInput MainWindow::chartInput() const {
    ChartInput in;
    in.current = &shown_;
    in.baseline = pinned_.isEmpty() ? nullptr : &pinned_.front();
    in.pinned = pinned_;
    in.search = designSpace_->result();
    in.sensitivity = coDesign_->sensitivity();
    in.sweeps = coDesign_->sweeps();
    in.pareto = coDesign_->pareto();
    in.cloud = coDesign_->cloud();
    return in;
}

void MainWindow::attachExportMenu(ExplorerChart* c) {
    c->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(c, &QWidget::customContextMenuRequested, this, [this, c](const QPoint& pos) {
        QMenu m;
        m.addAction("Export chart…", this, [this, c] { exportChartInteractive(c->id()); });
        m.addAction("Export all…", this, &MainWindow::exportAllInteractive);
        m.exec(c->mapToGlobal(pos));
    });
}

void MainWindow::showEvaluation(const Evaluation& e) {
    // A fresh result updates one chart per event-loop pass, so no single pass holds the GUI
    // thread for all of them (and their repaint) at once; a newer result restarts the pass.
    incoming_ = e;
    const bool restart = chartQueue_.isEmpty();
    chartQueue_ = e.result.isInference ? servingChartIds() : trainingChartIds();
    if (restart) QTimer::singleShot(0, this, &MainWindow::updateNextChart);
}

void MainWindow::updateNextChart() {
    if (chartQueue_.isEmpty()) return;
    const QString id = chartQueue_.takeFirst();
    ChartInput in = chartInput();
    in.current = &incoming_;
    charts_[id]->setVisible(true);
    charts_[id]->setInput(in);
    if (!chartQueue_.isEmpty()) {
        QTimer::singleShot(0, this, &MainWindow::updateNextChart);
        return;
    }
    finishShowing(incoming_);
}

void MainWindow::finishShowing(const Evaluation& e) {
    shown_ = e;
    const bool serving = e.result.isInference;
    const QStringList visible = serving ? servingChartIds() : trainingChartIds();
    for (auto it = charts_.begin(); it != charts_.end(); ++it)
        it.value()->setVisible(visible.contains(it.key()));
    const ChartInput in = chartInput();
    headline_->setResults(shown_.result, in.baseline ? &in.baseline->eval.result : nullptr);
    headline_->setUncertainty(uncertaintyFor(shown_.scenario));
    if (serving)
        statusBar()->showMessage(
            QString("Evaluated in the background; batch %1 per replica (%2 fit in KV memory)%3")
                .arg(e.result.inference.batch)
                .arg(e.result.inference.maxBatchThatFits)
                .arg(e.result.inference.meetsObjectives ? ""
                                                        : "; objectives not met even at batch 1"));
    else
        statusBar()->showMessage(
            QString("Evaluated in the background; %1 micro-batches per step, critical stage %2")
                .arg(e.result.microBatches)
                .arg(e.result.criticalStage));
    if (!startupNotice_.isEmpty()) {
        // The first result would hide why the window shows something else: say it with it.
        statusBar()->showMessage(startupNotice_);
        startupNotice_.clear();
    }
    emit resultShown(e.generation);
}

void MainWindow::showNow(const Evaluation& e) {
    // Pins, presentation mode and palette changes: every chart at once.
    chartQueue_.clear();
    incoming_ = e;
    ChartInput in = chartInput();
    in.current = &incoming_;
    for (const QString& id : e.result.isInference ? servingChartIds() : trainingChartIds())
        charts_[id]->setInput(in);
    finishShowing(e);
}

void MainWindow::pinBaseline(const QString& name) {
    if (shown_.generation == 0) return;
    pinned_.append({name.isEmpty() ? QString("Pinned %1").arg(pinned_.size() + 1) : name, shown_});
    showNow(shown_);
}

void MainWindow::clearPins() {
    pinned_.clear();
    if (shown_.generation) showNow(shown_);
}

void MainWindow::applyStyle() {
    const bool dark = palette().color(QPalette::Window).lightness() < 128;
    const double scale = presentation_ ? 1.8 : 1.0;
    for (ExplorerChart* c : charts_)
        c->setChartStyle(ChartStyle::screen(dark, scale));
    designSpace_->setChartStyle(ChartStyle::screen(dark, scale));
    coDesign_->setChartStyle(ChartStyle::screen(dark, scale));
    headline_->setFontScale(scale);
}

void MainWindow::setPresentationMode(bool on) {
    presentation_ = on;
    leftPanel_->setVisible(!on);
    menuBar()->setVisible(!on);
    statusBar()->setVisible(!on);
    if (on)
        showFullScreen();
    else
        showNormal();
    applyStyle();
    if (shown_.generation) showNow(shown_);
}

void MainWindow::changeEvent(QEvent* e) {
    if (e->type() == QEvent::PaletteChange || e->type() == QEvent::ApplicationPaletteChange) {
        applyStyle();
        if (shown_.generation) showNow(shown_);
    }
    QMainWindow::changeEvent(e);
}

void MainWindow::updateTitle() {
    const QString file = doc_->filePath().isEmpty() ? QString::fromStdString(doc_->scenario().name)
                                                    : QFileInfo(doc_->filePath()).fileName();
    setWindowTitle(QString("%1%2 — MAD-Max Explorer").arg(file, doc_->isModified() ? " *" : ""));
}

bool MainWindow::openFile(const QString& path, QString* error) {
    try {
        const nlohmann::json doc = loadScenarioJson(path.toStdString(), store_->library());
        const bool isFile = QFileInfo(path).isFile();
        doc_->reset(doc, isFile ? QFileInfo(path).absoluteFilePath() : QString());
        if (isFile) addRecent(QFileInfo(path).absoluteFilePath());
        return true;
    } catch (const std::exception& e) {
        if (error) *error = QString::fromStdString(e.what());
        return false;
    }
}

bool MainWindow::saveTo(const QString& path, QString* error) {
    const QString err = doc_->saveAs(path);
    if (!err.isEmpty()) {
        if (error) *error = err;
        return false;
    }
    addRecent(path);
    return true;
}

void MainWindow::openInteractive() {
    if (!maybeSave()) return;
    const QString path = QFileDialog::getOpenFileName(this, "Open scenario", {},
                                                      "Scenarios (*.json);;All files (*)");
    if (path.isEmpty()) return;
    QString err;
    if (!openFile(path, &err)) QMessageBox::warning(this, "Open scenario", err);
}

bool MainWindow::saveInteractive(bool forceAsk) {
    QString path = doc_->filePath();
    if (forceAsk || path.isEmpty()) {
        path = QFileDialog::getSaveFileName(
            this, "Save scenario", path.isEmpty() ? "scenario.json" : path, "Scenarios (*.json)");
        if (path.isEmpty()) return false;
        if (!path.endsWith(".json")) path += ".json";
    }
    QString err;
    if (!saveTo(path, &err)) {
        QMessageBox::warning(this, "Save scenario", err + "\nThe file on disk was left unchanged.");
        return false;
    }
    statusBar()->showMessage("Saved " + path, 4000);
    return true;
}

bool MainWindow::maybeSave() {
    if (!doc_->isModified()) return true;
    const auto answer = QMessageBox::question(
        this, "Unsaved changes", "The scenario has unsaved changes. Save them?",
        QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
    if (answer == QMessageBox::Cancel) return false;
    if (answer == QMessageBox::Save) return saveInteractive(false);
    return true;
}

void MainWindow::addRecent(const QString& path) {
    QSettings s;
    QStringList recent = s.value("recentFiles").toStringList();
    recent.removeAll(path);
    recent.prepend(path);
    while (recent.size() > 10)
        recent.removeLast();
    s.setValue("recentFiles", recent);
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
    if (!recentMenu_) return;
    recentMenu_->clear();
    const QStringList recent = QSettings().value("recentFiles").toStringList();
    for (const QString& p : recent)
        recentMenu_
            ->addAction(QFileInfo(p).fileName(), this,
                        [this, p] {
                            if (!maybeSave()) return;
                            QString err;
                            if (!openFile(p, &err)) QMessageBox::warning(this, "Open recent", err);
                        })
            ->setToolTip(p);
    recentMenu_->setEnabled(!recent.isEmpty());
}

void MainWindow::exportChartInteractive(const QString& id) {
    ExportDialog dlg(chart(id)->title(), this);
    if (dlg.exec() != QDialog::Accepted) return;
    const ExportOptions o = dlg.options();
    const QString path =
        QFileDialog::getSaveFileName(this, "Export chart", id + "." + extensionOf(o.format));
    if (path.isEmpty()) return;
    const QString err = exportChart(id, chartInput(), path, o);
    if (!err.isEmpty())
        QMessageBox::warning(this, "Export", err);
    else
        statusBar()->showMessage("Exported " + path, 4000);
}

void MainWindow::exportAllInteractive() {
    const QString folder =
        QFileDialog::getExistingDirectory(this, "Export every chart and the scenario to…");
    if (folder.isEmpty()) return;
    const QString err = exportAll(chartInput(), folder, ExportOptions{});
    if (!err.isEmpty())
        QMessageBox::warning(this, "Export all", err);
    else
        statusBar()->showMessage("Exported every chart to " + folder, 4000);
}

void MainWindow::about() {
    QMessageBox::about(
        this, "About MAD-Max Explorer",
        QString("<h3>MAD-Max Explorer %1</h3>"
                "<p>Predicts how large models train on GPU clusters: step time, throughput, "
                "MFU, compute vs exposed communication, and memory per GPU.</p>"
                "<p>Implements the agile performance model of <i>MAD-Max Beyond Single-Node: "
                "Enabling Large Machine Learning Model Acceleration on Distributed Systems</i>, "
                "Hsia et al., ISCA 2024, validated against published measurements "
                "(Megatron-LM SC21, Korthikanti et al. 2022, Llama 3, NeMo, nccl-tests).</p>")
            .arg(MADMAX_VERSION));
}

void MainWindow::closeEvent(QCloseEvent* e) {
    if (!maybeSave()) {
        e->ignore();
        return;
    }
    if (restoreSession_) {
        QSettings s;
        s.setValue("window/geometry", saveGeometry());
        s.setValue("window/state", saveState());
        s.setValue("session/lastScenario", QString::fromStdString(toJson(doc_->scenario()).dump()));
        s.setValue("session/lastPath", doc_->filePath());
    }
    e->accept();
}

} // namespace madmax::ui
