// `madmax search`, `madmax sweep` and `madmax merge`.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace madmax::cli {

/// Adds the three subcommands to `app`; returns a runner to call after parsing, which returns
/// -1 when none of them was chosen (else the exit code).
std::function<int()> addSearchCommands(CLI::App& app);

} // namespace madmax::cli
