// Scenario files (schema "madmax-scenario/1"): presets by id or inline, overrides by JSON path,
// strict parsing; and JSON for results.
#pragma once

#include "madmax/file_io.hpp"
#include "madmax/json_reader.hpp"
#include "madmax/presets.hpp"
#include "madmax/result.hpp"
#include "madmax/scenario.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace madmax {

inline constexpr const char* kScenarioSchema = "madmax-scenario/1";

/// Edits to a scenario, as JSON paths and values (what the explorer's controls send).
using FieldEdits = std::vector<std::pair<std::string, nlohmann::json>>;

/// The edits that setting `path` (a scenario path such as "strategy.tp") to the integer `value`
/// implies under the strategy's rules: DP follows TP, PP, CP and the GPU count when the replica
/// divides the GPUs (left as it was when it does not, for the validity check to explain); DP
/// sets the GPU count; the model chunks per GPU set the schedule (scheduleForChunks). The edit
/// itself comes first. The explorer asks this instead of applying the rules itself.
FieldEdits impliedEdits(const Scenario& s, const std::string& path, long long value);

/// One `path=value` override, as given to `--set` (value is JSON, or else a bare string).
struct Override {
    std::string path;
    std::string value;
};
Override parseOverride(const std::string& text); ///< throws InputError on a missing '='

/// Replace preset ids with the presets' JSON, apply the document's "overrides" and then
/// `extra`, and return the fully inline scenario document.
nlohmann::json resolveScenario(const nlohmann::json& doc, const PresetLibrary& lib,
                               const std::string& file, const std::vector<Override>& extra = {});

/// Set the field at a dotted JSON path ("strategy.tp", "system.tiers.1.gbps") in `doc`; the
/// last segment may name a field the document omits. `where` names the source in errors.
void applyOverride(nlohmann::json& doc, const std::string& path, const nlohmann::json& value,
                   const std::string& where);
/// Replace preset ids in "model", "system" and "system.gpu" by the presets' JSON.
void resolvePresetRefs(nlohmann::json& doc, const PresetLibrary& lib, const std::string& file);

/// Parse a resolved document strictly and check the scenario is valid; throws InputError.
Scenario parseScenario(const nlohmann::json& resolved, const std::string& file);

/// What every field of a resolved scenario document accepts and its unit: the strict parser's
/// ranges and choices plus the cross-field rules of explainInvalid(). Fields of an invalid part
/// that the parser never reached are absent.
FieldCatalog describeScenarioFields(const nlohmann::json& resolved);

/// Read, resolve and parse a scenario: from a file path, or a preset id of the library.
Scenario loadScenario(const std::string& pathOrId, const PresetLibrary& lib,
                      const std::vector<Override>& extra = {});
nlohmann::json loadScenarioJson(const std::string& pathOrId, const PresetLibrary& lib,
                                const std::vector<Override>& extra = {});

/// Strict parse of a "strategy" object; dp defaults to gpus / (tp·pp·cp).
Strategy parseStrategy(const nlohmann::json& j, const std::string& file, int gpus);
Model parseModel(const nlohmann::json& j, const std::string& file, const std::string& path);
Gpu parseGpu(const nlohmann::json& j, const std::string& file, const std::string& path);
System parseSystem(const nlohmann::json& j, const std::string& file, const std::string& path);

nlohmann::json toJson(const Model& m);
nlohmann::json toJson(const Gpu& g);
nlohmann::json toJson(const System& s);
nlohmann::json toJson(const Strategy& s);
/// A DLRM's sharding plan into a strategy object (emb_sharding, emb_group_size,
/// sparse_pipeline, emb_kernels; what parseStrategy reads): one type per table group, or the
/// one type alone when every group shares it and the file listed none (`compact`).
void writeDlrmPlan(nlohmann::json& strategy, const DlrmPlan& plan, int groups, bool compact);
nlohmann::json toJson(const Workload& w);
/// Fully inline scenario; parseScenario(toJson(s)) reproduces s exactly.
nlohmann::json toJson(const Scenario& s);
nlohmann::json toJson(const Result& r);

} // namespace madmax
