#include "madmax/presets.hpp"

#include "files/embedded_presets.hpp"
#include "madmax/error.hpp"
#include "madmax/scenario_io.hpp"

namespace madmax {

std::string_view toString(PresetKind k) {
    switch (k) {
    case PresetKind::Model:
        return "model";
    case PresetKind::Gpu:
        return "gpu";
    case PresetKind::System:
        return "system";
    case PresetKind::Scenario:
        return "scenario";
    }
    return "?";
}

const PresetLibrary& PresetLibrary::builtin() {
    static const PresetLibrary lib = [] {
        PresetLibrary l;
        for (int i = 0; i < detail::kEmbeddedPresetCount; ++i) {
            const std::string path = detail::kEmbeddedPresets[i].path;
            const auto slash = path.find('/');
            const std::string folder = path.substr(0, slash);
            std::string id = path.substr(slash + 1);
            id = id.substr(0, id.size() - 5); // drop ".json"
            PresetKind kind;
            if (folder == "models")
                kind = PresetKind::Model;
            else if (folder == "gpus")
                kind = PresetKind::Gpu;
            else if (folder == "systems")
                kind = PresetKind::System;
            else if (folder == "scenarios")
                kind = PresetKind::Scenario;
            else
                continue;
            l.add(kind, id, "presets/" + path, detail::kEmbeddedPresets[i].text);
        }
        return l;
    }();
    return lib;
}

void PresetLibrary::add(PresetKind kind, const std::string& id, const std::string& origin,
                        const std::string& text) {
    nlohmann::json j = parseJsonText(text, origin);
    if (!j.is_object()) throw InputError(origin, "", "a preset must be a JSON object");
    if (j.contains("id") && (!j["id"].is_string() || j["id"].get<std::string>() != id))
        throw InputError(origin, "id", "must equal the file name \"" + id + "\"");
    presets_[{int(kind), id}] = Preset{kind, id, origin, std::move(j)};
}

const Preset* PresetLibrary::find(PresetKind kind, const std::string& id) const {
    auto it = presets_.find({int(kind), id});
    return it == presets_.end() ? nullptr : &it->second;
}

std::vector<const Preset*> PresetLibrary::list(PresetKind kind) const {
    std::vector<const Preset*> out;
    for (const auto& [key, p] : presets_)
        if (key.first == int(kind)) out.push_back(&p);
    return out;
}

std::vector<std::string> PresetLibrary::ids(PresetKind kind) const {
    std::vector<std::string> out;
    for (const auto* p : list(kind))
        out.push_back(p->id);
    return out;
}

} // namespace madmax
