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

/// The hand-derivation toy system: 100 TFLOP/s bf16 at efficiency 0.5 everywhere a curve is,
/// 1 TB/s HBM at efficiency 1, no launch cost, no all-to-all overhead, no link latency;
/// NVLink 100 GB/s in nodes of 8, network 10 GB/s, every link at efficiency 1.
nlohmann::json toySystem();

/// Run the madmax CLI; returns the exit code and fills stdout / stderr.
int runCli(const std::string& args, std::string* out = nullptr, std::string* err = nullptr);

} // namespace madmax::test
