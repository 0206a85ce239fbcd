#include "codesign_panel.hpp"

#include "panel_widgets.hpp"

#include "charts/chart_factory.hpp"
#include "madmax/codesign.hpp"
#include "madmax/error.hpp"
#include "madmax/report.hpp"
#include "madmax/presets.hpp"
#include "madmax/scenario_io.hpp"

#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLocale>
#include <QSplitter>
#include <QTabWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>


namespace madmax::ui {

// ---------------------------------------------------------------------------------------------
CoDesignPanel::CoDesignPanel(ScenarioDocument* doc, QWidget* parent) : QWidget(parent), doc_(doc) {
    auto* outer = new QVBoxLayout(this);
    outer->addLayout(sensitivityControls());
    outer->addLayout(paretoControls());
    status_ = new QLabel(
        "Each point re-runs the full search, since the best strategy changes with the hardware.");
    status_->setWordWrap(true);
    outer->addWidget(status_);
    outer->addLayout(chartGrid(), 1);
    refreshCharts(); // each chart's empty state (what to run), not empty axes, before a run
    connectActions();
}

/// Sensitivity and knob sweeps: the knobs, the factors, run, cancel and progress.
QLayout* CoDesignPanel::sensitivityControls() {
    auto* controls = new QHBoxLayout;
    sens_ = new QPushButton("Sensitivity (×0.5, ×2)");
    sens_->setToolTip("Re-run the search with each hardware knob halved and doubled: which change "
                      "buys the most?");
    knobs_ = new QListWidget;
    knobs_->setMaximumHeight(90);
    for (const std::string& name : sensitivityKnobs()) {
        const QString k = QString::fromStdString(name);
        auto* item = new QListWidgetItem(k, knobs_);
        item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
        item->setCheckState(k.endsWith("_bw") ? Qt::Checked : Qt::Unchecked);
    }
    factors_ = new QLineEdit("0.25,0.5,1,2,4");
    factors_->setToolTip("Factors to scale each checked knob by (× the preset's value).");
    sweep_ = new QPushButton("Sweep checked knobs");
    stop_ = new QPushButton("Cancel");
    stop_->setEnabled(false);
    bar_ = makeProgressBar();
    controls->addWidget(sens_);
    controls->addWidget(knobs_);
    controls->addWidget(factors_);
    controls->addWidget(sweep_);
    controls->addWidget(stop_);
    controls->addWidget(bar_, 1);
    return controls;
}

/// Resource vs performance (MAD-Max Figure 1): systems × GPU counts, each searched.
QLayout* CoDesignPanel::paretoControls() {
    auto* pcontrols = new QHBoxLayout;
    systems_ = new QListWidget;
    systems_->setMaximumHeight(90);
    systems_->setToolTip("Systems to compare: each at every GPU count, with the best strategy "
                         "the search finds there.");
    {
        auto* own = new QListWidgetItem("scenario", systems_);
        own->setToolTip("The scenario's own system");
        own->setFlags(own->flags() | Qt::ItemIsUserCheckable);
        own->setCheckState(Qt::Checked);
        for (const auto& id : PresetLibrary::builtin().ids(PresetKind::System)) {
            auto* item = new QListWidgetItem(QString::fromStdString(id), systems_);
            item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
            item->setCheckState(Qt::Unchecked);
        }
    }
    gpus_ = new QLineEdit;
    gpus_->setPlaceholderText("GPU counts (default ×1/8 … ×4)");
    gpus_->setToolTip("Comma-separated GPU counts, e.g. 64,128,256,512; empty: the scenario's "
                      "count × 1/8, 1/4, 1/2, 1, 2, 4.");
    paretoRun_ = new QPushButton("Resource vs performance");
    paretoRun_->setToolTip("MAD-Max Figure 1: throughput against GPUs and against dollars per "
                           "hour, with the Pareto fronts.");
    cloudRun_ = new QPushButton("Cloud table");
    cloudRun_->setToolTip("The MAD-Max artifact's DLRM-A training table: each cloud's GPUs, "
                          "re-run with the reference engine, as cost against energy.");
    pcontrols->addWidget(new QLabel("Systems"));
    pcontrols->addWidget(systems_, 1);
    pcontrols->addWidget(gpus_, 1);
    pcontrols->addWidget(paretoRun_);
    pcontrols->addWidget(cloudRun_);
    return pcontrols;
}

/// The tornado, the sweep lines and the two Pareto charts, two by two; the dollar chart shares
/// its place with the artifact's cloud table (a tab each), so the window stays 1280 wide.
QLayout* CoDesignPanel::chartGrid() {
    auto* charts = new QGridLayout;
    tornado_ = createChart("tornado").release();
    sweepChart_ = createChart("sweep").release();
    paretoChart_ = createChart("pareto").release();
    paretoCostChart_ = createChart("pareto_cost").release();
    cloudChart_ = createChart("cloud").release();
    for (auto* c : {tornado_, sweepChart_, paretoChart_, paretoCostChart_, cloudChart_}) {
        c->setParent(this);
        c->setMinimumSize(320, 200); // (the tab bar's height taken from the charts' minimum)
    }
    charts->addWidget(tornado_, 0, 0);
    charts->addWidget(sweepChart_, 0, 1);
    charts->addWidget(paretoChart_, 1, 0);
    costTabs_ = new QTabWidget(this);
    costTabs_->setDocumentMode(true);
    costTabs_->addTab(paretoCostChart_, "Throughput vs $/hour");
    costTabs_->addTab(cloudChart_, "Cloud table");
    charts->addWidget(costTabs_, 1, 1);
    return charts;
}

void CoDesignPanel::connectActions() {
    connect(paretoRun_, &QPushButton::clicked, this, [this] {
        QStringList checked;
        for (int i = 0; i < systems_->count(); ++i)
            if (systems_->item(i)->checkState() == Qt::Checked) checked << systems_->item(i)->text();
        runPareto(checked, gpus_->text());
    });

    connect(cloudRun_, &QPushButton::clicked, this, &CoDesignPanel::runCloudTable);
    connect(sens_, &QPushButton::clicked, this, &CoDesignPanel::runSensitivity);
    connect(sweep_, &QPushButton::clicked, this, [this] {
        QStringList checked;
        for (int i = 0; i < knobs_->count(); ++i)
            if (knobs_->item(i)->checkState() == Qt::Checked) checked << knobs_->item(i)->text();
        runSweeps(checked, factors_->text());
    });
    connect(stop_, &QPushButton::clicked, this, [this] { job_.cancel(); });
    connect(&job_, &JobTracker::progress, this,
            [this](double f) { bar_->setValue(int(f * 1000)); });
    connect(&job_, &JobTracker::finished, this, [this](bool cancelled) {
        for (QPushButton* b : {sens_, sweep_, paretoRun_, cloudRun_})
            b->setEnabled(true);
        stop_->setEnabled(false);
        if (cancelled) status_->setText("Cancelled.");
        else if (!summarised_) status_->setText("Done.");
        emit runFinished(cancelled);
    });
}

ExplorerChart* CoDesignPanel::chart(const QString& id) const {
    return id == "tornado"       ? tornado_
           : id == "sweep"       ? sweepChart_
           : id == "pareto"      ? paretoChart_
           : id == "pareto_cost" ? paretoCostChart_
           : id == "cloud"       ? cloudChart_
                                 : nullptr;
}

void CoDesignPanel::setChartStyle(const ChartStyle& s) {
    for (auto* c : {tornado_, sweepChart_, paretoChart_, paretoCostChart_, cloudChart_})
        c->setChartStyle(s);
}

void CoDesignPanel::refreshCharts() {
    ChartInput in;
    in.sensitivity = &sensitivity_;
    in.sweeps = &sweeps_;
    in.pareto = &pareto_;
    in.cloud = &cloud_;
    for (auto* c : {tornado_, sweepChart_, paretoChart_, paretoCostChart_, cloudChart_})
        c->setInput(in);
}

void CoDesignPanel::setBusy(const QString& status) {
    for (QPushButton* b : {sens_, sweep_, paretoRun_, cloudRun_}) // one run at a time
        b->setEnabled(false);
    stop_->setEnabled(true);
    bar_->setValue(0);
    summarised_ = false;
    status_->setText(status);
}

void CoDesignPanel::runSensitivity() {
    if (job_.running()) return;
    const Scenario base = doc_->scenario();
    setBusy("Running the search at ×0.5 and ×2 of every knob…");
    const std::vector<std::string> knobs = sensitivityKnobs(base.system);
    job_.start([this, base, knobs](const JobContext& job) {
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
    setBusy("Sweeping…");
    job_.start([this, base, axes](const JobContext& job) {
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

void CoDesignPanel::runPareto(const QStringList& systems, const QString& gpus) {
    if (job_.running()) return;
    std::vector<ResourceSystem> sys;
    std::vector<int> counts;
    try {
        for (const QString& id : systems)
            sys.push_back(id == "scenario" ? ResourceSystem{"scenario", doc_->scenario().system}
                                           : loadResourceSystem(id.toStdString()));
        for (const QString& part : gpus.split(',', Qt::SkipEmptyParts)) {
            bool ok = false;
            const int g = part.trimmed().toInt(&ok);
            if (!ok || g < 1)
                throw InputError("GPU counts", part.trimmed().toStdString(),
                                 "expected whole numbers of at least 1, comma-separated");
            counts.push_back(g);
        }
    } catch (const InputError& e) {
        status_->setText(QString::fromStdString(e.what()));
        return;
    }
    if (sys.empty()) {
        status_->setText("Check at least one system to compare.");
        return;
    }
    const Scenario base = doc_->scenario();
    pareto_ = {};
    refreshCharts();
    setBusy("Searching every system at every GPU count…");
    job_.start([this, base, sys, counts](const JobContext& job) {
        SearchOptions o;
        o.cancel = job.cancelFlag();
        o.progress = [&job](std::size_t d, std::size_t t) { job.report(double(d) / t); };
        ResourcePareto r;
        QString err;
        try {
            r = resourcePareto(base, sys, counts, {}, o);
        } catch (const InputError& e) {
            err = QString::fromStdString(e.what());
        }
        if (job.cancelFlag()->load()) return;
        job.post([this, r = std::move(r), err] {
            pareto_ = r;
            refreshCharts();
            costTabs_->setCurrentWidget(paretoCostChart_);
            summarised_ = true; // the status below, not "Done.", ends the run
            int front = 0;
            for (const auto& p : pareto_.points)
                front += p.frontGpus;
            status_->setText(
                err.isEmpty()
                    ? QString("Resource vs performance: %1 points, %2 on the GPU front%3.")
                          .arg(pareto_.points.size())
                          .arg(front)
                          .arg(pareto_.priced ? "" : "; a system states no price, so no "
                                                     "dollar axis")
                    : err);
        });
    });
}

void CoDesignPanel::runCloudTable() {
    if (job_.running()) return;
    setBusy("Re-running the artifact's DLRM-A cloud table with the reference engine…");
    job_.start([this](const JobContext& job) {
        std::vector<seed::CloudTableRow> rows;
        QString err;
        try {
            rows = seed::reproduceCloudTable();
        } catch (const InputError& e) {
            err = QString::fromStdString(e.what());
        }
        if (job.cancelFlag()->load()) return;
        job.post([this, rows = std::move(rows), err] {
            cloud_ = rows;
            refreshCharts();
            if (!cloud_.empty()) costTabs_->setCurrentWidget(cloudChart_);
            summarised_ = true;
            status_->setText(err.isEmpty()
                                 ? QString("Cloud table: %1 rows of the artifact's sheet, re-run "
                                           "with the reference engine.")
                                       .arg(cloud_.size())
                                 : err);
        });
    });
}

} // namespace madmax::ui
