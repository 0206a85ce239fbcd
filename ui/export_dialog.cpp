#include "export_dialog.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>

namespace madmax::ui {

ExportDialog::ExportDialog(const QString& chartTitle, QWidget* parent) : QDialog(parent) {
    setWindowTitle("Export — " + chartTitle);
    auto* form = new QFormLayout(this);
    format_ = new QComboBox;
    format_->addItem("SVG (vector, text stays text)", "svg");
    format_->addItem("PDF (vector, fonts embedded)", "pdf");
    format_->addItem("PNG (bitmap)", "png");
    format_->addItem("CSV (data)", "csv");
    format_->addItem("JSON (data)", "json");
    size_ = new QComboBox;
    size_->addItem("Single column (3.5 in)", 3.5);
    size_->addItem("Double column (7 in)", 7.0);
    size_->addItem("Custom", 0.0);
    width_ = new QDoubleSpinBox;
    height_ = new QDoubleSpinBox;
    for (auto* s : {width_, height_}) {
        s->setRange(0.5, 40);
        s->setSuffix(" in");
        s->setDecimals(2);
    }
    width_->setValue(3.5);
    height_->setValue(2.6);
    scale_ = new QComboBox;
    scale_->addItem("1×", 1);
    scale_->addItem("2×", 2);
    scale_->addItem("3×", 3);
    scale_->setCurrentIndex(1);
    hatching_ = new QCheckBox("Greyscale-safe hatching");
    form->addRow("Format", format_);
    form->addRow("Size", size_);
    form->addRow("Width", width_);
    form->addRow("Height", height_);
    form->addRow("PNG scale", scale_);
    form->addRow(hatching_);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    form->addRow(buttons);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(size_, &QComboBox::currentIndexChanged, this, [this](int) {
        const double w = size_->currentData().toDouble();
        width_->setEnabled(w == 0);
        if (w > 0) {
            width_->setValue(w);
            height_->setValue(w * 0.74);
        }
    });
    width_->setEnabled(false);
}

ExportOptions ExportDialog::options() const {
    ExportOptions o;
    parseExportFormat(format_->currentData().toString(), &o.format);
    o.widthIn = width_->value();
    o.heightIn = height_->value();
    o.pixelScale = scale_->currentData().toInt();
    o.style = ChartStyle::paper(hatching_->isChecked());
    return o;
}

} // namespace madmax::ui
