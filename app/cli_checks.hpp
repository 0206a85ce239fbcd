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

/// A finite number at least 0 (`positive`: above 0), refused in words. CLI11's
/// NonNegativeNumber and PositiveNumber print their bound as the 309-digit largest double.
inline CLI::Validator atLeastZero(bool positive) {
    return CLI::Validator(
        [positive](std::string& text) -> std::string {
            std::string why = kFinite(text);
            if (!why.empty()) return why;
            const double v = std::stod(text);
            if (positive ? v <= 0 : v < 0)
                return "\"" + text + "\" is not " +
                       (positive ? "a positive number" : "a number of 0 or more");
            return {};
        },
        positive ? "POSITIVE" : "NONNEGATIVE");
}
inline const CLI::Validator kNonNegative = atLeastZero(false);
inline const CLI::Validator kPositive = atLeastZero(true);

} // namespace madmax::cli
