// A strategy's on/off switches, each declared once (issue #32, "a field declared once"): its
// scenario key, the member it sets, its default, and the label and explanation a user sees.
// The parser, the JSON writer and the explorer's check boxes all read this table, so a new
// switch is one row here plus the physics that reads the member.
#pragma once

#include "madmax/strategy.hpp"

#include <span>
#include <string_view>

namespace madmax {

struct StrategySwitch {
    enum class Group { Parallelism, MixtureOfExperts };
    std::string_view key;  ///< strategy.<key> in a scenario file
    bool Strategy::*member;
    bool byDefault;        ///< what a file that omits it gets (Strategy{}'s value)
    Group group;           ///< where it is parsed and shown
    std::string_view label; ///< the explorer's check box
    std::string_view help;  ///< what it does, with its source
};

/// Every switch, in the order the parser reads them (within each group).
std::span<const StrategySwitch> strategySwitches();
/// The switch of that key (nullptr when there is none): findStrategyNumber's twin.
const StrategySwitch* findStrategySwitch(std::string_view key);

} // namespace madmax
