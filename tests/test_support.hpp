// Helpers shared by the tests: scenarios from presets, and small edits of them.
#pragma once

#include "madmax/engine.hpp"
#include "madmax/scenario_io.hpp"

#include <string>
#include <vector>

namespace madmax::test {

/// A built-in scenario preset with `--set`-style overrides applied.
Scenario preset(const std::string& id, const std::vector<std::string>& sets = {});

/// The model/system preset by id, parsed.
Model modelPreset(const std::string& id);
System systemPreset(const std::string& id);

/// Run the madmax CLI; returns the exit code and fills stdout / stderr.
int runCli(const std::string& args, std::string* out = nullptr, std::string* err = nullptr);

} // namespace madmax::test
