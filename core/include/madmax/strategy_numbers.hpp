// A strategy's numeric fields, each declared once (issue #32, "a field declared once"): its
// scenario key, the short name a --baseline or --restrict spec may use, the member it sets, its
// range and default, and the label and explanation a user sees. The scenario parser, the JSON
// writer, the command line's strategy specs and the explorer's spin boxes all read this table,
// so a new numeric field is one row here plus the physics that reads the member (the on/off
// switches have their own table, madmax/strategy_switches.hpp).
#pragma once

#include "madmax/strategy.hpp"

#include <span>
#include <string_view>

namespace madmax {

struct StrategyNumber {
    /// Where the parser reads it (and, in the explorer, which group shows it).
    enum class Group { Degrees, Memory, Pipeline, MixtureOfExperts };
    std::string_view key;   ///< strategy.<key> in a scenario file
    std::string_view alias; ///< a shorter name in --baseline / --restrict specs ("" = none)
    int Strategy::*intMember;     ///< an integer field (or nullptr) ...
    double Strategy::*realMember; ///< ... or a real one
    double min, max;              ///< the range a file may give (in the file's unit)
    double byDefault;             ///< what a file that omits it gets (Strategy{}'s value)
    double scale;                 ///< stored member = file value × scale (bucket_mb → bytes)
    Group group;
    std::string_view label;   ///< the explorer's label
    std::string_view help;    ///< what it does, with its source
    std::string_view allowed; ///< the editor's "allowed" text ("" = the range)
    /// The default comes from the GPU count (dp = GPUs ÷ (TP·PP·CP)), not byDefault.
    bool derivedDefault = false;

    bool integer() const { return intMember != nullptr; }
    /// The value in the file's unit.
    double get(const Strategy& st) const {
        return integer() ? double(st.*intMember) : st.*realMember / scale;
    }
    /// Sets the member from a value in the file's unit (the caller has checked the range).
    void set(Strategy& st, double v) const {
        if (integer())
            st.*intMember = int(v);
        else
            st.*realMember = v * scale;
    }
    bool named(std::string_view name) const {
        return name == key || (!alias.empty() && name == alias);
    }
};

/// Every numeric field, in the order the parser reads them within each group.
std::span<const StrategyNumber> strategyNumbers();

/// The field a scenario key or spec alias names; nullptr when none does.
const StrategyNumber* findStrategyNumber(std::string_view name);

} // namespace madmax
