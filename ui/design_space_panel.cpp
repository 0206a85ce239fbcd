#include "design_space_panel.hpp"

#include "panel_widgets.hpp"

#include "charts/chart_factory.hpp"
#include "madmax/error.hpp"
#include "madmax/report.hpp"
#include "madmax/scenario_io.hpp"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLocale>
#include <QSplitter>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>


namespace madmax::ui {

namespace {
const QStringList kTrainingColumns = {"rank", "GPUs", "TP", "PP", "VP", "CP", "DP", "micro-batch",
                                      "ZeRO", "recompute", "SP", "TP overlap", "tokens/s/GPU",
                                      "MFU %", "step (s)", "memory (GB)"};
} // namespace

// ---------------------------------------------------------------------------------------------
DesignSpacePanel::DesignSpacePanel(ScenarioDocument* doc, QWidget* parent)
    : QWidget(parent), doc_(doc) {
    auto* outer = new QVBoxLayout(this);
    auto* controls = new QHBoxLayout;
    objective_ = new QComboBox;
    objective_->addItem("Throughput", "throughput");
    objective_->addItem("Time to train 1T tokens", "time");
    objective_->addItem("Cost to train 1T tokens", "cost");
    objective_->setToolTip("What the ranking maximises. With a fixed GPU count all three agree; "
                           "they differ when GPU counts are swept.");
    topN_ = new QSpinBox;
    topN_->setRange(1, 10000);
    topN_->setValue(100);
    topN_->setPrefix("top ");
    tpAcross_ = new QCheckBox("TP beyond NVLink");
    tpAcross_->setToolTip("Let TP groups span beyond the NVLink (scale-up) domain.");
    gpuCounts_ = new QLineEdit;
    gpuCounts_->setPlaceholderText("GPU counts, e.g. 64,128,256");
    gpuCounts_->setToolTip(
        "Also sweep these GPU counts: the status then lists the front of throughput vs GPU count.");
    run_ = new QPushButton("Search");
    run_->setToolTip("Evaluate every valid strategy of the current scenario (model, system, GPU "
                     "count, workload).");
    stop_ = new QPushButton("Cancel");
    stop_->setEnabled(false);
    bar_ = makeProgressBar();
    // Two rows, so the view fits a 1280-pixel-wide window beside the editors.
    for (QWidget* w : {static_cast<QWidget*>(objective_), static_cast<QWidget*>(topN_),
                       static_cast<QWidget*>(tpAcross_), static_cast<QWidget*>(gpuCounts_)})
        controls->addWidget(w);
    auto* actions = new QHBoxLayout;
    actions->addWidget(run_);
    actions->addWidget(stop_);
    actions->addWidget(bar_, 1);
    outer->addLayout(controls);
    outer->addLayout(actions);
    status_ = new QLabel("Press Search to rank every strategy for the current scenario.");
    status_->setWordWrap(true);
    outer->addWidget(status_);

    auto* split = new QSplitter(Qt::Vertical);
    auto* charts = new QWidget;
    auto* ch = new QHBoxLayout(charts);
    heatmap_ = createChart("heatmap").release();
    scatter_ = createChart("scatter").release();
    for (auto* c : {heatmap_, scatter_}) {
        c->setParent(charts);
        c->setMinimumSize(320, 260);
        ch->addWidget(c);
        c->setInput({}); // the empty state ("Run a search …"), not empty axes, before a run
    }
    table_ = new QTableWidget;
    table_->setColumnCount(int(kTrainingColumns.size()));
    table_->setHorizontalHeaderLabels(kTrainingColumns);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSortingEnabled(true);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->setToolTip("Double-click a row to load that strategy into the sliders.");
    split->addWidget(charts);
    split->addWidget(table_);
    outer->addWidget(split, 1);

    connect(run_, &QPushButton::clicked, this, &DesignSpacePanel::runSearch);
    connect(stop_, &QPushButton::clicked, this, [this] { job_.cancel(); });
    connect(&job_, &JobTracker::progress, this,
            [this](double f) { bar_->setValue(int(f * 1000)); });
    connect(&job_, &JobTracker::finished, this, [this](bool cancelled) {
        run_->setEnabled(true);
        stop_->setEnabled(false);
        if (cancelled) status_->setText(status_->text() + "  (cancelled)");
        emit searchFinished(cancelled);
    });
    connect(table_, &QTableWidget::cellDoubleClicked, this, [this](int row, int) { loadRow(row); });
}

ExplorerChart* DesignSpacePanel::chart(const QString& id) const {
    return id == "heatmap" ? heatmap_ : id == "scatter" ? scatter_ : nullptr;
}

void DesignSpacePanel::setChartStyle(const ChartStyle& s) {
    heatmap_->setChartStyle(s);
    scatter_->setChartStyle(s);
}

void DesignSpacePanel::runSearch() {
    if (job_.running()) return;
    const Scenario base = doc_->scenario();
    if (base.model.isDlrm()) {
        status_->setText("A DLRM's strategy is its embedding sharding plan: use \"Search "
                         "sharding plans\" in the Embeddings (DLRM) panel. Co-design sweeps "
                         "re-run that plan search at every point.");
        emit searchFinished(false);
        return;
    }
    SearchOptions opt;
    opt.objective = *parseObjective(objective_->currentData().toString().toStdString());
    if (auto why = explainObjective(base, opt.objective)) {
        status_->setText(QString::fromStdString(*why) + ": choose Throughput.");
        emit searchFinished(false);
        return;
    }
    opt.topN = topN_->value();
    SearchSpace space;
    space.allowTpAcrossScaleUp = tpAcross_->isChecked();
    if (!gpuCounts_->text().trimmed().isEmpty()) {
        try {
            parseRestriction("gpus=" + gpuCounts_->text().remove(' ').toStdString(), space);
        } catch (const std::exception& e) {
            status_->setText(QString::fromStdString(e.what()));
            return;
        }
    }
    if (auto why = explainSearchSpace(base, space)) {
        status_->setText(QString::fromStdString("GPU counts: " + *why));
        return;
    }
    opt.baseline = base.strategy; // the scenario's own strategy is "what I run today"
    run_->setEnabled(false);
    stop_->setEnabled(true);
    bar_->setValue(0);
    status_->setText("Searching…");
    job_.start([this, base, space, opt](const JobContext& job) {
        // Shards run one after another, so partial rankings stream in as each completes.
        constexpr int kShards = 8;
        std::vector<SearchResult> parts;
        for (int i = 0; i < kShards; ++i) {
            if (job.cancelFlag()->load()) break;
            SearchOptions o = opt;
            o.cancel = job.cancelFlag(); // this job's own flag, alive as long as the job
            o.shardIndex = i;
            o.shardCount = kShards;
            if (i > 0) o.baseline.reset();
            o.progress = [&job, i](std::size_t d, std::size_t t) {
                job.report((i + double(d) / double(std::max<std::size_t>(1, t))) / kShards);
            };
            try {
                parts.push_back(search(base, space, o));
            } catch (const std::exception& e) {
                // Keep what the finished shards found, and say why the rest did not run.
                const QString why = QString::fromStdString(e.what());
                job.post([this, why] { status_->setText("The search stopped: " + why); });
                break;
            }
            SearchResult merged = mergeResults(parts, opt.topN);
            merged.objective = opt.objective;
            merged.tokenBudget = opt.tokenBudget;
            const bool final = i == kShards - 1;
            job.post([this, merged = std::move(merged), final] { show(merged, final); });
            job.report(double(i + 1) / kShards);
        }
    });
}

void DesignSpacePanel::show(const SearchResult& r, bool final) {
    result_ = r;
    hasResult_ = true;
    ChartInput in;
    in.search = &result_;
    heatmap_->setInput(in);
    scatter_->setInput(in);
    rows_ = r.top;
    // Serving: the columns a serving configuration has (no ZeRO, recompute or MFU).
    const bool serving = doc_->scenario().workload.kind == WorkloadKind::Inference;
    // MoE models: where the experts sit (EP, and ETP in training) gets its own columns.
    const bool moe = doc_->scenario().model.isMoe();
    table_->setSortingEnabled(false);
    table_->setRowCount(int(rows_.size()));
    if (serving)
        fillServingRows(moe);
    else
        fillTrainingRows(moe);
    table_->setSortingEnabled(true);
    QString text = statusText(r, serving);
    if (!final) text = "Searching… " + text;
    status_->setText(text);
}

void DesignSpacePanel::fillServingRows(bool moe) {
    QStringList headers = {"rank", "GPUs", "TP", "PP", "replicas"};
    if (moe) headers << "EP";
    headers << "precision"
            << "batch"
            << "output tokens/s/GPU"
            << "TPOT (ms)"
            << "memory (GB)";
    table_->setColumnCount(int(headers.size()));
    table_->setHorizontalHeaderLabels(headers);
    for (int i = 0; i < int(rows_.size()); ++i) {
        const Candidate& c = rows_[std::size_t(i)];
        auto* rank = numberItem(i + 1, 0);
        rank->setData(Qt::UserRole, i);
        table_->setItem(i, 0, rank);
        int col = 1;
        for (int v : {c.gpus, c.strategy.tp, c.strategy.pp, c.strategy.dp})
            table_->setItem(i, col++, numberItem(v, 0));
        if (moe) table_->setItem(i, col++, numberItem(c.strategy.ep, 0));
        // What the serving search chose besides the degrees (loadRow applies them too).
        table_->setItem(i, col++,
                        new QTableWidgetItem(
                            QString::fromStdString(std::string(toString(c.servingPrecision)))));
        table_->setItem(i, col++, numberItem(c.servingBatch, 0));
        table_->setItem(i, col++, numberItem(c.tokensPerS / c.gpus, 1));
        table_->setItem(i, col++, numberItem(c.stepTimeS * 1e3, 2));
        table_->setItem(i, col++, numberItem(c.memoryBytes / 1e9, 1));
    }
}

void DesignSpacePanel::fillTrainingRows(bool moe) {
    QStringList headers = kTrainingColumns;
    if (moe) {
        const qsizetype at = headers.indexOf("DP") + 1;
        headers.insert(at, "ETP");
        headers.insert(at, "EP");
    }
    table_->setColumnCount(int(headers.size()));
    table_->setHorizontalHeaderLabels(headers);
    for (int i = 0; i < int(rows_.size()); ++i) {
        const Candidate& c = rows_[std::size_t(i)];
        const Strategy& s = c.strategy;
        auto* rank = numberItem(i + 1, 0);
        rank->setData(Qt::UserRole, i);
        table_->setItem(i, 0, rank);
        int col = 1;
        for (int v : {c.gpus, s.tp, s.pp, s.vp, s.cp, s.dp})
            table_->setItem(i, col++, numberItem(v, 0));
        if (moe)
            for (int v : {s.ep, s.etp})
                table_->setItem(i, col++, numberItem(v, 0));
        for (int v : {s.microBatch, s.zeroStage})
            table_->setItem(i, col++, numberItem(v, 0));
        table_->setItem(
            i, col++,
            new QTableWidgetItem(QString::fromStdString(
                s.recompute == Recompute::Full && s.recomputeLayers > 0
                    ? "full (" + std::to_string(s.recomputeLayers) + "/chunk)"
                    : std::string(toString(s.recompute)))));
        table_->setItem(i, col++, new QTableWidgetItem(s.sequenceParallel ? "yes" : "no"));
        table_->setItem(i, col++, new QTableWidgetItem(s.tpCommOverlap ? "yes" : "no"));
        table_->setItem(i, col++, numberItem(c.tokensPerS / c.gpus, 1));
        table_->setItem(i, col++, numberItem(c.mfu * 100, 1));
        table_->setItem(i, col++, numberItem(c.stepTimeS, 3));
        table_->setItem(i, col++, numberItem(c.memoryBytes / 1e9, 1));
    }
}

/// What the search did (counts and rates), how the best compares with the scenario's own
/// strategy, what it costs to serve or train, and the throughput-vs-GPUs front.
QString DesignSpacePanel::statusText(const SearchResult& r, bool serving) const {
    const auto& st = r.stats;
    QString text = QString("%1 configurations: %2 fit, %3 do not fit in memory (dropped), %4 "
                           "skipped by the bound; %5 enumerated/s, %6 timed in full/s.")
                       .arg(st.enumerated)
                       .arg(st.feasible)
                       .arg(st.infeasible)
                       .arg(st.pruned)
                       .arg(st.enumeratedPerS, 0, 'f', 0)
                       .arg(st.timedPerS, 0, 'f', 0);
    if (r.speedupOverBaseline)
        text += QString(" Best is %1× the scenario's own strategy.")
                    .arg(*r.speedupOverBaseline, 0, 'f', 2);
    if (!r.top.empty() && serving) {
        const double perGpu = r.top.front().tokensPerS / r.top.front().gpus;
        const double price = doc_->scenario().system.pricePerGpuHour;
        text += QString(" Best serves %1 output tokens/s per GPU").arg(perGpu, 0, 'f', 0);
        if (price > 0 && perGpu > 0)
            text += QString(": $%1 per million output tokens at $%2/GPU-hour")
                        .arg(price / (perGpu * 3600) * 1e6, 0, 'f', 3)
                        .arg(price, 0, 'f', 2);
        text += ".";
    } else if (!r.top.empty()) {
        const auto cost = trainingCost(doc_->scenario().system, r.top.front().gpus,
                                       r.top.front().tokensPerS, 1e12);
        const QLocale loc;
        text += QString(" Best trains 1T tokens in %1 days: %2 GPU-hours, $%3 at $%4/GPU-hour, %5 "
                        "MWh of GPU energy.")
                    .arg(cost.seconds / 86400, 0, 'f', 1)
                    .arg(loc.toString(cost.gpuHours, 'f', 0))
                    .arg(loc.toString(cost.dollars, 'f', 0))
                    .arg(doc_->scenario().system.pricePerGpuHour, 0, 'f', 2)
                    .arg(cost.energyKWh / 1000, 0, 'f', 0);
    }
    if (r.paretoGpus.size() > 1) {
        QStringList front;
        for (const auto& c : r.paretoGpus)
            front << QString("%1 GPUs: %2 tok/s").arg(c.gpus).arg(c.tokensPerS, 0, 'f', 0);
        text += " Throughput vs GPU count (front): " + front.join(", ") + ".";
    }
    return text;
}

QString DesignSpacePanel::setGpuCounts(const QString& text) {
    gpuCounts_->setText(text);
    return {};
}

void DesignSpacePanel::loadRow(int row) {
    QTableWidgetItem* it = table_->item(row, 0);
    if (!it) return;
    const int idx = it->data(Qt::UserRole).toInt();
    if (idx < 0 || idx >= int(rows_.size())) return;
    const Candidate& c = rows_[std::size_t(idx)];
    std::vector<std::pair<std::string, nlohmann::json>> edits = {{"gpus", c.gpus},
                                                                 {"strategy", toJson(c.strategy)}};
    if (c.servingBatch > 0) {
        // A serving row is also a precision: weights and activations in it, the KV cache too
        // (FP8 under FP4), as the serving search ran it. The batch follows from the scenario's
        // own batch setting, as it did in the search.
        const std::string p(toString(c.servingPrecision));
        edits.push_back({"workload.precision", p});
        edits.push_back({"workload.weight_precision", p});
        edits.push_back(
            {"workload.kv_precision", bytesPerElement(c.servingPrecision) < 1 ? "fp8" : p});
    }
    const QString err = doc_->setFields(edits, "load strategy from the ranking");
    if (!err.isEmpty()) status_->setText(err);
}

} // namespace madmax::ui
