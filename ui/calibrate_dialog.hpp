// Tools → Calibrate from Measurements: fit a GPU preset to the user's nccl-tests tables and
// measured step times (core: madmax::calibrate), show before/after on a chart, and save the
// result as a user preset (never over a shipped one).
#pragma once

#include "presets_store.hpp"

#include "madmax/calibrate.hpp"

#include <QComboBox>
#include <QDialog>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>

#include <optional>

class QChartView;
class QFormLayout;
class QVBoxLayout;

namespace madmax::ui {

class CalibrateDialog : public QDialog {
    Q_OBJECT
  public:
    CalibrateDialog(PresetStore* store, QWidget* parent = nullptr);

    /// Set the inputs without file dialogs (tests, scripted use).
    void setInputs(const QString& gpu, const QString& system, const QStringList& ncclFiles,
                   const QString& stepsFile, const QString& newId,
                   const QStringList& kinetoFiles = {});
    /// Fit; the report text (an error message when the inputs are bad).
    QString run();
    /// Save the fitted preset as a user GPU preset; an error message, empty on success.
    QString save();
    const std::optional<CalibrationReport>& result() const { return result_; }
    /// Bars per measurement: measured, before, after (the chart's data).
    int chartBarCount() const;

  private:
    void addPresetRows(QFormLayout* form);      ///< the GPU to start from and its system
    void addMeasurementRows(QFormLayout* form); ///< nccl-tests files, traces, step times
    /// A list of measurement files with Add… and Clear, as one row of the form.
    QListWidget* addFileList(QFormLayout* form, const QString& label, const QString& tip,
                             const QString& caption, const QString& filter, int height);
    void addResultArea(QVBoxLayout* outer); ///< Fit, the chart, the report, Save and Close
    void showChart();

    PresetStore* store_;
    QComboBox* gpu_;
    QComboBox* system_;
    QListWidget* nccl_;
    QListWidget* kineto_; ///< PyTorch profiler traces
    QLineEdit* steps_;
    QLineEdit* id_;
    QPlainTextEdit* report_;
    QPushButton* save_;
    QChartView* chart_;
    std::optional<CalibrationReport> result_;
};

} // namespace madmax::ui
