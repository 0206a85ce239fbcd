// The validity rules every workload room shares (the GPU, tiers, precision, frozen ranges)
// and those of the layered models (shape, degrees, schedules, placement); the registry
// (workloads/registry.cpp) composes them with each room's own rules into explainInvalid().
#pragma once

#include "madmax/scenario.hpp"

#include <optional>
#include <string>

namespace madmax::detail {

std::optional<std::string> explainInvalidFrozen(const Scenario& s);
std::optional<std::string> explainInvalidContext(const Scenario& s);
std::optional<std::string> explainInvalidSystem(const Scenario& s);
/// Dense and MoE transformers and ViT, training and serving.
std::optional<std::string> explainInvalidLayered(const Scenario& s);

} // namespace madmax::detail
