#include "design_panels.hpp"

#include "charts/chart_factory.hpp"
#include "madmax/error.hpp"
#include "madmax/report.hpp"
#include "madmax/scenario_io.hpp"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLocale>
#include <QMetaObject>
#include <QSplitter>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <thread>

namespace madmax::ui {

// ---------------------------------------------------------------------------------------------
BackgroundJob::~BackgroundJob() {
    cancel_ = true;
    if (thread_ && thread_->joinable()) thread_->join();
}

void BackgroundJob::start(std::function<void(BackgroundJob&)> work) {
    if (running_) return;
    if (thread_ && thread_->joinable()) thread_->join();
    cancel_ = false;
    running_ = true;
    thread_ = std::make_unique<std::thread>([this, work = std::move(work)] {
        work(*this);
        const bool cancelled = cancel_.load();
        QMetaObject::invokeMethod(
            this,
            [this, cancelled] {
                running_ = false;
                emit finished(cancelled);
            },
            Qt::QueuedConnection);
    });
}

void BackgroundJob::report(double fraction) {
    QMetaObject::invokeMethod(
        this, [this, fraction] { emit progress(fraction); }, Qt::QueuedConnection);
}

void BackgroundJob::post(std::function<void()> fn) {
    QMetaObject::invokeMethod(this, std::move(fn), Qt::QueuedConnection);
}

namespace {
QProgressBar* makeBar() {
    auto* b = new QProgressBar;
    b->setRange(0, 1000);
    b->setValue(0);
    b->setTextVisible(true);
    return b;
}
QTableWidgetItem* numberItem(double v, int decimals) {
    auto* it = new QTableWidgetItem;
    it->setData(Qt::DisplayRole, QString::number(v, 'f', decimals).toDouble());
    return it;
}
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
    tpAcross_ = new QCheckBox("TP may span beyond the NVLink domain");
    gpuCounts_ = new QLineEdit;
    gpuCounts_->setPlaceholderText("GPU counts, e.g. 64,128,256");
    gpuCounts_->setToolTip(
        "Also sweep these GPU counts: the status then lists the front of throughput vs GPU count.");
    run_ = new QPushButton("Search");
    run_->setToolTip("Evaluate every valid strategy of the current scenario (model, system, GPU "
                     "count, workload).");
    stop_ = new QPushButton("Cancel");
    stop_->setEnabled(false);
    bar_ = makeBar();
    for (QWidget* w : {static_cast<QWidget*>(objective_), static_cast<QWidget*>(topN_),
                       static_cast<QWidget*>(tpAcross_), static_cast<QWidget*>(gpuCounts_),
                       static_cast<QWidget*>(run_), static_cast<QWidget*>(stop_)})
        controls->addWidget(w);
    controls->addWidget(bar_, 1);
    outer->addLayout(controls);
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
    }
    table_ = new QTableWidget;
    table_->setColumnCount(16);
    table_->setHorizontalHeaderLabels({"rank", "GPUs", "TP", "PP", "VP", "CP", "DP", "micro-batch",
                                       "ZeRO", "recompute", "SP", "TP overlap", "tokens/s/GPU",
                                       "MFU %", "step (s)", "memory (GB)"});
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
    connect(&job_, &BackgroundJob::progress, this,
            [this](double f) { bar_->setValue(int(f * 1000)); });
    connect(&job_, &BackgroundJob::finished, this, [this](bool cancelled) {
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
    SearchOptions opt;
    opt.objective = *parseObjective(objective_->currentData().toString().toStdString());
    opt.topN = topN_->value();
    opt.cancel = job_.cancelFlag();
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
    opt.baseline = base.strategy; // the scenario's own strategy is "what I run today"
    run_->setEnabled(false);
    stop_->setEnabled(true);
    bar_->setValue(0);
    status_->setText("Searching…");
    job_.start([this, base, space, opt](BackgroundJob& job) {
        // Shards run one after another, so partial rankings stream in as each completes.
        constexpr int kShards = 8;
        std::vector<SearchResult> parts;
        for (int i = 0; i < kShards; ++i) {
            if (job.cancelFlag()->load()) break;
            SearchOptions o = opt;
            o.shardIndex = i;
            o.shardCount = kShards;
            if (i > 0) o.baseline.reset();
            o.progress = [&job, i](std::size_t d, std::size_t t) {
                job.report((i + double(d) / double(std::max<std::size_t>(1, t))) / kShards);
            };
            try {
                parts.push_back(search(base, space, o));
            } catch (const std::exception&) {
                break; // an invalid baseline: keep what we have
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
    table_->setSortingEnabled(false);
    table_->setRowCount(int(rows_.size()));
    for (int i = 0; i < int(rows_.size()); ++i) {
        const Candidate& c = rows_[std::size_t(i)];
        const Strategy& s = c.strategy;
        auto* rank = numberItem(i + 1, 0);
        rank->setData(Qt::UserRole, i);
        table_->setItem(i, 0, rank);
        int col = 1;
        for (int v : {c.gpus, s.tp, s.pp, s.vp, s.cp, s.dp, s.microBatch, s.zeroStage})
            table_->setItem(i, col++, numberItem(v, 0));
        table_->setItem(
            i, col++,
            new QTableWidgetItem(QString::fromStdString(std::string(toString(s.recompute)))));
        table_->setItem(i, col++, new QTableWidgetItem(s.sequenceParallel ? "yes" : "no"));
        table_->setItem(i, col++, new QTableWidgetItem(s.tpCommOverlap ? "yes" : "no"));
        table_->setItem(i, col++, numberItem(c.tokensPerS / c.gpus, 1));
        table_->setItem(i, col++, numberItem(c.mfu * 100, 1));
        table_->setItem(i, col++, numberItem(c.stepTimeS, 3));
        table_->setItem(i, col++, numberItem(c.memoryBytes / 1e9, 1));
    }
    table_->setSortingEnabled(true);
    const auto& st = r.stats;
    QString text = QString("%1 configurations: %2 fit, %3 do not fit in memory (dropped), %4 "
                           "skipped by the bound; %5 configs/s.")
                       .arg(st.evaluated)
                       .arg(st.feasible)
                       .arg(st.infeasible)
                       .arg(st.pruned)
                       .arg(st.configsPerS, 0, 'f', 0);
    if (r.speedupOverBaseline)
        text += QString(" Best is %1× the scenario's own strategy.")
                    .arg(*r.speedupOverBaseline, 0, 'f', 2);
    if (!r.top.empty()) {
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
    if (!final) text = "Searching… " + text;
    status_->setText(text);
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
    const QString err = doc_->setFields({{"gpus", c.gpus}, {"strategy", toJson(c.strategy)}},
                                        "load strategy from the ranking");
    if (!err.isEmpty()) status_->setText(err);
}

// ---------------------------------------------------------------------------------------------
CoDesignPanel::CoDesignPanel(ScenarioDocument* doc, QWidget* parent) : QWidget(parent), doc_(doc) {
    auto* outer = new QVBoxLayout(this);
    auto* controls = new QHBoxLayout;
    sens_ = new QPushButton("Sensitivity (×0.5, ×2 of every knob)");
    sens_->setToolTip("Re-run the search with each hardware knob halved and doubled: which change "
                      "buys the most?");
    knobs_ = new QListWidget;
    knobs_->setMaximumHeight(90);
    for (const char* k : {"flops", "hbm_bw", "hbm_capacity", "scale_up_bw", "scale_out_bw",
                          "scale_up_latency", "scale_out_latency", "scale_up_domain"}) {
        auto* item = new QListWidgetItem(k, knobs_);
        item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
        item->setCheckState(QString(k).endsWith("_bw") ? Qt::Checked : Qt::Unchecked);
    }
    factors_ = new QLineEdit("0.25,0.5,1,2,4");
    factors_->setToolTip("Factors to scale each checked knob by (× the preset's value).");
    sweep_ = new QPushButton("Sweep checked knobs");
    stop_ = new QPushButton("Cancel");
    stop_->setEnabled(false);
    bar_ = makeBar();
    controls->addWidget(sens_);
    controls->addWidget(knobs_);
    controls->addWidget(factors_);
    controls->addWidget(sweep_);
    controls->addWidget(stop_);
    controls->addWidget(bar_, 1);
    outer->addLayout(controls);
    status_ = new QLabel(
        "Each point re-runs the full search, since the best strategy changes with the hardware.");
    status_->setWordWrap(true);
    outer->addWidget(status_);
    auto* charts = new QHBoxLayout;
    tornado_ = createChart("tornado").release();
    sweepChart_ = createChart("sweep").release();
    for (auto* c : {tornado_, sweepChart_}) {
        c->setParent(this);
        c->setMinimumSize(320, 260);
        charts->addWidget(c);
    }
    outer->addLayout(charts, 1);

    connect(sens_, &QPushButton::clicked, this, &CoDesignPanel::runSensitivity);
    connect(sweep_, &QPushButton::clicked, this, [this] {
        QStringList checked;
        for (int i = 0; i < knobs_->count(); ++i)
            if (knobs_->item(i)->checkState() == Qt::Checked) checked << knobs_->item(i)->text();
        runSweeps(checked, factors_->text());
    });
    connect(stop_, &QPushButton::clicked, this, [this] { job_.cancel(); });
    connect(&job_, &BackgroundJob::progress, this,
            [this](double f) { bar_->setValue(int(f * 1000)); });
    connect(&job_, &BackgroundJob::finished, this, [this](bool cancelled) {
        sens_->setEnabled(true);
        sweep_->setEnabled(true);
        stop_->setEnabled(false);
        status_->setText(cancelled ? "Cancelled." : "Done.");
        emit runFinished(cancelled);
    });
}

ExplorerChart* CoDesignPanel::chart(const QString& id) const {
    return id == "tornado" ? tornado_ : id == "sweep" ? sweepChart_ : nullptr;
}

void CoDesignPanel::setChartStyle(const ChartStyle& s) {
    tornado_->setChartStyle(s);
    sweepChart_->setChartStyle(s);
}

void CoDesignPanel::refreshCharts() {
    ChartInput in;
    in.sensitivity = &sensitivity_;
    in.sweeps = &sweeps_;
    tornado_->setInput(in);
    sweepChart_->setInput(in);
}

void CoDesignPanel::runSensitivity() {
    if (job_.running()) return;
    const Scenario base = doc_->scenario();
    sens_->setEnabled(false);
    sweep_->setEnabled(false);
    stop_->setEnabled(true);
    bar_->setValue(0);
    status_->setText("Running the search at ×0.5 and ×2 of every knob…");
    const std::vector<std::string> knobs = {
        "flops",        "hbm_bw",           "hbm_capacity",      "scale_up_bw",
        "scale_out_bw", "scale_up_latency", "scale_out_latency", "scale_up_domain"};
    job_.start([this, base, knobs](BackgroundJob& job) {
        std::vector<Sensitivity> acc;
        for (std::size_t i = 0; i < knobs.size() && !job.cancelFlag()->load(); ++i) {
            SearchOptions o;
            o.cancel = job.cancelFlag();
            auto one = madmax::sensitivity(base, {}, o, {knobs[i]});
            if (job.cancelFlag()->load()) break;
            acc.insert(acc.end(), one.begin(), one.end());
            auto sorted = acc;
            std::sort(sorted.begin(), sorted.end(), [](const Sensitivity& a, const Sensitivity& b) {
                const double ia = std::fabs(a.speedupDouble - 1) + std::fabs(1 - a.speedupHalf);
                const double ib = std::fabs(b.speedupDouble - 1) + std::fabs(1 - b.speedupHalf);
                return ia != ib ? ia > ib : a.knob < b.knob;
            });
            job.post([this, sorted] {
                sensitivity_ = sorted;
                refreshCharts();
            });
            job.report(double(i + 1) / knobs.size());
        }
    });
}

void CoDesignPanel::runSweeps(const QStringList& knobs, const QString& factors) {
    if (job_.running()) return;
    std::vector<KnobAxis> axes;
    try {
        for (const QString& k : knobs)
            axes.push_back(parseKnobAxis((k + "=" + factors).toStdString()));
        for (const auto& a : axes)
            scaleKnob(doc_->scenario(), a.knob, 1.0);
    } catch (const InputError& e) {
        status_->setText(QString::fromStdString(e.what()));
        return;
    }
    if (axes.empty()) {
        status_->setText("Check at least one knob to sweep.");
        return;
    }
    const Scenario base = doc_->scenario();
    sweeps_.clear();
    refreshCharts();
    sens_->setEnabled(false);
    sweep_->setEnabled(false);
    stop_->setEnabled(true);
    bar_->setValue(0);
    status_->setText("Sweeping…");
    job_.start([this, base, axes](BackgroundJob& job) {
        for (std::size_t i = 0; i < axes.size() && !job.cancelFlag()->load(); ++i) {
            SearchOptions o;
            o.cancel = job.cancelFlag();
            SweepResult r = madmax::sweep(base, {axes[i]}, {}, o);
            if (job.cancelFlag()->load()) break;
            job.post([this, r = std::move(r)] {
                sweeps_.push_back(r);
                refreshCharts();
            });
            job.report(double(i + 1) / axes.size());
        }
    });
}

} // namespace madmax::ui
