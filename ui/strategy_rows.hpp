// What the strategy panel offers: one row per degree with its label and tip, which rows apply
// to training, serving or MoE, and the placements and value lists its controls step through.
#pragma once

#include "madmax/strategy.hpp"

#include <QString>
#include <QStringList>

#include <algorithm>
#include <vector>

namespace madmax::ui {

struct RowSpec {
    const char* key;
    const char* label;
    const char* tip;
};
inline const RowSpec kRows[] = {
    {"tp", "TP",
     "Tensor parallel degree: splits every layer's GEMMs and heads (Shoeybi et al. 2019). Must "
     "divide the heads, KV heads, FFN width and vocabulary."},
    {"pp", "PP",
     "Pipeline stages: splits the layers (Narayanan et al. SC21). Must divide the layers (or use "
     "an uneven split in the file)."},
    {"vp", "Virtual stages",
     "Model chunks per GPU with the interleaved schedule: bubble ÷ v at v × the point-to-point "
     "traffic."},
    {"cp", "CP",
     "Context parallel: splits the sequence; K and V blocks circulate while attention computes."},
    {"dp", "DP", "Data-parallel replicas; changing DP changes the GPU count."},
    {"ep", "EP",
     "MoE expert parallel: the routed experts split over EP ranks carved out of DP × CP "
     "(Megatron-Core parallel folding). EP divides only the experts, not attention; it must "
     "divide the expert count, and EP × ETP must divide TP × CP × DP."},
    {"etp", "ETP",
     "MoE expert tensor parallel: each expert's FFN split over ETP ranks (independent of the "
     "attention's TP); must divide the expert width."},
    {"micro_batch", "Micro-batch",
     "Sequences per micro-batch per GPU; gradient accumulation = global batch / (DP × "
     "micro-batch)."},
    {"global_batch", "Global batch", "Sequences per optimizer step."},
    {"gpus", "GPUs", "GPU count; DP follows as GPUs / (TP × PP × CP)."},
    {"batch", "Batch",
     "Serving: concurrent sequences per replica; 0 = the largest whose KV cache fits."},
    {"input_tokens", "Input tokens", "Serving: mean prompt length."},
    {"output_tokens", "Output tokens", "Serving: mean generated length."},
};
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
