// The explorer's DLRM controls: a sharding type per table group, the 2-D group size, sparse
// pipelining, and the sharding-plan search (ranked, explained; a row applies its plan).
#pragma once

#include "document.hpp"
#include "job_tracker.hpp"

#include "madmax/dlrm_search.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QGroupBox>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>

namespace madmax::ui {

class DlrmPanel : public QGroupBox {
    Q_OBJECT
  public:
    explicit DlrmPanel(ScenarioDocument* doc, QWidget* parent = nullptr);
    ~DlrmPanel() override;

    QTableWidget* tables() const { return tables_; }
    QComboBox* groupSize() const { return group_; }
    QCheckBox* pipeline() const { return pipeline_; }
    QCheckBox* perTableKernels() const { return perTable_; }
    QPushButton* searchButton() const { return search_; }
    QTableWidget* results() const { return results_; }
    QLabel* explanation() const { return explanation_; }
    /// The sharding combo of table group `row`.
    QComboBox* shardingCombo(int row) const;
    /// Blocks until a running plan search has finished and its results are shown (tests).
    void waitForSearch();
    QString message() const { return message_->text(); }

  signals:
    void searchFinished();

  private:
    void refresh(const Scenario& s);
    void apply(const std::vector<std::pair<std::string, nlohmann::json>>& edits,
               const QString& what);
    void startSearch();
    void showSearch(const DlrmSearchResult& found);
    void applyPlan(int row);

    ScenarioDocument* doc_;
    QTableWidget* tables_;
    QComboBox* group_;
    QCheckBox* pipeline_;
    QCheckBox* perTable_;
    QPushButton* search_;
    QTableWidget* results_;
    QLabel* explanation_;
    QLabel* message_;
    JobTracker job_; ///< the explorer's one background-work mechanism
    DlrmSearchResult last_;
    Scenario searched_;
};

} // namespace madmax::ui
