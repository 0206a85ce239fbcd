// Validators for numeric command-line options that CLI11's own checks let through.
#pragma once

#include <CLI/CLI.hpp>

#include <cmath>
#include <string>

namespace madmax::cli {

/// A finite number: "nan" and "inf" parse as doubles and pass CLI11's range checks (every
/// comparison with NaN is false), so they are refused here first.
inline const CLI::Validator kFinite(
    [](std::string& text) -> std::string {
        try {
            std::size_t used = 0;
            const double v = std::stod(text, &used);
            if (used != text.size()) return "\"" + text + "\" is not a number";
            if (!std::isfinite(v)) return "\"" + text + "\" is not a finite number";
        } catch (const std::exception&) {
            return "\"" + text + "\" is not a number";
        }
        return {};
    },
    "FINITE");

} // namespace madmax::cli
