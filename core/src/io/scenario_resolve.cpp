// Scenario documents before parsing: preset ids replaced by presets, overrides applied.
#include "madmax/error.hpp"
#include "madmax/file_io.hpp"
#include "madmax/json_reader.hpp"
#include "madmax/scenario_io.hpp"

namespace madmax {

using nlohmann::json;

namespace {

std::string joinIds(const std::vector<std::string>& ids) {
    std::string out;
    for (const auto& id : ids)
        out += (out.empty() ? "" : ", ") + id;
    return out;
}

void resolveRef(json& slot, PresetKind kind, const PresetLibrary& lib, const std::string& file,
                const std::string& path) {
    if (!slot.is_string()) return;
    const std::string id = slot.get<std::string>();
    // A path to a preset file of the user's (e.g. one `madmax calibrate` wrote).
    if (id.size() > 5 && id.compare(id.size() - 5, 5, ".json") == 0 && !lib.find(kind, id)) {
        slot = readJsonFile(id);
        if (!slot.is_object())
            throw InputError(id, path, "a preset file must hold a JSON object");
        return;
    }
    const Preset* p = lib.find(kind, id);
    if (!p) {
        auto ids = lib.ids(kind);
        auto near = didYouMean(id, ids);
        throw InputError(file, path,
                         "no " + std::string(toString(kind)) + " preset named \"" + id + "\"" +
                             (near ? " (did you mean \"" + *near + "\"?)" : "") +
                             "; available: " + joinIds(ids));
    }
    slot = p->json;
}

} // namespace

void resolvePresetRefs(json& doc, const PresetLibrary& lib, const std::string& file) {
    if (!doc.is_object()) return;
    if (doc.contains("model")) resolveRef(doc["model"], PresetKind::Model, lib, file, "model");
    if (doc.contains("system")) {
        resolveRef(doc["system"], PresetKind::System, lib, file, "system");
        json& sys = doc["system"];
        if (sys.is_object() && sys.contains("gpu"))
            resolveRef(sys["gpu"], PresetKind::Gpu, lib, file, "system.gpu");
    }
}

namespace {

json parseOverrideValue(const std::string& path, const std::string& text) {
    try {
        return json::parse(text);
    } catch (const json::parse_error&) {
        return json(text); // a bare word is a string: --set model=llama3-70b
    } catch (const json::out_of_range&) { // 1e400: a number no double holds
        throw InputError("--set " + path + "=" + text, path,
                         "number overflow: " + text +
                             " is beyond what a number can hold (±1.8e308); give a finite value");
    }
}

} // namespace

void applyOverride(json& doc, const std::string& path, const json& value,
                   const std::string& where) {
    json* node = &doc;
    std::string walked;
    std::size_t pos = 0;
    while (true) {
        const auto dot = path.find('.', pos);
        const std::string seg =
            path.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
        const bool last = dot == std::string::npos;
        const std::string here = walked.empty() ? seg : walked + "." + seg;
        if (seg.empty()) throw InputError(where, path, "empty segment in the override path");
        if (node->is_array()) {
            std::size_t idx = 0;
            try {
                std::size_t used = 0;
                idx = std::stoul(seg, &used);
                if (used != seg.size()) throw std::invalid_argument(seg);
            } catch (const std::exception&) {
                throw InputError(where, here,
                                 "\"" + seg + "\" is not an index into the array at " +
                                     (walked.empty() ? "(root)" : walked));
            }
            if (idx >= node->size())
                throw InputError(where, here,
                                 "index " + seg + " is past the end; the array has " +
                                     std::to_string(node->size()) + " elements");
            node = &(*node)[idx];
        } else if (node->is_object()) {
            if (!node->contains(seg) && !last) {
                std::vector<std::string> keys;
                for (auto it = node->begin(); it != node->end(); ++it)
                    keys.push_back(it.key());
                auto near = didYouMean(seg, keys);
                throw InputError(where, here,
                                 "no such field to override" +
                                     (near ? " (did you mean \"" + *near + "\"?)" : std::string()));
            }
            node = &(*node)[seg];
        } else {
            throw InputError(where, here,
                             (walked.empty() ? std::string("(root)") : walked) +
                                 " is a value, not an object or array");
        }
        if (last) break;
        walked = here;
        pos = dot + 1;
    }
    *node = value;
}

Override parseOverride(const std::string& text) {
    const auto eq = text.find('=');
    if (eq == std::string::npos || eq == 0)
        throw InputError("--set", text,
                         "expected path=value, e.g. strategy.tp=4 or model=llama3-70b");
    return {text.substr(0, eq), text.substr(eq + 1)};
}

json resolveScenario(const json& doc, const PresetLibrary& lib, const std::string& file,
                     const std::vector<Override>& extra) {
    if (!doc.is_object())
        throw InputError(file, "(document)",
                         "a scenario must be a JSON object, got " + describeType(doc));
    json out = doc;
    resolvePresetRefs(out, lib, file);
    if (out.contains("overrides")) {
        const json ov = out["overrides"];
        out.erase("overrides");
        if (!ov.is_object())
            throw InputError(file, "overrides", "expected an object of \"path\": value pairs");
        for (auto it = ov.begin(); it != ov.end(); ++it) {
            applyOverride(out, it.key(), it.value(), file + ": overrides");
            resolvePresetRefs(out, lib, file);
        }
    }
    for (const auto& o : extra) {
        const json v = parseOverrideValue(o.path, o.value);
        // A whole number too large for any integer field: say so quoting it as written
        // (JSON would have turned it into 1e+20 by the time a field reads it).
        const bool digits = !o.value.empty() &&
                            o.value.find_first_not_of("-0123456789") == std::string::npos;
        if (digits && v.is_number_float())
            throw InputError("--set", o.path,
                             "value " + o.value +
                                 " is beyond the range of whole numbers any field accepts");
        applyOverride(out, o.path, v, "--set");
        resolvePresetRefs(out, lib, "--set " + o.path);
    }
    return out;
}

json loadScenarioJson(const std::string& pathOrId, const PresetLibrary& lib,
                      const std::vector<Override>& extra) {
    namespace fs = std::filesystem;
    // A preset id wins only when no file system entry has that name; anything that exists (a
    // folder, a device, a pipe, a link loop) is read as a file and gets that file's own error.
    std::error_code ec;
    const bool exists = fs::exists(fs::symlink_status(pathOrId, ec));
    const Preset* preset = lib.find(PresetKind::Scenario, pathOrId);
    if (exists)
        return resolveScenario(readJsonFile(pathOrId), lib, pathOrId, extra);
    if (preset) return resolveScenario(preset->json, lib, preset->origin, extra);
    auto ids = lib.ids(PresetKind::Scenario);
    throw InputError(pathOrId, "",
                     "no such file, and no scenario preset by that name; presets: " + joinIds(ids));
}

namespace {

/// The last --set that wrote `field` or an object holding it (a later one wins, as applied).
const Override* overrideBehind(const std::string& field, const std::vector<Override>& extra) {
    const std::string f = dottedPath(field);
    const Override* found = nullptr;
    for (const auto& o : extra) {
        const std::string p = dottedPath(o.path);
        if (!p.empty() && (f == p || f.rfind(p + ".", 0) == 0)) found = &o;
    }
    return found;
}

} // namespace

Scenario loadScenario(const std::string& pathOrId, const PresetLibrary& lib,
                      const std::vector<Override>& extra) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const std::string label = fs::is_regular_file(pathOrId, ec) ? pathOrId
                              : lib.find(PresetKind::Scenario, pathOrId)
                                  ? lib.find(PresetKind::Scenario, pathOrId)->origin
                                  : pathOrId;
    const json doc = loadScenarioJson(pathOrId, lib, extra);
    try {
        return parseScenario(doc, label);
    } catch (const InputError& e) {
        if (extra.empty() || e.file() != label) throw;
        // The scenario file did not say this: name what did, so the user fixes the command
        // line rather than searching the file for a value it never held.
        if (const Override* o = overrideBehind(e.path(), extra))
            throw InputError("--set " + o->path + "=" + o->value, e.path(),
                             e.message() + " (applied to " + label + ")");
        std::string sets;
        for (const auto& o : extra) sets += (sets.empty() ? "" : ", ") + o.path + "=" + o.value;
        throw InputError(label + " with --set " + sets, e.path(), e.message());
    }
}

} // namespace madmax
