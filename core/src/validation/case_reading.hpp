// Reading a validation case (schema "madmax-validation/1", docs/validation.md): its fields with
// their bounds and paths, the GPU, system and model presets a case names, the framework tables
// it draws on, and the notes that say what a prediction assumed.
#pragma once

#include "madmax/presets.hpp"
#include "madmax/scenario.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace madmax::validation_detail {

using nlohmann::json;

/// What the case being converted assumed (runValidation points it at the case's notes).
extern thread_local std::vector<std::string>* tNotes;

double num(const json& j, const char* key, double fallback);
/// A whole-number field of a case within [lo, hi] (`fallback` when absent or null), else bad
/// input naming it — never a double converted to int out of range.
int intField(const json& j, const char* key, long long fallback, const char* section,
             long long lo = 1, long long hi = 1LL << 30);
/// The path of a case's field in an error: "case <id>: <field>".
std::string casePath(const json& c, const char* field);
bool isNull(const json& j, const char* key);
void note(const std::string& what);
/// The GPU preset whose "skus" list names this SKU; else one of the same chip family (the SKU
/// up to its first '-': "A100-SXM4" → an A100 preset), said so; else the generic one, said so.
const Preset& gpuPresetFor(const std::string& sku, const PresetLibrary& lib);
/// System from the case's numbers: GPU datasheet values replace the preset's; one scale-up tier
/// (the NVLink domain) and, beyond it, one scale-out tier.
json systemFor(const json& sys, const PresetLibrary& lib, int gpus);
/// The model preset with the case's shape (arch, layers, hidden, heads), if any: the published
/// tables omit head dimensions, MLA ranks and attention windows, which the preset takes from the
/// model's released config (docs/guide/calibration-and-validation.md "Validation").
const json* shapePresetFor(const json& m, const PresetLibrary& lib);
/// The case's transformer shape (kv_heads null: multi-head attention, or MLA for a preset that
/// has it); MoE cases add their moe block.
json modelFor(const json& m, const PresetLibrary& lib);
/// A file of presets/frameworks/, compiled in (an empty object when absent).
json frameworkDoc(const std::string& name);
/// The title of a case's source ("" when it has none).
std::string sourceTitle(const json& c);
/// The MoE dispatcher a case's framework ran (presets/frameworks/moe-dispatchers.json): the
/// entry of its source, model (the preset of its shape) and GPU, else the source's default;
/// null when neither names one.
const json* moeDispatcherFor(const json& c, const PresetLibrary& lib);
/// The first of a presets/frameworks/ document's "entries" whose source_title_contains is in the
/// case's source title (null when none is); a pointer into `doc`, which must outlive it.
const json* entryOfSource(const json& doc, const json& c);
/// The TP overlap style of a case's framework (presets/frameworks/tp-overlap.json): the entry
/// of its source, null when none names one (the strategy's default then holds).
const json* tpOverlapStyleFor(const json& c);
/// The ZeRO-3 coordinator of a case's framework (presets/frameworks/zero3-style.json): the
/// entry whose framework the source names, when the release it names (or else its arXiv date)
/// precedes the entry's cut-off (null when none does), and whether a source named one but gave
/// neither to place it by.
struct Zero3Style {
    const json* entry = nullptr;
    std::string basis; ///< why the entry applies: the release named, or the source's date
    bool undated = false;
};
Zero3Style zero3StyleFor(const json& c);
/// A published run did fit: when the modelled memory says otherwise, the run saved memory in a
/// way the table does not give (activation offloading, partial recompute) or the memory model
/// over-counts. The prediction stands as published, and says so.
void noteIfOverCapacity(const Scenario& s);
/// A `recipe` block on a case that does not read it (serving, DLRM): an error naming it.
void rejectRecipe(const json& c, const std::string& file, const char* kind);

} // namespace madmax::validation_detail
