// One colour per component across every chart, and the screen / publication styles.
// Colours are the Okabe–Ito colour-blind-safe palette (Okabe & Ito 2008).
#pragma once

#include <QBrush>
#include <QColor>
#include <QFont>
#include <QString>

class QChart;

namespace madmax::ui {

enum class Component {
    Forward,
    Backward,
    Recompute,
    Optimizer,
    CommTP,
    CommCP,
    CommEP,
    CommDP,
    CommPP,
    Bubble,
    Weights,
    ExpertWeights,
    Grads,
    OptimizerState,
    Activations,
    KvCache,
    Reserve,
    Baseline,
    Embedding,       ///< DLRM: lookups and their fused backward + update
    EmbeddingTables, ///< DLRM: table shards in memory
    HostIdle,        ///< the GPU waiting for the host to issue kernels (eager mode)
    Overhead,        ///< stated framework time no op accounts for (Result::overheadS)
};

QColor componentColor(Component c);
QString componentName(Component c);
/// What the component counts and where its formula comes from (tooltips).
QString componentTooltip(Component c);
/// A distinct fill pattern per component, for greyscale-safe figures.
Qt::BrushStyle componentPattern(Component c);

struct ChartStyle {
    bool publication = false; ///< explicit font, no shadow, no animation, white background
    bool hatching = false;    ///< greyscale-safe patterns on filled areas
    QString fontFamily = "DejaVu Sans";
    double fontPointSize = 8;
    bool dark = false;      ///< follow a dark system palette on screen
    double fontScale = 1.0; ///< presentation mode enlarges text

    static ChartStyle screen(bool dark, double fontScale = 1.0);
    static ChartStyle paper(bool hatching = false);
};

QBrush componentBrush(Component c, const ChartStyle& style);
void applyChartStyle(QChart* chart, const ChartStyle& style);

} // namespace madmax::ui
