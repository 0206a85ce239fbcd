#include "dlrm_panel.hpp"

#include "madmax/report.hpp"

#include <QCoreApplication>
#include <QFormLayout>
#include <QHeaderView>
#include <QSignalBlocker>
#include <QVBoxLayout>

#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>

namespace madmax::ui {

namespace {

const QStringList kTypes = {"tw", "rw", "cw", "twrw", "dp"};
const char* kTypeTips =
    "tw: whole tables on one GPU, pooled all-to-all. rw: rows split over the group, partial "
    "sums reduce-scattered. cw: columns split into shards placed table-wise. twrw: rows split "
    "inside a node, tables spread over nodes. dp: replicated, gradients all-reduced.";

nlohmann::json planJson(const Scenario& s, const DlrmPlan& p) {
    nlohmann::json a = nlohmann::json::array();
    for (std::size_t t = 0; t < s.model.dlrm.tables.size(); ++t)
        a.push_back(std::string(toString(p.sharding[t])));
    return a;
}

} // namespace

DlrmPanel::DlrmPanel(ScenarioDocument* doc, QWidget* parent)
    : QGroupBox("Embeddings (DLRM)", parent), doc_(doc) {
    auto* outer = new QVBoxLayout(this);
    tables_ = new QTableWidget(0, 5);
    tables_->setHorizontalHeaderLabels({"Tables", "Rows", "Dim", "Pooling", "Sharding"});
    tables_->verticalHeader()->hide();
    tables_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    tables_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    tables_->setToolTip(kTypeTips);
    tables_->setMinimumHeight(160);
    outer->addWidget(tables_);
    auto* form = new QFormLayout;
    group_ = new QComboBox;
    group_->setToolTip("2-D sparse parallelism: shard the tables over groups of this many GPUs "
                       "and replicate them across the groups (all-to-all inside a group, an "
                       "all-reduce of the touched rows across replicas).");
    form->addRow("Sharding group", group_);
    pipeline_ = new QCheckBox("Pipeline the sparse part over the dense step");
    pipeline_->setToolTip("TorchRec TrainPipelineSparseDist: the next batch's lookups and "
                          "all-to-alls run under this batch's dense work.");
    form->addRow(pipeline_);
    perTable_ = new QCheckBox("One embedding module per table (eager)");
    perTable_->setToolTip("The 2020 PyTorch DLRM examples: a gather, a backward and an update "
                          "launched per table, instead of one fused kernel for all tables "
                          "(FBGEMM TBE, HugeCTR). Matters when the host's launches bound the "
                          "step (eager, no CUDA graphs): see \"host launch stalls\".");
    form->addRow(perTable_);
    outer->addLayout(form);
    search_ = new QPushButton("Search sharding plans");
    search_->setToolTip("Every type per table group (coordinate descent when the space is "
                        "large), every group size, pipelined or not; ranked by step time "
                        "among the plans that fit in HBM. Double-click a row to apply it.");
    outer->addWidget(search_);
    results_ = new QTableWidget(0, 5);
    results_->setHorizontalHeaderLabels({"#", "Step", "Samples/s", "Memory", "Plan"});
    results_->verticalHeader()->hide();
    results_->horizontalHeader()->setStretchLastSection(true);
    results_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    results_->setSelectionBehavior(QAbstractItemView::SelectRows);
    results_->setMinimumHeight(140);
    outer->addWidget(results_);
    explanation_ = new QLabel;
    explanation_->setWordWrap(true);
    explanation_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    outer->addWidget(explanation_);
    message_ = new QLabel;
    message_->setWordWrap(true);
    message_->setStyleSheet("color: #D55E00;");
    outer->addWidget(message_);

    connect(&job_, &JobTracker::finished, this, [this](bool) {
        search_->setEnabled(true);
        search_->setText("Search sharding plans");
        emit searchFinished();
    });
    connect(search_, &QPushButton::clicked, this, &DlrmPanel::startSearch);
    connect(results_, &QTableWidget::cellDoubleClicked, this,
            [this](int row, int) { applyPlan(row); });
    connect(group_, &QComboBox::currentIndexChanged, this, [this](int i) {
        if (i < 0) return;
        const int g = group_->itemData(i).toInt();
        apply({{"strategy.emb_group_size", g == doc_->scenario().gpus ? 0 : g}},
              "sharding group " + group_->itemText(i));
    });
    connect(pipeline_, &QCheckBox::toggled, this, [this](bool on) {
        apply({{"strategy.sparse_pipeline", on}}, on ? "sparse pipelining on" : "sparse pipelining off");
    });
    connect(perTable_, &QCheckBox::toggled, this, [this](bool on) {
        apply({{"strategy.emb_kernels", on ? "per_table" : "fused"}},
              on ? "per-table embedding kernels" : "fused embedding kernels");
    });
    connect(doc_, &ScenarioDocument::changed, this, &DlrmPanel::refresh);
    refresh(doc_->scenario());
}

DlrmPanel::~DlrmPanel() = default; // the job tracker cancels and joins its worker

QComboBox* DlrmPanel::shardingCombo(int row) const {
    return qobject_cast<QComboBox*>(tables_->cellWidget(row, 4));
}

void DlrmPanel::refresh(const Scenario& s) {
    if (!s.model.isDlrm()) return;
    const DlrmShape& d = s.model.dlrm;
    const int groups = int(d.tables.size());
    if (tables_->rowCount() != groups) {
        tables_->setRowCount(groups);
        for (int r = 0; r < groups; ++r) {
            auto* c = new QComboBox;
            c->addItems(kTypes);
            c->setToolTip(kTypeTips);
            tables_->setCellWidget(r, 4, c);
            connect(c, &QComboBox::currentTextChanged, this, [this, r](const QString& t) {
                const Scenario& cur = doc_->scenario();
                DlrmPlan p = cur.strategy.dlrm;
                p.sharding[std::size_t(r)] = *parseEmbSharding(t.toStdString());
                apply({{"strategy.emb_sharding", planJson(cur, p)}},
                      QString::fromStdString(cur.model.dlrm.tables[std::size_t(r)].name) + " " + t);
            });
        }
    }
    for (int r = 0; r < groups; ++r) {
        const EmbeddingTableGroup& t = d.tables[std::size_t(r)];
        const QString name = QString::fromStdString(t.name) +
                             (t.count > 1 ? QString(" ×%1").arg(t.count) : QString());
        tables_->setItem(r, 0, new QTableWidgetItem(name));
        tables_->setItem(r, 1, new QTableWidgetItem(QString::number(double(t.rows), 'g', 4)));
        tables_->setItem(r, 2, new QTableWidgetItem(QString::number(t.dim)));
        tables_->setItem(r, 3, new QTableWidgetItem(QString::number(t.pooling, 'g', 4)));
        auto* c = shardingCombo(r);
        const QSignalBlocker b(c);
        c->setCurrentText(QString::fromStdString(std::string(toString(s.strategy.dlrm.sharding[std::size_t(r)]))));
    }
    {
        const QSignalBlocker b(group_);
        group_->clear();
        const int current = s.strategy.dlrm.groupSize > 0 ? s.strategy.dlrm.groupSize : s.gpus;
        std::vector<int> sizes;
        for (int g = 1; g < s.gpus; g *= 2)
            if (s.gpus % g == 0) sizes.push_back(g);
        if (current != s.gpus && std::find(sizes.begin(), sizes.end(), current) == sizes.end())
            sizes.push_back(current);
        std::sort(sizes.begin(), sizes.end());
        sizes.push_back(s.gpus);
        for (int g : sizes)
            group_->addItem(g == s.gpus ? QString("all %1 GPUs").arg(g)
                                        : QString("%1 GPUs (%2 replicas)").arg(g).arg(s.gpus / g),
                            g);
        group_->setCurrentIndex(group_->findData(current));
    }
    {
        const QSignalBlocker b(pipeline_);
        pipeline_->setChecked(s.strategy.dlrm.pipelineSparse);
    }
    {
        const QSignalBlocker b(perTable_);
        perTable_->setChecked(s.strategy.dlrm.perTableKernels);
    }
}

void DlrmPanel::apply(const std::vector<std::pair<std::string, nlohmann::json>>& edits,
                      const QString& what) {
    const QString err = doc_->setFields(edits, what);
    message_->setText(err.isEmpty() ? QString()
                                     : what + " is not applied: " + err +
                                           ". The charts still show the last valid scenario.");
    if (!err.isEmpty()) refresh(doc_->scenario());
}

void DlrmPanel::startSearch() {
    if (job_.running() || !doc_->scenario().model.isDlrm()) return;
    searched_ = doc_->scenario();
    search_->setEnabled(false);
    search_->setText("Searching…");
    job_.start([this, s = searched_](const JobContext& job) {
        try {
            auto found = std::make_shared<DlrmSearchResult>(searchDlrmPlans(s));
            job.post([this, found] { showSearch(*found); });
        } catch (const std::exception& e) {
            const QString why = QString("The plan search failed: ") + e.what();
            job.post([this, why] { message_->setText(why); });
        }
    });
}

void DlrmPanel::waitForSearch() {
    while (job_.running()) {
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
}

void DlrmPanel::showSearch(const DlrmSearchResult& found) {
    last_ = found;
    results_->setRowCount(int(last_.top.size()));
    for (int i = 0; i < int(last_.top.size()); ++i) {
        const DlrmPlanCandidate& c = last_.top[std::size_t(i)];
        const int g = c.plan.groupSize > 0 ? c.plan.groupSize : searched_.gpus;
        const QString plan = QString::fromStdString(describePlan(searched_, c.plan)) +
                             (g < searched_.gpus ? QString("; groups of %1").arg(g) : QString()) +
                             (c.plan.pipelineSparse ? "; pipelined" : "");
        results_->setItem(i, 0, new QTableWidgetItem(QString::number(i + 1)));
        results_->setItem(i, 1, new QTableWidgetItem(QString::fromStdString(formatSeconds(c.result.stepTimeS))));
        results_->setItem(i, 2, new QTableWidgetItem(QString::number(c.result.samplesPerS, 'f', 0)));
        results_->setItem(i, 3, new QTableWidgetItem(
                                    QString::fromStdString(formatBytes(c.result.memory.totalBytes())) +
                                    (c.fits ? "" : " (does not fit)")));
        results_->setItem(i, 4, new QTableWidgetItem(plan));
    }
    QStringList lines;
    lines << QString("%1 plans tried (%2), %3 fit in HBM.")
                 .arg(last_.evaluated)
                 .arg(last_.exhaustive ? "exhaustive" : "coordinate descent")
                 .arg(last_.fitting);
    for (const auto& l : last_.explanation)
        lines << QString::fromStdString(l);
    explanation_->setText(lines.join(" "));
}

void DlrmPanel::applyPlan(int row) {
    if (row < 0 || row >= int(last_.top.size())) return;
    const DlrmPlan& p = last_.top[std::size_t(row)].plan;
    apply({{"strategy.emb_sharding", planJson(searched_, p)},
           {"strategy.emb_group_size", p.groupSize},
           {"strategy.sparse_pipeline", p.pipelineSparse}},
          QString("plan #%1").arg(row + 1));
}

} // namespace madmax::ui
