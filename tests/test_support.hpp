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

/// The hand-derivation toy scenario on toySystem(): l = 4, h = 1024, a = g = 8 heads of
/// d = 128, f = 4096 (plain GELU MLP), V = 32768; 8 GPUs of DP, micro-batch 1, ZeRO-0, 16
/// sequences of 1024 (two micro-batches per step), bf16, flash attention.
nlohmann::json toyScenario();

/// Edits by JSON path, as `--set` applies them.
using Edits = std::vector<std::pair<std::string, nlohmann::json>>;
/// The toy scenario with these edits, parsed.
Scenario toy(const Edits& edits = {});
/// The error parsing the toy with these edits gives ("(no error)" when it parses).
std::string toyError(const Edits& edits);

/// Durations of the timeline ops with this label, in order (empty when none).
std::vector<double> opDurations(const Result& r, const std::string& label);
/// Duration of the first timeline op with this label; fails the test when there is none.
double opSeconds(const Result& r, const std::string& label);

/// Run the madmax CLI; returns the exit code and fills stdout / stderr.
int runCli(const std::string& args, std::string* out = nullptr, std::string* err = nullptr);

} // namespace madmax::test
