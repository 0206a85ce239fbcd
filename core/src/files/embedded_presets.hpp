#pragma once

#include <string>

namespace madmax::detail {

struct EmbeddedFile {
    const char* path; ///< relative to presets/, e.g. "models/llama3-8b.json"
    const char* text;
};
extern const EmbeddedFile kEmbeddedPresets[];
extern const int kEmbeddedPresetCount;

/// The text of the embedded file at `path` (relative to presets/), or nullptr.
inline const char* embeddedPresetText(const std::string& path) {
    for (int i = 0; i < kEmbeddedPresetCount; ++i)
        if (path == kEmbeddedPresets[i].path) return kEmbeddedPresets[i].text;
    return nullptr;
}

} // namespace madmax::detail
