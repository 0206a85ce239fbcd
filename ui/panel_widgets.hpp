// Small widgets the background-job panels share.
#pragma once

#include <QProgressBar>
#include <QTableWidgetItem>

namespace madmax::ui {

/// A progress bar in thousandths, for JobTracker::progress fractions.
QProgressBar* makeProgressBar();
/// A table cell that sorts numerically, shown with `decimals` places.
QTableWidgetItem* numberItem(double v, int decimals);

} // namespace madmax::ui
