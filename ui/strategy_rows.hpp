// What the strategy panel offers: one row per degree with its label and tip, which rows apply
// to training, serving or MoE, and the placements and value lists its controls step through.
#pragma once

#include "madmax/strategy.hpp"
#include "madmax/strategy_numbers.hpp"

#include <QSpinBox>
#include <QString>
#include <QStringList>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace madmax::ui {

/// A row of the degrees group: a strategy field declared in madmax/strategy_numbers.hpp (its
/// label and tip come from there: label and tip null here), or a workload field.
struct RowSpec {
    const char* key;
    const char* label = nullptr;
    const char* tip = nullptr;
};
inline const RowSpec kRows[] = {
    {"tp"},
    {"pp"},
    {"vp"},
    {"cp"},
    {"dp"},
    {"ep"},
    {"etp"},
    {"micro_batch"},
    {"global_batch", "Global batch", "Sequences per optimizer step."},
    {"gpus", "GPUs", "GPU count; DP follows as GPUs / (TP × PP × CP)."},
    {"batch", "Batch",
     "Serving: concurrent sequences per replica; 0 = the largest whose KV cache fits."},
    {"input_tokens", "Input tokens", "Serving: mean prompt length."},
    {"output_tokens", "Output tokens", "Serving: mean generated length."},
};

inline QString fromView(std::string_view v) {
    return QString::fromUtf8(v.data(), qsizetype(v.size()));
}
/// A spin box for a numeric strategy field: its declared range and help (the label is the
/// caller's, since a form row carries it).
/// The strategy field of that key; a key the table does not declare is a programming error,
/// said with its name rather than dereferenced.
inline const StrategyNumber& declaredNumber(std::string_view key) {
    const StrategyNumber* n = findStrategyNumber(key);
    if (!n) throw std::logic_error("no strategy field \"" + std::string(key) + "\" is declared");
    return *n;
}
inline void declareSpin(QSpinBox* box, std::string_view key) {
    const StrategyNumber& n = declaredNumber(key);
    box->setRange(int(n.min), int(n.max));
    box->setToolTip(fromView(n.help));
}
inline QString numberLabel(std::string_view key) { return fromView(declaredNumber(key).label); }

/// The row's label: the strategy field's own, else the row's.
inline QString rowLabel(const RowSpec& r) {
    if (const StrategyNumber* n = findStrategyNumber(r.key); n && !r.label) return fromView(n->label);
    return QString::fromUtf8(r.label);
}
/// The row's tip: the strategy field's help, else the row's.
inline QString rowTip(const RowSpec& r) {
    if (const StrategyNumber* n = findStrategyNumber(r.key); n && !r.tip) return fromView(n->help);
    return QString::fromUtf8(r.tip);
}
inline const QStringList kTrainingOnly = {"vp", "cp", "micro_batch", "global_batch"};
inline const QStringList kServingOnly = {"batch", "input_tokens", "output_tokens"};
inline const QStringList kMoeOnly = {"ep", "etp"};

inline std::vector<int> withValue(std::vector<int> v, int current) {
    if (std::find(v.begin(), v.end(), current) == v.end()) v.push_back(current);
    std::sort(v.begin(), v.end());
    return v;
}

inline std::vector<int> scaledPowers(long long base, long long cap) {
    std::vector<int> out;
    for (long long v = base; v <= cap && v < (1LL << 30); v *= 2)
        out.push_back(int(v));
    if (out.empty()) out.push_back(int(std::max<long long>(1, base)));
    return out;
}

inline QStringList placements() {
    QStringList dims = {"tp", "cp", "dp", "pp"};
    QStringList out;
    std::sort(dims.begin(), dims.end());
    do {
        out << dims.join(", ");
    } while (std::next_permutation(dims.begin(), dims.end()));
    // Megatron's order first.
    out.removeAll("tp, cp, dp, pp");
    out.prepend("tp, cp, dp, pp");
    return out;
}

inline QString placementText(const Strategy& st) {
    QStringList dims;
    for (ParallelDim d : st.placement)
        if (d != ParallelDim::EP) dims << QString::fromStdString(std::string(toString(d)));
    return dims.join(", ");
}

} // namespace madmax::ui
