// The design-space view: every valid strategy of the scenario searched in the background
// (progress, Cancel, partial rankings streamed in), shown as a TP × PP heatmap, a scatter and a
// sortable ranked table whose rows load into the sliders.
#pragma once

#include "charts/explorer_chart.hpp"
#include "document.hpp"
#include "job_tracker.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QWidget>

namespace madmax::ui {

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
    QComboBox* objectiveBox() const { return objective_; }
    void setChartStyle(const ChartStyle& s);

  signals:
    void searchFinished(bool cancelled);

  private:
    void show(const SearchResult& r, bool final);
    void fillServingRows(bool moe);
    void fillTrainingRows(bool moe);
    QString statusText(const SearchResult& r, bool serving) const;
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
    JobTracker job_;
    SearchResult result_;
    bool hasResult_ = false;
    std::vector<Candidate> rows_;
};

} // namespace madmax::ui
