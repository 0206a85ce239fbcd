// The explorer window: scenario and strategy on the left, the headline strip and the charts on
// the right, every chart following the sliders live.
#pragma once

#include "charts/explorer_chart.hpp"
#include "codesign_panel.hpp"
#include "design_space_panel.hpp"
#include "document.hpp"
#include "headline_strip.hpp"
#include "presets_store.hpp"
#include "scenario_panel.hpp"
#include "strategy_panel.hpp"
#include "worker.hpp"

#include <QMainWindow>
#include <QSettings>
#include <QMap>
#include <QMenu>
#include <QTabWidget>

#include <memory>

namespace madmax::ui {

struct WindowOptions {
    bool restoreSession = true; ///< geometry and the last scenario from QSettings
    QString scenario;           ///< file or preset id to open instead of the default/last one
    QString presetFolder;       ///< user presets (default: the app-data folder)
};

class MainWindow : public QMainWindow {
    Q_OBJECT
  public:
    explicit MainWindow(const WindowOptions& options = {}, QWidget* parent = nullptr);
    ~MainWindow() override;

    ScenarioDocument* document() { return doc_; }
    StrategyPanel* strategyPanel() { return strategy_; }
    ScenarioPanel* scenarioPanel() { return scenarioPanel_; }
    HeadlineStrip* headline() { return headline_; }
    PresetStore* presetStore() { return store_.get(); }
    /// Any chart by id: the explorer's, the design space's or the co-design's.
    ExplorerChart* chart(const QString& id) const;
    DesignSpacePanel* designSpace() { return designSpace_; }
    CoDesignPanel* coDesign() { return coDesign_; }
    QTabWidget* views() { return views_; }
    /// Brings the editor tab (Strategy, Scenario) or view tab (Explorer, Design space,
    /// Co-design) of this name forward, case and '-' for ' ' aside; false when none has it.
    bool showTab(const QString& name);
    EvaluationWorker* worker() { return &worker_; }
    /// The evaluation the charts show now (generation 0 until the first result).
    const Evaluation& shown() const { return shown_; }
    ChartInput chartInput() const;

    bool openFile(const QString& path, QString* error = nullptr);
    bool saveTo(const QString& path, QString* error = nullptr);
    void pinBaseline(const QString& name = {});
    void clearPins();
    int pinnedCount() const { return int(pinned_.size()); }
    void setPresentationMode(bool on);
    bool presentationMode() const { return presentation_; }

  signals:
    /// The charts now show the result of request `generation`.
    void resultShown(quint64 generation);

  protected:
    void closeEvent(QCloseEvent* e) override;
    void changeEvent(QEvent* e) override;

  private:
    void buildMenus();
    QWidget* explorerView();
    bool loadStartupScenario(const WindowOptions& options, QSettings& settings);
    void noteSkippedPresets();
    void showEvaluation(const Evaluation& e);
    /// Right-click a chart: export it, or every chart.
    void attachExportMenu(ExplorerChart* c);
    void updateNextChart();
    void finishShowing(const Evaluation& e);
    void showNow(const Evaluation& e);
    void applyStyle();
    void updateTitle();
    void addRecent(const QString& path);
    void rebuildRecentMenu();
    bool maybeSave();
    void exportChartInteractive(const QString& id);
    void exportAllInteractive();
    void openInteractive();
    bool saveInteractive(bool forceAsk);
    void about();

    std::unique_ptr<PresetStore> store_;
    ScenarioDocument* doc_;
    EvaluationWorker worker_;
    Evaluation shown_;
    Evaluation incoming_;    ///< the result the charts are being updated to
    QStringList chartQueue_; ///< charts still to update to `incoming_`
    QList<PinnedEvaluation> pinned_;
    HeadlineStrip* headline_;
    StrategyPanel* strategy_;
    ScenarioPanel* scenarioPanel_;
    QWidget* leftPanel_;
    QTabWidget* views_;
    DesignSpacePanel* designSpace_;
    CoDesignPanel* coDesign_;
    QMap<QString, ExplorerChart*> charts_;
    QMenu* recentMenu_ = nullptr;
    bool presentation_ = false;
    bool restoreSession_ = true;
    /// Why the window did not open what it was asked to (shown with the first result).
    QString startupNotice_;
};

} // namespace madmax::ui
