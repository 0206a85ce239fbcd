// Predicting published measurements (schema "madmax-validation/1", docs/reference/validation-format.md).
#pragma once

#include "madmax/presets.hpp"
#include "madmax/scenario.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace madmax {

struct CaseOutcome {
    std::string id;
    std::string kind; ///< training, inference, collective
    std::string metric;
    std::string group; ///< cases sharing a model (or collective GPU) and GPU count
    double measured = 0;
    std::optional<double> predicted;
    std::string skipped; ///< reason, when not predicted
    /// The calibration used and every assumption made (a field not published, a family match).
    std::vector<std::string> notes;
    /// Another model's published prediction of the same run, from the case's
    /// `artifact_prediction` (the MAD-Max artifact's own, on its ViT rows), to set its error
    /// beside this engine's.
    std::optional<double> artifactPredicted;
    double errorPct() const { return predicted ? (*predicted - measured) / measured * 100.0 : 0.0; }
    double artifactErrorPct() const {
        return artifactPredicted ? (*artifactPredicted - measured) / measured * 100.0 : 0.0;
    }
};

struct ErrorStats {
    int count = 0;
    double medianAbsPct = 0, p90AbsPct = 0, maxAbsPct = 0;
};

struct ValidationReport {
    std::vector<CaseOutcome> cases;
    ErrorStats overall;
    std::map<std::string, ErrorStats> byMetric;
    std::map<std::string, ErrorStats> byKind;
    /// Spearman rank correlation of predicted vs measured within each group of ≥ 2 cases.
    std::map<std::string, double> spearmanByGroup;
    std::optional<double> spearmanMean; ///< mean over those groups
    /// Over the predicted cases that carry an artifact prediction: its errors, and this
    /// engine's on the same cases (absent when no case carries one).
    std::optional<ErrorStats> artifact, oursOnArtifactCases;
};

/// Build the scenario a training case describes: the case's own model, parallelism and system
/// numbers, plus the calibration of the matching GPU preset (by SKU) or of the generic GPU.
/// Documented defaults fill fields the source leaves null. Throws InputError when the case
/// cannot be expressed.
Scenario scenarioForCase(const nlohmann::json& c, const PresetLibrary& lib,
                         const std::string& file);

/// The DLRM training scenario a case describes (tables as published, or a preset's rows).
Scenario dlrmScenarioForCase(const nlohmann::json& c, const PresetLibrary& lib,
                             const std::string& file);

/// The serving scenario an inference case describes (same rules; request lengths as published).
Scenario inferenceScenarioForCase(const nlohmann::json& c, const PresetLibrary& lib,
                                  const std::string& file);

ValidationReport runValidation(const nlohmann::json& dataset, const PresetLibrary& lib,
                               const std::string& file);

/// Writes the scenario of every training and inference case that can be expressed to
/// `dir`/<id>.json (a case id that is not a plain file name is refused). Returns how many.
int writeCaseScenarios(const nlohmann::json& dataset, const PresetLibrary& lib,
                       const std::string& file, const std::string& dir);

nlohmann::json toJson(const ValidationReport& r);
ErrorStats errorStats(std::vector<double> absErrorsPct);
double spearman(const std::vector<double>& a, const std::vector<double>& b);

/// The report as the command line prints it (one line a case, then the summary).
std::string formatValidation(const ValidationReport& r);


} // namespace madmax
