// How far to trust a prediction: the validation residuals of published runs like it (issue #12).
#pragma once

#include "madmax/scenario.hpp"
#include "madmax/validation.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace madmax {

/// The |error| of the published runs most like a scenario: same GPU family and workload kind
/// (dense, MoE, DLRM or ViT training; dense or MoE serving), else the same kind on any GPU.
/// A kind with no published run at all borrows the nearest kind's (ViT training: dense
/// training; MoE serving: dense serving), and its basis says so.
struct UncertaintyBand {
    bool known = false;
    double medianAbsPct = 0; ///< the band shown: ±this (half the runs were closer)
    double p90AbsPct = 0, maxAbsPct = 0;
    int runs = 0;
    std::string basis;   ///< "H100 dense training", or "dense training (any GPU)"
    std::string standIn; ///< the kind the basis stands in for ("MoE serving"), or ""
    std::string text() const; ///< "±4.4% (12 published H100 dense training runs)"
};

/// The published measurements compiled in (presets/validation/public.json, a copy of
/// presets/validation/public.json).
const nlohmann::json& builtinValidationDataset();
/// Their validation against the current engine, computed once per process.
const ValidationReport& builtinValidationReport();

/// Chip family of a GPU preset id or name: "h100-sxm5-80gb" → "H100", "GB200-NVL72" → "GB200".
std::string gpuFamilyOf(const std::string& idOrName);
/// "dense training", "MoE training", "DLRM training", "ViT training", "dense serving" or
/// "MoE serving".
std::string workloadKindOf(const Scenario& s);

UncertaintyBand uncertaintyFor(const Scenario& s);
/// The same from a given report (tests): the runs whose family and kind match.
UncertaintyBand uncertaintyFor(const Scenario& s, const ValidationReport& report,
                               const nlohmann::json& dataset);

} // namespace madmax
