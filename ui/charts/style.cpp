#include "style.hpp"

#include <QAbstractAxis>
#include <QChart>
#include <QLegend>

namespace madmax::ui {

QColor componentColor(Component c) {
    // Okabe–Ito: black, orange, sky blue, bluish green, yellow, blue, vermillion, reddish purple.
    switch (c) {
    case Component::Forward:
        return QColor(0x00, 0x72, 0xB2); // blue
    case Component::Backward:
        return QColor(0x56, 0xB4, 0xE9); // sky blue
    case Component::Recompute:
        return QColor(0x00, 0x9E, 0x73); // bluish green
    case Component::Optimizer:
        return QColor(0x99, 0x99, 0x99); // grey
    case Component::CommTP:
        return QColor(0xE6, 0x9F, 0x00); // orange
    case Component::CommCP:
        return QColor(0xF0, 0xE4, 0x42); // yellow
    case Component::CommEP:
        return QColor(0x88, 0x66, 0x00); // dark yellow
    case Component::CommDP:
        return QColor(0xD5, 0x5E, 0x00); // vermillion
    case Component::CommPP:
        return QColor(0xCC, 0x79, 0xA7); // reddish purple
    case Component::Bubble:
        return QColor(0x33, 0x33, 0x33); // near black
    case Component::Weights:
        return QColor(0x00, 0x72, 0xB2);
    case Component::ExpertWeights:
        return QColor(0x00, 0x45, 0x6B); // a darker blue: the weights' expert share
    case Component::Embedding:
        return QColor(0x88, 0x44, 0xAA); // purple: the sparse part
    case Component::EmbeddingTables:
        return QColor(0x5B, 0x2C, 0x83);
    case Component::HostIdle:
        return QColor(0xDD, 0xDD, 0xDD); // light grey: time the GPU does nothing
    case Component::Overhead:
        return QColor(0x8C, 0x6D, 0x46); // brown: the framework's own time, outside every op
    case Component::Grads:
        return QColor(0x56, 0xB4, 0xE9);
    case Component::OptimizerState:
        return QColor(0x00, 0x9E, 0x73);
    case Component::Activations:
        return QColor(0xE6, 0x9F, 0x00);
    case Component::KvCache:
        return QColor(0xCC, 0x79, 0xA7);
    case Component::Reserve:
        return QColor(0x99, 0x99, 0x99);
    case Component::Baseline:
        return QColor(0xBB, 0xBB, 0xBB);
    }
    return Qt::gray;
}

QString componentName(Component c) {
    switch (c) {
    case Component::Forward:
        return "Forward";
    case Component::Backward:
        return "Backward";
    case Component::Recompute:
        return "Recompute";
    case Component::Optimizer:
        return "Optimizer";
    case Component::CommTP:
        return "TP comm";
    case Component::CommCP:
        return "CP comm";
    case Component::CommEP:
        return "EP comm";
    case Component::CommDP:
        return "DP comm";
    case Component::CommPP:
        return "PP comm";
    case Component::Bubble:
        return "Bubble";
    case Component::Weights:
        return "Weights";
    case Component::ExpertWeights:
        return "Expert weights";
    case Component::Embedding:
        return "Embedding lookups";
    case Component::EmbeddingTables:
        return "Embedding tables";
    case Component::HostIdle:
        return "Host idle";
    case Component::Overhead:
        return "Overhead"; // "Framework overhead" would not fit a single-column legend
    case Component::Grads:
        return "Gradients";
    case Component::OptimizerState:
        return "Optimizer state";
    case Component::Activations:
        return "Activations";
    case Component::KvCache:
        return "KV cache";
    case Component::Reserve:
        return "Reserve";
    case Component::Baseline:
        return "Baseline";
    }
    return {};
}

QString componentTooltip(Component c) {
    switch (c) {
    case Component::Forward:
        return "Forward compute of the critical pipeline stage over all micro-batches: per op "
               "max(FLOPs/(peak·η), bytes/(HBM·η)) + launch (docs/developer/model.md §2).";
    case Component::Backward:
        return "Backward compute: 2× the forward GEMMs (data and weight gradients), 2.5× for flash "
               "attention (Dao 2023).";
    case Component::Recompute:
        return "Recomputed forward work: the whole layer (full) or the attention core (selective), "
               "Korthikanti et al. 2022.";
    case Component::Optimizer:
        return "Optimizer step: HBM-bound over parameters, gradients and Adam state held by the "
               "GPU (ZeRO-sharded).";
    case Component::CommTP:
        return "Tensor-parallel all-reduce (or reduce-scatter + all-gather with sequence "
               "parallelism), 2 per layer each way; exposed unless TP-comm overlap hides it.";
    case Component::CommCP:
        return "Context-parallel exchange of K and V blocks, overlapped with attention (ring "
               "attention).";
    case Component::CommEP:
        return "Expert-parallel all-to-all (MoE): token dispatch to the experts and combine back, "
               "forward and backward; NVLink share of the destinations at NVLink speed, the rest "
               "over the network (per destination node with DeepEP-style dispatch).";
    case Component::CommDP:
        return "Data-parallel gradient reduction (bucketed, overlapping the last backward), ZeRO "
               "parameter all-gathers and FSDP per-layer traffic.";
    case Component::CommPP:
        return "Pipeline point-to-point activations and gradients, v times per micro-batch with "
               "interleaving (Narayanan et al. SC21).";
    case Component::Bubble:
        return "Pipeline fill and drain: (p−1)/v micro-batch passes of the slowest stage "
               "(Narayanan et al. SC21 §2.2).";
    case Component::Weights:
        return "16-bit weights of the stage, ÷TP (÷DP shard with ZeRO-3, plus two gathered "
               "layers); for MoE models without the routed experts.";
    case Component::ExpertWeights:
        return "MoE: the routed experts' 16-bit weights on the fullest stage, split E/EP ways "
               "and ÷ETP (÷EDP shard with ZeRO-3).";
    case Component::Embedding:
        return "DLRM: embedding lookups (HBM-bound, whole 64-byte lines per row) and their fused "
               "backward + optimizer update, on the most loaded GPU.";
    case Component::EmbeddingTables:
        return "DLRM: the table shards this plan puts on the fullest GPU (rows × dim × "
               "precision); their optimizer state is under optimizer state.";
    case Component::Grads:
        return "Gradients in the reduction precision (÷DP shard from ZeRO-2), Rajbhandari et al. "
               "SC20.";
    case Component::OptimizerState:
        return "Adam fp32 master weights, m and v: 12 B/parameter (÷DP shard from ZeRO-1).";
    case Component::Activations:
        return "Activations kept for backward: Korthikanti et al. 2022 per layer × layers × "
               "in-flight micro-batches of the schedule.";
    case Component::KvCache:
        return "Serving: the keys and values of every admitted sequence, 2·layers·(KV "
               "heads/TP)·head dim·bytes per token (Pope et al. 2022), prompt + output reserved "
               "per sequence.";
    case Component::Reserve:
        return "CUDA context, NCCL buffers, workspace and fragmentation (system preset).";
    case Component::Baseline:
        return "The pinned baseline scenario.";
    case Component::HostIdle:
        return "The GPU waiting for the host to issue kernels: eager PyTorch, host_op_us a "
               "kernel, and a host sync after each dropless MoE router (docs/reference/scenario.md, \"The host "
               "launch bound\"); CUDA graphs remove it. Part of the forward and backward time.";
    case Component::Overhead:
        return "Step time no op accounts for, as the scenario states it: workload.step_overhead_ms "
               "per step plus micro_batch_overhead_ms per micro-batch, and a DLRM loop's synchronous "
               "input read (input_read_gbps). 0 unless stated: the engine assumes none.";
    }
    return {};
}

Qt::BrushStyle componentPattern(Component c) {
    static const Qt::BrushStyle patterns[] = {
        Qt::SolidPattern,  Qt::BDiagPattern, Qt::FDiagPattern, Qt::Dense4Pattern,
        Qt::CrossPattern,  Qt::HorPattern,   Qt::VerPattern,   Qt::DiagCrossPattern,
        Qt::Dense6Pattern, Qt::Dense2Pattern};
    return patterns[static_cast<int>(c) % 10];
}

ChartStyle ChartStyle::screen(bool dark, double fontScale) {
    ChartStyle s;
    s.dark = dark;
    s.fontScale = fontScale;
    s.fontPointSize = 9;
    return s;
}

ChartStyle ChartStyle::paper(bool hatching) {
    ChartStyle s;
    s.publication = true;
    s.hatching = hatching;
    s.fontPointSize = 8;
    return s;
}

QBrush componentBrush(Component c, const ChartStyle& style) {
    QColor col = componentColor(c);
    if (style.hatching) return QBrush(col.darker(150), componentPattern(c));
    return QBrush(col);
}

void applyChartStyle(QChart* chart, const ChartStyle& style) {
    chart->setAnimationOptions(QChart::NoAnimation);
    chart->setDropShadowEnabled(false);
    chart->setBackgroundRoundness(0);
    QFont f(style.fontFamily);
    f.setPointSizeF(style.fontPointSize * style.fontScale);
    QFont title = f;
    title.setPointSizeF(f.pointSizeF() * 1.15);
    title.setBold(true);
    if (style.publication) {
        chart->setTheme(QChart::ChartThemeLight);
        chart->setBackgroundBrush(Qt::white);
        chart->setMargins(QMargins(2, 2, 2, 2));
    } else {
        chart->setTheme(style.dark ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    }
    chart->setTitleFont(title);
    chart->legend()->setFont(f);
    for (QAbstractAxis* a : chart->axes()) {
        a->setLabelsFont(f);
        a->setTitleFont(f);
    }
}

} // namespace madmax::ui
