// Human-readable text for results (the CLI's default output).
#pragma once

#include "madmax/result.hpp"
#include "madmax/scenario.hpp"

#include <string>

namespace madmax {

std::string formatSeconds(double s);
std::string formatBytes(double bytes);
std::string formatReport(const Scenario& s, const Result& r);

} // namespace madmax
