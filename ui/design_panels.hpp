// The design-space view (search: heatmap, scatter, ranked table) and the co-design view
// (sensitivity tornado, speedup-vs-factor sweeps). Long runs go to a background thread with a
// progress bar and Cancel, and stream partial results in as they arrive.
#pragma once

#include "charts/explorer_chart.hpp"
#include "document.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QWidget>

#include <atomic>
#include <memory>
#include <thread>

namespace madmax::ui {

/// Runs a job on a background thread; the job reports progress and partial results, which
/// arrive on the GUI thread. One job at a time; cancel is an atomic flag the core polls.
class BackgroundJob : public QObject {
    Q_OBJECT
  public:
    explicit BackgroundJob(QObject* parent = nullptr) : QObject(parent) {}
    ~BackgroundJob() override;
    bool running() const { return running_; }
    void cancel() { cancel_ = true; }
    const std::atomic<bool>* cancelFlag() const { return &cancel_; }
    /// `work` runs off the GUI thread; it may call report(fraction) and post(fn) (fn runs on the
    /// GUI thread).
    void start(std::function<void(BackgroundJob&)> work);
    void report(double fraction);
    void post(std::function<void()> fn);

  signals:
    void progress(double fraction);
    void finished(bool cancelled);

  private:
    std::atomic<bool> cancel_{false};
    bool running_ = false;
    std::unique_ptr<std::thread> thread_;
};

class DesignSpacePanel : public QWidget {
    Q_OBJECT
  public:
    explicit DesignSpacePanel(ScenarioDocument* doc, QWidget* parent = nullptr);
    ExplorerChart* chart(const QString& id) const;
    const SearchResult* result() const { return hasResult_ ? &result_ : nullptr; }
    QTableWidget* table() const { return table_; }
    void runSearch();
    void cancel() { job_.cancel(); }
    bool running() const { return job_.running(); }
    /// Load row `row` of the ranked table into the scenario (as a double-click does).
    void loadRow(int row);
    /// "64,128,256": sweep these GPU counts too (empty: the scenario's). Returns an error or empty.
    QString setGpuCounts(const QString& text);
    QString status() const { return status_->text(); }
    void setChartStyle(const ChartStyle& s);

  signals:
    void searchFinished(bool cancelled);

  private:
    void show(const SearchResult& r, bool final);
    ScenarioDocument* doc_;
    QComboBox* objective_;
    QSpinBox* topN_;
    QCheckBox* tpAcross_;
    QLineEdit* gpuCounts_; ///< optional GPU counts to sweep (the throughput-vs-GPUs front)
    QPushButton* run_;
    QPushButton* stop_;
    QProgressBar* bar_;
    QLabel* status_;
    ExplorerChart* heatmap_;
    ExplorerChart* scatter_;
    QTableWidget* table_;
    BackgroundJob job_;
    SearchResult result_;
    bool hasResult_ = false;
    std::vector<Candidate> rows_;
};

class CoDesignPanel : public QWidget {
    Q_OBJECT
  public:
    explicit CoDesignPanel(ScenarioDocument* doc, QWidget* parent = nullptr);
    ExplorerChart* chart(const QString& id) const;
    const std::vector<Sensitivity>* sensitivity() const {
        return sensitivity_.empty() ? nullptr : &sensitivity_;
    }
    const std::vector<SweepResult>* sweeps() const { return sweeps_.empty() ? nullptr : &sweeps_; }
    void runSensitivity();
    void runSweeps(const QStringList& knobs, const QString& factors);
    void cancel() { job_.cancel(); }
    bool running() const { return job_.running(); }
    void setChartStyle(const ChartStyle& s);

  signals:
    void runFinished(bool cancelled);

  private:
    void refreshCharts();
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
    BackgroundJob job_;
    std::vector<Sensitivity> sensitivity_;
    std::vector<SweepResult> sweeps_;
};

} // namespace madmax::ui
