// Export one chart: format, paper size (single or double column, or custom), PNG scale,
// greyscale-safe hatching.
#pragma once

#include "export.hpp"

#include <QDialog>

class QComboBox;
class QDoubleSpinBox;
class QCheckBox;

namespace madmax::ui {

class ExportDialog : public QDialog {
    Q_OBJECT
  public:
    ExportDialog(const QString& chartTitle, QWidget* parent = nullptr);
    ExportOptions options() const;

  private:
    QComboBox* format_;
    QComboBox* size_;
    QDoubleSpinBox* width_;
    QDoubleSpinBox* height_;
    QComboBox* scale_;
    QCheckBox* hatching_;
};

} // namespace madmax::ui
