#pragma once

namespace madmax::detail {

struct EmbeddedFile {
    const char* path; ///< relative to presets/, e.g. "models/llama3-8b.json"
    const char* text;
};
extern const EmbeddedFile kEmbeddedPresets[];
extern const int kEmbeddedPresetCount;

} // namespace madmax::detail
