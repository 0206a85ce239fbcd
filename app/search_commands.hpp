// `madmax search`, `sweep`, `curve` and `merge`: one function per subcommand.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace madmax::cli {

/// Adds `search`, `sweep`, `curve` and `merge` to `app`, each running from its own callback.
void addSearchCommands(CLI::App& app);

/// `curve` (curve_command.cpp) and `merge` (merge_command.cpp).
void addCurveCommand(CLI::App& app);
void addPoolsCommand(CLI::App& app);
void addMergeCommand(CLI::App& app);
/// `collective` (collective_command.cpp).
void addCollectiveCommand(CLI::App& app);

} // namespace madmax::cli
