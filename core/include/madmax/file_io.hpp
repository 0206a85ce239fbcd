// JSON text and files: strict parsing with line and column, and writes that never lose data.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace madmax {

/// Parse JSON text, turning syntax errors into InputError with line and column.
nlohmann::json parseJsonText(const std::string& text, const std::string& file);
nlohmann::json readJsonFile(const std::string& path);
/// A text file (bounded size), with the same clear errors as readJsonFile.
std::string readTextFile(const std::string& path);

/// The one rule for ids that become file names (presets, calibrated GPUs, validation
/// scenarios): letters, digits, '.', '-' and '_', not "." or "..", at most 128 characters —
/// no path, so nothing is written outside the folder meant. Why `id` breaks it, or nullopt.
std::optional<std::string> explainBadFileId(const std::string& id);
/// Write atomically: a temporary file in the same folder, then rename over the target.
void writeFileAtomically(const std::string& path, const std::string& contents);

} // namespace madmax
