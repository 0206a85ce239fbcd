#include "calibrate_dialog.hpp"

#include "madmax/error.hpp"
#include "madmax/file_io.hpp"
#include "madmax/scenario_io.hpp"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChartView>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QValueAxis>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace madmax::ui {

CalibrateDialog::CalibrateDialog(PresetStore* store, QWidget* parent)
    : QDialog(parent), store_(store) {
    setWindowTitle("Calibrate from Measurements");
    auto* outer = new QVBoxLayout(this);
    auto* form = new QFormLayout;
    addPresetRows(form);
    addMeasurementRows(form);
    id_ = new QLineEdit("h100-sxm5-80gb-calibrated");
    id_->setToolTip("The new preset's id: never a shipped preset's.");
    form->addRow("New preset id", id_);
    outer->addLayout(form);
    addResultArea(outer);
    resize(820, 720);
}

void CalibrateDialog::addPresetRows(QFormLayout* form) {
    gpu_ = new QComboBox;
    system_ = new QComboBox;
    for (const auto& id : store_->library().ids(PresetKind::Gpu))
        gpu_->addItem(QString::fromStdString(id));
    for (const auto& id : store_->library().ids(PresetKind::System))
        system_->addItem(QString::fromStdString(id));
    gpu_->setCurrentText("h100-sxm5-80gb");
    gpu_->setToolTip("The GPU preset the fit starts from.");
    system_->setToolTip("The system whose tiers (GPUs per node, link bandwidths) the "
                        "measurements ran on.");
    // Picking a GPU picks its system and, unless the user named it, the new preset's id.
    connect(gpu_, &QComboBox::currentTextChanged, this, [this](const QString& g) {
        for (const Preset* p : store_->library().list(PresetKind::System))
            if (p->json.value("gpu", "") == g.toStdString()) {
                system_->setCurrentText(QString::fromStdString(p->id));
                break;
            }
        if (id_->text().isEmpty() || id_->text().endsWith("-calibrated")) id_->setText(g + "-calibrated");
    });
    form->addRow("Start from GPU", gpu_);
    form->addRow("On system", system_);
}

QListWidget* CalibrateDialog::addFileList(QFormLayout* form, const QString& label,
                                          const QString& tip, const QString& caption,
                                          const QString& filter, int height) {
    auto* list = new QListWidget;
    list->setToolTip(tip);
    list->setMaximumHeight(height);
    auto* row = new QHBoxLayout;
    row->addWidget(list, 1);
    auto* add = new QPushButton("Add…");
    auto* clear = new QPushButton("Clear");
    auto* buttons = new QVBoxLayout;
    buttons->addWidget(add);
    buttons->addWidget(clear);
    buttons->addStretch(1);
    row->addLayout(buttons);
    form->addRow(label, row);
    connect(add, &QPushButton::clicked, this, [this, list, caption, filter] {
        for (const QString& f : QFileDialog::getOpenFileNames(this, caption, {}, filter))
            list->addItem(f);
    });
    connect(clear, &QPushButton::clicked, list, &QListWidget::clear);
    return list;
}

void CalibrateDialog::addMeasurementRows(QFormLayout* form) {
    nccl_ = addFileList(form, "nccl-tests files",
                        "nccl-tests output files (all_reduce_perf, all_gather_perf, "
                        "reduce_scatter_perf, alltoall_perf) with their header.",
                        "nccl-tests output", {}, 90);
    kineto_ = addFileList(form, "Profiler traces",
                          "PyTorch profiler traces (torch.profiler with record_shapes=True, "
                          "export_chrome_trace): each GEMM's kernel time fits the 16-bit GEMM "
                          "efficiency curve, point by point.",
                          "PyTorch profiler traces", "JSON (*.json)", 70);
    steps_ = new QLineEdit;
    steps_->setPlaceholderText("optional: measured step times, madmax-validation/1 JSON");
    auto* browse = new QPushButton("Browse…");
    auto* stepsRow = new QHBoxLayout;
    stepsRow->addWidget(steps_, 1);
    stepsRow->addWidget(browse);
    form->addRow("Step times", stepsRow);
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString f = QFileDialog::getOpenFileName(this, "Measured step times", {}, "JSON (*.json)");
        if (!f.isEmpty()) steps_->setText(f);
    });
}

