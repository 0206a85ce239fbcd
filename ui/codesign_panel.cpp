#include "codesign_panel.hpp"

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

// ---------------------------------------------------------------------------------------------
CoDesignPanel::CoDesignPanel(ScenarioDocument* doc, QWidget* parent) : QWidget(parent), doc_(doc) {
    auto* outer = new QVBoxLayout(this);
    auto* controls = new QHBoxLayout;
    sens_ = new QPushButton("Sensitivity (×0.5, ×2)");
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
    bar_ = makeProgressBar();
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
    connect(&job_, &JobTracker::progress, this,
            [this](double f) { bar_->setValue(int(f * 1000)); });
    connect(&job_, &JobTracker::finished, this, [this](bool cancelled) {
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
    sens_->setEnabled(false);
    sweep_->setEnabled(false);
    stop_->setEnabled(true);
    bar_->setValue(0);
    status_->setText("Sweeping…");
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

} // namespace madmax::ui
