#include "panel_widgets.hpp"

namespace madmax::ui {

QProgressBar* makeProgressBar() {
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

} // namespace madmax::ui