void CalibrateDialog::addResultArea(QVBoxLayout* outer) {
    auto* fit = new QPushButton("Fit");
    outer->addWidget(fit);
    chart_ = new QChartView;
    chart_->setMinimumHeight(220);
    chart_->setRenderHint(QPainter::Antialiasing);
    outer->addWidget(chart_, 1);
    report_ = new QPlainTextEdit;
    report_->setReadOnly(true);
    report_->setMinimumHeight(160);
    outer->addWidget(report_, 1);
    auto* box = new QDialogButtonBox;
    save_ = box->addButton("Save as User Preset", QDialogButtonBox::AcceptRole);
    save_->setEnabled(false);
    box->addButton(QDialogButtonBox::Close);
    outer->addWidget(box);
    connect(fit, &QPushButton::clicked, this, [this] { run(); });
    connect(save_, &QPushButton::clicked, this, [this] {
        const QString err = save();
        report_->appendPlainText(err.isEmpty() ? "\nSaved as a user GPU preset: " + id_->text()
                                               : "\nNot saved: " + err);
    });
    connect(box, &QDialogButtonBox::rejected, this, &QDialog::reject);
}

void CalibrateDialog::setInputs(const QString& gpu, const QString& system,
                                const QStringList& ncclFiles, const QString& stepsFile,
                                const QString& newId, const QStringList& kinetoFiles) {
    gpu_->setCurrentText(gpu);
    system_->setCurrentText(system);
    nccl_->clear();
    nccl_->addItems(ncclFiles);
    kineto_->clear();
    kineto_->addItems(kinetoFiles);
    steps_->setText(stepsFile);
    id_->setText(newId);
}

QString CalibrateDialog::run() {
    result_.reset();
    save_->setEnabled(false);
    try {
        const auto& lib = store_->library();
        nlohmann::json sysDoc = {{"system", system_->currentText().toStdString()}};
        resolvePresetRefs(sysDoc, lib, "system");
        const System sys = parseSystem(sysDoc["system"], system_->currentText().toStdString(), "system");
        CalibrationInputs in;
        for (int i = 0; i < nccl_->count(); ++i) {
            const std::string f = nccl_->item(i)->text().toStdString();
            in.nccl.push_back(parseNcclTests(readTextFile(f), f));
        }
        for (int i = 0; i < kineto_->count(); ++i) {
            const std::string f = kineto_->item(i)->text().toStdString();
            in.kineto.push_back(parseKinetoTrace(readJsonFile(f), f));
        }
        if (!steps_->text().trimmed().isEmpty()) {
            in.stepsFile = steps_->text().trimmed().toStdString();
            in.steps = readJsonFile(in.stepsFile);
        }
        result_ = calibrate(gpu_->currentText().toStdString(), sys, in,
                            id_->text().trimmed().toStdString(), lib);
    } catch (const std::exception& e) {
        report_->setPlainText(QString("Cannot calibrate: ") + e.what());
        showChart();
        return report_->toPlainText();
    }
    report_->setPlainText(QString::fromStdString(formatCalibration(*result_)));
    save_->setEnabled(true);
    showChart();
    return report_->toPlainText();
}

QString CalibrateDialog::save() {
    if (!result_) return "nothing fitted yet";
    return store_->save(PresetKind::Gpu, result_->preset.value("id", std::string()), result_->preset);
}

int CalibrateDialog::chartBarCount() const { return result_ ? int(result_->residuals.size()) : 0; }

void CalibrateDialog::showChart() {
    auto* chart = new QChart;
    chart->setTitle("Error against each measurement, before and after the fit (%)");
    if (result_ && !result_->residuals.empty()) {
        auto* before = new QBarSet("before");
        auto* after = new QBarSet("after");
        QStringList names;
        double lo = 0, hi = 0;
        for (const auto& x : result_->residuals) {
            const double b = 100 * (x.before - x.measured) / x.measured;
            const double a = 100 * (x.after - x.measured) / x.measured;
            *before << b;
            *after << a;
            lo = std::min({lo, a, b});
            hi = std::max({hi, a, b});
            QString n = QString::fromStdString(x.measurement);
            names << (n.size() > 28 ? "…" + n.right(27) : n);
        }
        auto* series = new QBarSeries;
        series->append(before);
        series->append(after);
        chart->addSeries(series);
        auto* x = new QBarCategoryAxis;
        x->append(names);
        x->setLabelsAngle(-60);
        auto* y = new QValueAxis;
        y->setRange(std::floor(lo - 1), std::ceil(hi + 1));
        y->setTitleText("predicted − measured, %");
        chart->addAxis(x, Qt::AlignBottom);
        chart->addAxis(y, Qt::AlignLeft);
        series->attachAxis(x);
        series->attachAxis(y);
    }
    QChart* old = chart_->chart();
    chart_->setChart(chart);
    delete old;
}

} // namespace madmax::ui
