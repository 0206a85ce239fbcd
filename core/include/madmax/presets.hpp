// The preset library: models, GPUs, systems and scenarios shipped as JSON under presets/,
// compiled into the binary so every tool works from any folder.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace madmax {

enum class PresetKind { Model, Gpu, System, Scenario };
std::string_view toString(PresetKind k);

struct Preset {
    PresetKind kind;
    std::string id;
    std::string origin; ///< file name it came from (for error messages)
    nlohmann::json json;
};

class PresetLibrary {
  public:
    /// The presets compiled into the program (presets/ at build time).
    static const PresetLibrary& builtin();

    /// Add or replace a preset from JSON text; `origin` names it in errors.
    void add(PresetKind kind, const std::string& id, const std::string& origin,
             const std::string& text);

    const Preset* find(PresetKind kind, const std::string& id) const;
    std::vector<const Preset*> list(PresetKind kind) const;
    std::vector<std::string> ids(PresetKind kind) const;
    /// The scenario the tools open when given none.
    static constexpr const char* kDefaultScenario = "default";

  private:
    std::map<std::pair<int, std::string>, Preset> presets_;
};

} // namespace madmax
