// One evaluation as the explorer shows it: the scenario, its result, and (serving) the curve.
#pragma once

#include "madmax/engine.hpp"
#include "madmax/serving.hpp"

#include <QMetaType>

#include <vector>

namespace madmax::ui {

struct Evaluation {
    quint64 generation = 0;
    Scenario scenario;
    Result result;
    std::vector<CurvePoint> curve; ///< inference: latency vs throughput as the batch grows
};

/// Evaluate a scenario the way the explorer shows it (timeline; serving curve for inference).
Evaluation evaluateForDisplay(quint64 generation, const Scenario& s);

} // namespace madmax::ui

Q_DECLARE_METATYPE(madmax::ui::Evaluation)
