// The co-design view: which hardware change buys the most? Knob sensitivity (tornado) and
// speedup-vs-factor sweeps, each point re-searching the strategy, run in the background.
#pragma once

#include "charts/explorer_chart.hpp"
#include "document.hpp"
#include "job_tracker.hpp"

#include <QLabel>
#include <QLayout>
#include <QLineEdit>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QTabWidget>
#include <QWidget>

namespace madmax::ui {

class CoDesignPanel : public QWidget {
    Q_OBJECT
  public:
    explicit CoDesignPanel(ScenarioDocument* doc, QWidget* parent = nullptr);
    ExplorerChart* chart(const QString& id) const;
    const std::vector<Sensitivity>* sensitivity() const {
        return sensitivity_.empty() ? nullptr : &sensitivity_;
    }
    const std::vector<SweepResult>* sweeps() const { return sweeps_.empty() ? nullptr : &sweeps_; }
    const ResourcePareto* pareto() const { return pareto_.points.empty() ? nullptr : &pareto_; }
    const std::vector<seed::CloudTableRow>* cloud() const {
        return cloud_.empty() ? nullptr : &cloud_;
    }
    /// The MAD-Max artifact's DLRM-A cloud table, re-run with the reference engine.
    void runCloudTable();
    /// Resource vs performance: `systems` are preset ids ("scenario": the scenario's own),
    /// `gpus` a comma list (empty: the scenario's count × 1/8 … ×4).
    void runPareto(const QStringList& systems, const QString& gpus);
    QListWidget* paretoSystems() const { return systems_; }
    QString status() const { return status_->text(); }
    void runSensitivity();
    void runSweeps(const QStringList& knobs, const QString& factors);
    void cancel() { job_.cancel(); }
    bool running() const { return job_.running(); }
    void setChartStyle(const ChartStyle& s);

  signals:
    void runFinished(bool cancelled);

  private:
    QLayout* sensitivityControls();
    QLayout* paretoControls();
    QLayout* chartGrid();
    void connectActions();
    void refreshCharts();
    /// A run starts: every run button off, Cancel on, the bar at zero, `status` said.
    void setBusy(const QString& status);
    ScenarioDocument* doc_;
    QListWidget* knobs_;
    QLineEdit* factors_;
    QPushButton* sens_;
    QPushButton* sweep_;
    QPushButton* stop_;
    QProgressBar* bar_;
    QLabel* status_;
    ExplorerChart* tornado_;
    ExplorerChart* sweepChart_;
    ExplorerChart* paretoChart_;
    ExplorerChart* paretoCostChart_;
    ExplorerChart* cloudChart_;
    bool summarised_ = false; ///< the running job posted its own status line
    QTabWidget* costTabs_; ///< the dollar Pareto chart and the cloud table's
    QPushButton* cloudRun_;
    QListWidget* systems_;
    QLineEdit* gpus_;
    QPushButton* paretoRun_;
    ResourcePareto pareto_;
    JobTracker job_;
    std::vector<Sensitivity> sensitivity_;
    std::vector<SweepResult> sweeps_;
    std::vector<seed::CloudTableRow> cloud_;
};

} // namespace madmax::ui
