#include "strategy_panel.hpp"

#include "madmax/pipeline.hpp"
#include "madmax/strategy_space.hpp"

#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QSignalBlocker>
#include <QVBoxLayout>

#include <algorithm>

namespace madmax::ui {

namespace {

struct RowSpec {
    const char* key;
    const char* label;
    const char* tip;
};
const RowSpec kRows[] = {
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
const QStringList kTrainingOnly = {"vp", "cp", "micro_batch", "global_batch"};
const QStringList kServingOnly = {"batch", "input_tokens", "output_tokens"};
const QStringList kMoeOnly = {"ep", "etp"};

std::vector<int> withValue(std::vector<int> v, int current) {
    if (std::find(v.begin(), v.end(), current) == v.end()) v.push_back(current);
    std::sort(v.begin(), v.end());
    return v;
}

std::vector<int> scaledPowers(long long base, long long cap) {
    std::vector<int> out;
    for (long long v = base; v <= cap && v < (1LL << 30); v *= 2)
        out.push_back(int(v));
    if (out.empty()) out.push_back(int(std::max<long long>(1, base)));
    return out;
}

QStringList placements() {
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

QString placementText(const Strategy& st) {
    QStringList dims;
    for (ParallelDim d : st.placement)
        if (d != ParallelDim::EP) dims << QString::fromStdString(std::string(toString(d)));
    return dims.join(", ");
}

} // namespace

QStringList StrategyPanel::keys() {
    QStringList k;
    for (const auto& r : kRows)
        k << r.key;
    return k;
}

StrategyPanel::StrategyPanel(ScenarioDocument* doc, QWidget* parent) : QWidget(parent), doc_(doc) {
    auto* outer = new QVBoxLayout(this);
    auto* kindRow = new QFormLayout;
    kind_ = new QComboBox;
    kind_->addItems({"Training", "Inference serving"});
    kind_->setToolTip("Switch the workload between pre-training and serving; one undoable edit.");
    kindRow->addRow("Workload", kind_);
    outer->addLayout(kindRow);
    auto* degrees = new QGroupBox("Parallelism and batch");
    auto* grid = new QGridLayout(degrees);
    int row = 0;
    for (const auto& spec : kRows) {
        const QString key = spec.key;
        Row r;
        r.label = new QLabel(spec.label);
        r.slider = new QSlider(Qt::Horizontal);
        r.slider->setPageStep(1);
        r.spin = new QSpinBox;
        r.spin->setRange(key == "batch" ? 0 : 1, 1 << 30);
        if (key == "batch") r.spin->setSpecialValueText("auto");
        r.spin->setKeyboardTracking(false);
        for (QWidget* w : {static_cast<QWidget*>(r.label), static_cast<QWidget*>(r.slider),
                           static_cast<QWidget*>(r.spin)})
            w->setToolTip(spec.tip);
        grid->addWidget(r.label, row, 0);
        grid->addWidget(r.slider, row, 1);
        grid->addWidget(r.spin, row, 2);
        ++row;
        connect(r.slider, &QSlider::valueChanged, this, [this, key](int idx) {
            const auto& c = rows_.at(key).choices;
            if (idx >= 0 && idx < int(c.size())) applyValue(key, c[idx]);
        });
        connect(r.spin, &QSpinBox::valueChanged, this, [this, key](int v) { applyValue(key, v); });
        rows_[key] = r;
    }
    outer->addWidget(degrees);
    degrees_ = degrees;
    dlrm_ = new DlrmPanel(doc_);
    outer->addWidget(dlrm_);

    auto* switches = new QGroupBox("Sharding, memory and overlap");
    auto* form = new QFormLayout(switches);
    // A combo box or check box in a form, registered under its key.
    auto addCombo = [&](QFormLayout* into, const QString& key, const QString& label,
                        const QStringList& items, const QString& tip) {
        auto* c = new QComboBox;
        c->addItems(items);
        c->setToolTip(tip);
        into->addRow(label, c);
        combos_[key] = c;
        return c;
    };
    auto addCheck = [&](QFormLayout* into, const QString& key, const QString& label,
                        const QString& tip) {
        auto* c = new QCheckBox(label);
        c->setToolTip(tip);
        into->addRow(c);
        checks_[key] = c;
        return c;
    };
    addCombo(form, "zero_stage", "ZeRO stage",
             {"0 — replicated", "1 — optimizer sharded", "2 — + gradients", "3 — + weights (FSDP)"},
             "Rajbhandari et al. SC20: what data-parallel ranks shard.");
    addCombo(form, "recompute", "Recompute", {"none", "selective", "full"},
             "Activation recompute (Korthikanti et al. 2022): selective recomputes the attention "
             "core, full the whole layer.");
    recomputeLayers_ = new QSpinBox;
    recomputeLayers_->setRange(0, 1 << 20);
    recomputeLayers_->setSpecialValueText("every layer");
    recomputeLayers_->setKeyboardTracking(false); // typing "12" does not try 1 first
    recomputeLayers_->setToolTip(
        "With full recompute: recompute only the first n layers of each model chunk and keep the "
        "others' activations (Megatron-Core recompute_method \"block\", recompute_num_layers). "
        "Fewer layers recomputed: less extra forward work, more activation memory.");
    form->addRow("Layers recomputed per chunk", recomputeLayers_);
    offloadLayers_ = new QSpinBox;
    offloadLayers_->setRange(0, 1 << 20);
    offloadLayers_->setSpecialValueText("none");
    offloadLayers_->setKeyboardTracking(false);
    offloadLayers_->setToolTip(
        "Activation offloading (Megatron-Core cpu_offloading_num_layers): the first n layers' "
        "activations go to host memory in the forward pass and come back in the backward, over "
        "the system's host link (host_link_gbps), overlapping the following layers. Megatron-Core "
        "allows it with PP 1, no recompute and no CUDA graphs.");
    form->addRow("Layers offloaded to host", offloadLayers_);
    addCombo(
        form, "placement", "Placement (innermost first)", placements(),
        "Rank order: the first dimension gets neighbouring ranks (NVLink), the last the farthest.");
    addCheck(form, "sequence_parallel", "Sequence parallelism",
             "Split norms and dropout along the sequence across TP ranks (Korthikanti et al. "
             "2022): reduce-scatter + all-gather replace the all-reduce.");
    addCheck(form, "tp_comm_overlap", "TP communication overlap",
             "Pipeline TP collectives with the adjacent GEMMs (Wang et al. ASPLOS 2023).");
    addCheck(form, "dp_overlap", "Overlap gradient reduction",
             "Bucketed gradient reduction overlapping the backward pass (PyTorch DDP).");
    addCheck(form, "cuda_graphs", "CUDA graphs",
             "The step is captured in CUDA graphs: the host replays them in one launch each, "
             "so the CPU time per kernel (GPU calibration host_op_us) never leaves the GPU "
             "idle. Off: eager PyTorch, where small MoE layers can be host-bound.");
    outer->addWidget(switches);
    switches_ = switches;

    moe_ = new QGroupBox("Mixture of experts");
    auto* mform = new QFormLayout(moe_);
    imbalance_ = new QDoubleSpinBox;
    imbalance_->setRange(1.0, 4.0);
    imbalance_->setSingleStep(0.05);
    imbalance_->setDecimals(2);
    imbalance_->setToolTip("Max/mean tokens per expert on the busiest rank: 1.00 = force-balanced "
                           "(benchmarks), 1.1-1.5 for learned routing. Scales that rank's expert "
                           "GEMMs and all-to-all bytes.");
    capacity_ = new QDoubleSpinBox;
    capacity_->setRange(0.0, 16.0);
    capacity_->setSingleStep(0.25);
    capacity_->setDecimals(2);
    capacity_->setSpecialValueText("dropless");
    capacity_->setToolTip("Capacity factor: tokens an expert accepts, × the mean; the excess is "
                          "dropped (the drop rate is reported). 0 = dropless.");
    nodeLimit_ = new QSpinBox;
    nodeLimit_->setRange(0, 1 << 20);
    nodeLimit_->setSpecialValueText("off");
    nodeLimit_->setToolTip("Node-limited routing (DeepSeek-V3: 4): each token reaches at most this "
                           "many nodes, cutting the all-to-all's network bytes.");
    for (auto* sb : {imbalance_, capacity_})
        sb->setKeyboardTracking(false);
    nodeLimit_->setKeyboardTracking(false);
    mform->addRow("Load imbalance", imbalance_);
    mform->addRow("Capacity factor", capacity_);
    mform->addRow("Node limit", nodeLimit_);
    auto* dispatcher =
        addCombo(mform, "moe_dispatcher", "Dispatch", {"flat all-to-all", "per-node (DeepEP)"},
                 "Flat: every token copy travels to its expert's GPU. Per-node (DeepEP): once "
                 "per destination node over the network, then NVLink.");
    addCheck(mform, "moe_fp8_dispatch", "FP8 dispatch",
             "Send the dispatched tokens in FP8 (+ a scale per 128 channels); the combine stays "
             "16-bit (DeepEP).");
    addCheck(mform, "moe_fused_mlp", "Fused grouped-MLP kernels",
             "Transformer Engine's CuTe DSL grouped MLP (Megatron-Core cutedsl_fused_grouped_mlp): "
             "the activation, its clamp, bias and routing weight in the GEMM epilogues, and the "
             "token counts kept on the GPU (no host sync at the router). Off: Megatron-Core's "
             "separate activation passes.");
    addCheck(mform, "moe_a2a_overlap", "Overlap all-to-all with another micro-batch",
             "DualPipe / 1F1B all-to-all overlap: dispatch and combine hide behind another "
             "micro-batch's compute, which loses the SMs the communication kernels hold while "
             "they run.");
    auto* note = new QLabel("EP and ETP split the experts only; attention runs on TP × CP × DP.");
    note->setWordWrap(true);
    mform->addRow(note);
    outer->addWidget(moe_);
    connect(imbalance_, &QDoubleSpinBox::valueChanged, this, [this](double v) {
        applyEdits({{"model.moe.load_imbalance", v}}, "load imbalance", imbalance_);
    });
    connect(capacity_, &QDoubleSpinBox::valueChanged, this, [this](double v) {
        applyEdits({{"model.moe.capacity_factor", v}}, "capacity factor", capacity_);
    });
    connect(nodeLimit_, &QSpinBox::valueChanged, this, [this](int v) {
        applyEdits({{"strategy.moe_node_limit", v}}, "node limit", nodeLimit_);
    });
    connect(dispatcher, &QComboBox::currentIndexChanged, this, [this](int i) {
        applyEdits({{"strategy.moe_dispatcher", i == 1 ? "deepep" : "all_to_all"}}, "dispatch",
                   combos_["moe_dispatcher"]);
    });
    for (const char* key : {"moe_fp8_dispatch", "moe_fused_mlp", "moe_a2a_overlap"}) {
        const QString k = key;
        connect(checks_[k], &QCheckBox::toggled, this, [this, k](bool on) {
            applyEdits({{"strategy." + k.toStdString(), on}}, k, checks_[k]);
        });
    }

    // Fine-tuning: frozen components (workload.frozen).
    frozen_ = new QGroupBox("Fine-tuning (frozen components)");
    auto* fform = new QFormLayout(frozen_);
    frozenFirst_ = new QSpinBox;
    frozenFirst_->setRange(0, 1 << 20);
    frozenFirst_->setToolTip("The first frozen transformer layer (0 = from the bottom).");
    frozenCount_ = new QSpinBox;
    frozenCount_->setRange(0, 1 << 20);
    frozenCount_->setSpecialValueText("none");
    frozenCount_->setToolTip(
        "Frozen layers: no weight gradients, gradient reduction or optimizer state. Gradients "
        "still flow through them when something below trains; when nothing does, they run "
        "forward only and keep no activations. A pipeline is paced by its slowest stage: "
        "freezing one stage's layers does not speed the step.");
    for (auto* sb : {frozenFirst_, frozenCount_})
        sb->setKeyboardTracking(false);
    loraRank_ = new QSpinBox;
    loraRank_->setRange(0, 1 << 16);
    loraRank_->setSpecialValueText("off");
    loraRank_->setKeyboardTracking(false);
    loraRank_->setToolTip("LoRA (Hu et al. 2021): rank-r adapters beside the linear layers; the "
                          "whole base model is frozen and only the adapters train (their "
                          "gradients, reduction and optimizer state). The adapters' skinny GEMMs "
                          "are memory-bound: they cost more time than their FLOPs suggest.");
    fform->addRow("LoRA rank", loraRank_);
    addCombo(fform, "lora_targets", "LoRA on", {"all", "attention", "mlp"},
             "Which linear layers carry adapters: the attention's Q, K, V and output projections, "
             "the MLP's matrices, or both (MoE layers: attention only).");
    addCombo(fform, "lora_base", "LoRA base", {"bf16", "fp8", "nf4"},
             "The frozen base's stored width: bf16, FP8, or QLoRA's NF4 (4.127 bits with double "
             "quantization). Below bf16 each use of a weight dequantizes it first (a memory "
             "pass); the embedding and head stay 16-bit.");
    fform->addRow("Frozen layers from", frozenFirst_);
    fform->addRow("Frozen layer count", frozenCount_);
    addCheck(fform, "frozen_embedding", "Freeze the embedding",
             "Token or patch embedding (DLRM: the embedding tables: no backward, no gradient "
             "all-to-all, no optimizer rows).");
    addCheck(fform, "frozen_head", "Freeze the head",
             "Final norm and LM head or classifier: its input gradient is still computed when "
             "something below trains.");
    addCheck(fform, "frozen_bottom_mlp", "Freeze the bottom MLP", "DLRM: the dense-feature MLP.");
    addCheck(fform, "frozen_top_mlp", "Freeze the top MLP",
             "DLRM: the top MLP and the interaction's weights; its input gradients still flow "
             "when the tables or the bottom MLP train.");
    outer->addWidget(frozen_);
    for (auto* sb : {frozenFirst_, frozenCount_, loraRank_})
        connect(sb, &QSpinBox::valueChanged, this, [this, sb](int) { applyFrozen(sb); });
    for (const char* key : {"lora_targets", "lora_base"}) {
        QComboBox* c = combos_[key];
        connect(c, &QComboBox::currentIndexChanged, this, [this, c](int) { applyFrozen(c); });
    }
    for (const char* key :
         {"frozen_embedding", "frozen_head", "frozen_bottom_mlp", "frozen_top_mlp"}) {
        QCheckBox* c = checks_[key];
        connect(c, &QCheckBox::toggled, this, [this, c](bool) { applyFrozen(c); });
    }

    serving_ = new QGroupBox("Serving");
    auto* sform = new QFormLayout(serving_);
    auto* precision =
        addCombo(sform, "precision", "Precision", {"bf16", "fp8", "fp4"},
                 "Precision of weights, activations and KV cache (the GPU needs a peak for it).");
    auto* mode = addCombo(sform, "mode", "Mode", {"offline", "server"},
                          "Offline: maximum throughput. Server: the largest batch that meets the "
                          "latency objectives.");
    ttft_ = new QDoubleSpinBox;
    ttft_->setRange(0, 600);
    ttft_->setDecimals(3);
    ttft_->setSuffix(" s");
    ttft_->setSpecialValueText("none");
    ttft_->setToolTip("Time-to-first-token objective (0 = none).");
    tpot_ = new QDoubleSpinBox;
    tpot_->setRange(0, 60000);
    tpot_->setDecimals(1);
    tpot_->setSuffix(" ms");
    tpot_->setSpecialValueText("none");
    tpot_->setToolTip("Time-per-output-token objective (0 = none); drawn as the box on the "
                      "latency-throughput chart.");
    for (auto* sb : {ttft_, tpot_})
        sb->setKeyboardTracking(false);
    sform->addRow("TTFT objective", ttft_);
    sform->addRow("TPOT objective", tpot_);
    outer->addWidget(serving_);
    connect(precision, &QComboBox::currentTextChanged, this, [this](const QString& p) {
        const std::string v = p.toStdString();
        applyEdits({{"workload.precision", v},
                    {"workload.weight_precision", v},
                    {"workload.kv_precision", v}},
                   "serving precision", combos_["precision"]);
    });
    connect(mode, &QComboBox::currentTextChanged, this, [this](const QString& m) {
        applyEdits({{"workload.mode", m.toStdString()}}, "serving mode", combos_["mode"]);
    });
    connect(ttft_, &QDoubleSpinBox::valueChanged, this, [this](double v) {
        applyEdits({{"workload.ttft_objective_s", v}}, "TTFT objective", ttft_);
    });
    connect(tpot_, &QDoubleSpinBox::valueChanged, this, [this](double v) {
        applyEdits({{"workload.tpot_objective_s", v / 1e3}}, "TPOT objective", tpot_);
    });
    connect(kind_, &QComboBox::currentIndexChanged, this,
            [this](int i) { switchWorkload(i == 1); });

    connect(combos_["zero_stage"], &QComboBox::currentIndexChanged, this, [this](int i) {
        applyEdits({{"strategy.zero_stage", i}}, "ZeRO stage", combos_["zero_stage"]);
    });
    connect(combos_["recompute"], &QComboBox::currentTextChanged, this, [this](const QString& t) {
        // A layer count applies to full recompute only: leaving full recomputes no layer fully.
        std::vector<std::pair<std::string, nlohmann::json>> edits{
            {"strategy.recompute", t.toStdString()}};
        if (t != "full") edits.push_back({"strategy.recompute_layers", 0});
        applyEdits(edits, "recompute", combos_["recompute"]);
    });
    connect(recomputeLayers_, &QSpinBox::valueChanged, this, [this](int v) {
        applyEdits({{"strategy.recompute_layers", v}}, "layers recomputed", recomputeLayers_);
    });
    connect(offloadLayers_, &QSpinBox::valueChanged, this, [this](int v) {
        applyEdits({{"strategy.offload_layers", v}}, "layers offloaded", offloadLayers_);
    });
    connect(combos_["placement"], &QComboBox::currentTextChanged, this, [this](const QString& t) {
        nlohmann::json arr = nlohmann::json::array();
        for (const QString& d : t.split(", "))
            arr.push_back(d.toStdString());
        applyEdits({{"strategy.placement", arr}}, "placement", combos_["placement"]);
    });
    for (const char* key : {"sequence_parallel", "tp_comm_overlap", "dp_overlap", "cuda_graphs"}) {
        const QString k = key;
        connect(checks_[k], &QCheckBox::toggled, this, [this, k](bool on) {
            applyEdits({{"strategy." + k.toStdString(), on}}, k, checks_[k]);
        });
    }

    message_ = new QLabel;
    message_->setWordWrap(true);
    message_->setStyleSheet("color: #D55E00;");
    message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    outer->addWidget(message_);
    outer->addStretch(1);

    connect(doc_, &ScenarioDocument::changed, this, &StrategyPanel::refresh);
    refresh(doc_->scenario());
}

void StrategyPanel::refresh(const Scenario& s) {
    const Strategy& st = s.strategy;
    const long long inner = replicaGpus(st);
    const long long maxGpus = (long long)s.system.maxGpus();
    const bool serving = s.workload.kind == WorkloadKind::Inference;
    const auto& inf = s.workload.inference;
    {
        const QSignalBlocker b(kind_);
        kind_->setCurrentIndex(serving ? 1 : 0);
    }
    const bool moe = s.model.isMoe();
    const bool dlrm = s.model.isDlrm();
    // DLRM: the dense part is data-parallel over every GPU; the tables follow the DLRM panel.
    dlrm_->setVisible(dlrm);
    kind_->setEnabled(!dlrm);
    kind_->setToolTip(dlrm ? "DLRM serving is not modelled by the native engine."
                           : "Switch the workload between pre-training and serving; one "
                             "undoable edit.");
    for (auto& [key, row] : rows_) {
        const bool show = dlrm ? (key == "gpus" || key == "global_batch")
                               : (serving ? !kTrainingOnly.contains(key)
                                          : !kServingOnly.contains(key)) &&
                                     (moe || !kMoeOnly.contains(key));
        for (QWidget* w : {static_cast<QWidget*>(row.label), static_cast<QWidget*>(row.slider),
                           static_cast<QWidget*>(row.spin)})
            w->setVisible(show);
    }
    rows_.at("dp").label->setText(serving ? "Replicas" : "DP");
    switches_->setVisible(!serving && !dlrm);
    moe_->setVisible(moe);
    if (moe) {
        const QSignalBlocker b1(imbalance_), b2(capacity_), b3(nodeLimit_),
            b4(combos_["moe_dispatcher"]), b5(checks_["moe_fp8_dispatch"]),
            b6(checks_["moe_a2a_overlap"]), b7(checks_["moe_fused_mlp"]);
        imbalance_->setValue(s.model.moe.loadImbalance);
        capacity_->setValue(s.model.moe.capacityFactor);
        nodeLimit_->setValue(st.moeNodeLimit);
        combos_["moe_dispatcher"]->setCurrentIndex(st.dispatcher == MoeDispatcher::DeepEp ? 1 : 0);
        checks_["moe_fp8_dispatch"]->setChecked(st.moeFp8Dispatch);
        checks_["moe_a2a_overlap"]->setChecked(st.moeA2aOverlap);
        checks_["moe_fused_mlp"]->setChecked(st.moeFusedMlp);
    }
    frozen_->setVisible(!serving);
    if (!serving) {
        const Frozen& f = s.workload.frozen;
        const QSignalBlocker b1(frozenFirst_), b2(frozenCount_), b3(checks_["frozen_embedding"]),
            b4(checks_["frozen_head"]), b5(checks_["frozen_bottom_mlp"]),
            b6(checks_["frozen_top_mlp"]), b7(loraRank_), b8(combos_["lora_targets"]),
            b9(combos_["lora_base"]);
        if (auto* form = qobject_cast<QFormLayout*>(frozen_->layout())) {
            form->setRowVisible(loraRank_, !dlrm);
            form->setRowVisible(combos_["lora_targets"], !dlrm);
            form->setRowVisible(combos_["lora_base"], !dlrm);
        }
        loraRank_->setValue(f.loraRank);
        combos_["lora_targets"]->setCurrentText(
            QString::fromStdString(std::string(toString(f.loraTargets))));
        combos_["lora_targets"]->setEnabled(f.lora());
        combos_["lora_base"]->setCurrentText(f.loraBaseBytes < 1.0   ? "nf4"
                                             : f.loraBaseBytes < 2.0 ? "fp8"
                                                                     : "bf16");
        combos_["lora_base"]->setEnabled(f.lora());
        // LoRA freezes the whole base: the per-part controls say so by being off.
        for (QWidget* w : {static_cast<QWidget*>(frozenFirst_),
                           static_cast<QWidget*>(frozenCount_),
                           static_cast<QWidget*>(checks_["frozen_embedding"]),
                           static_cast<QWidget*>(checks_["frozen_head"])})
            w->setEnabled(!f.lora());
        for (QWidget* w : {static_cast<QWidget*>(frozenFirst_),
                           static_cast<QWidget*>(frozenCount_),
                           static_cast<QWidget*>(checks_["frozen_head"])})
            w->setVisible(!dlrm);
        for (const char* k : {"frozen_bottom_mlp", "frozen_top_mlp"})
            checks_[k]->setVisible(dlrm);
        if (auto* form = qobject_cast<QFormLayout*>(frozen_->layout())) {
            form->setRowVisible(frozenFirst_, !dlrm);
            form->setRowVisible(frozenCount_, !dlrm);
        }
        frozenFirst_->setMaximum(std::max(0, s.model.layers - 1));
        frozenCount_->setMaximum(std::max(0, s.model.layers));
        frozenFirst_->setValue(f.firstLayer);
        frozenCount_->setValue(f.layers);
        checks_["frozen_embedding"]->setText(dlrm ? "Freeze the embedding tables"
                                                  : "Freeze the embedding");
        checks_["frozen_embedding"]->setChecked(f.embedding);
        checks_["frozen_head"]->setChecked(f.head);
        checks_["frozen_bottom_mlp"]->setChecked(f.bottomMlp);
        checks_["frozen_top_mlp"]->setChecked(f.topMlp);
    }
    serving_->setVisible(serving);
    if (serving) {
        const QSignalBlocker b1(combos_["precision"]), b2(combos_["mode"]), b3(ttft_), b4(tpot_);
        combos_["precision"]->setCurrentText(
            QString::fromStdString(std::string(toString(s.workload.precision))));
        combos_["mode"]->setCurrentText(inf.mode == ServingMode::Server ? "server" : "offline");
        ttft_->setValue(inf.ttftObjectiveS);
        tpot_->setValue(inf.tpotObjectiveS * 1e3);
    }
    std::vector<int> batches = {0};
    for (int b = 1; b <= 8192; b *= 2)
        batches.push_back(b);
    std::vector<int> lengths;
    for (int l = 16; l <= 131072; l *= 2)
        lengths.push_back(l);
    std::map<QString, std::pair<std::vector<int>, int>> spec = {
        {"batch", {batches, inf.batch}},
        {"input_tokens", {lengths, std::max(1, inf.inputTokens)}},
        {"output_tokens", {lengths, std::max(1, inf.outputTokens)}},
        {"tp", {tpChoices(s.model), st.tp}},
        {"pp", {ppChoices(s.model), st.pp}},
        {"vp", {vpChoices(s.model, st.pp), st.vp}},
        {"cp", {cpChoices(s.workload.seqLen), st.cp}},
        {"dp", {powersOfTwo(std::max<long long>(1, maxGpus / inner)), st.dp}},
        {"micro_batch", {microBatchChoices(s.workload.globalBatch, st.dp), st.microBatch}},
        {"global_batch",
         {scaledPowers(1LL * st.dp * st.microBatch, 1LL << 22), s.workload.globalBatch}},
        {"gpus", {scaledPowers(inner, maxGpus), s.gpus}},
        {"ep", {moe ? divisorsOf(s.model.moe.experts, s.model.moe.experts) : std::vector<int>{1},
                st.ep}},
        {"etp", {moe ? divisorsOf(s.model.moe.expertFfn, 64) : std::vector<int>{1}, st.etp}},
    };
    for (auto& [key, cv] : spec) {
        Row& r = rows_.at(key);
        r.choices = withValue(cv.first, cv.second);
        const QSignalBlocker b1(r.slider), b2(r.spin);
        r.slider->setRange(0, int(r.choices.size()) - 1);
        r.slider->setValue(
            int(std::find(r.choices.begin(), r.choices.end(), cv.second) - r.choices.begin()));
        r.spin->setValue(cv.second);
    }
    {
        const QSignalBlocker b(combos_["zero_stage"]);
        combos_["zero_stage"]->setCurrentIndex(st.zeroStage);
    }
    {
        const QSignalBlocker b(combos_["recompute"]);
        combos_["recompute"]->setCurrentText(
            QString::fromStdString(std::string(toString(st.recompute))));
    }
    {
        // Up to a whole chunk (which is every layer again); only with full recompute.
        const QSignalBlocker b(recomputeLayers_);
        const bool full = st.recompute == Recompute::Full;
        recomputeLayers_->setRange(0, std::max(st.recomputeLayers, largestChunkLayers(s)));
        recomputeLayers_->setValue(st.recomputeLayers);
        recomputeLayers_->setEnabled(full);
    }
    {
        // Fewer than the model's layers (the last one stays); Megatron-Core's other rules are
        // said when a value breaks them.
        const QSignalBlocker b(offloadLayers_);
        offloadLayers_->setRange(0, std::max(st.offloadLayers, s.model.layers - 1));
        offloadLayers_->setValue(st.offloadLayers);
    }
    {
        const QSignalBlocker b(combos_["placement"]);
        const QString text = placementText(st);
        if (combos_["placement"]->findText(text) < 0) combos_["placement"]->addItem(text);
        combos_["placement"]->setCurrentText(text);
    }
    for (auto [key, value] : {std::pair{"sequence_parallel", st.sequenceParallel},
                              {"tp_comm_overlap", st.tpCommOverlap},
                              {"dp_overlap", st.dpOverlap},
                              {"cuda_graphs", st.cudaGraphs}}) {
        const QSignalBlocker b(checks_[key]);
        checks_[key]->setChecked(value);
    }
}

void StrategyPanel::applyValue(const QString& key, int v) {
    const Scenario& s = doc_->scenario();
    const Strategy& st = s.strategy;
    std::vector<std::pair<std::string, nlohmann::json>> edits;
    auto rederiveDp = [&](long long tp, long long pp, long long cp) {
        if (const int dp = dataParallelDegree(s.gpus, tp, pp, cp))
            edits.push_back({"strategy.dp", dp});
    };
    if (key == "tp") {
        edits.push_back({"strategy.tp", v});
        rederiveDp(v, st.pp, st.cp);
    } else if (key == "pp") {
        edits.push_back({"strategy.pp", v});
        rederiveDp(st.tp, v, st.cp);
    } else if (key == "cp") {
        edits.push_back({"strategy.cp", v});
        rederiveDp(st.tp, st.pp, v);
    } else if (key == "vp") {
        edits.push_back({"strategy.vp", v});
        edits.push_back({"strategy.schedule", v > 1 ? "interleaved" : "1f1b"});
    } else if (key == "dp") {
        edits.push_back({"strategy.dp", v});
        edits.push_back({"gpus", replicaGpus(st) * v});
    } else if (key == "ep") {
        edits.push_back({"strategy.ep", v});
    } else if (key == "etp") {
        edits.push_back({"strategy.etp", v});
    } else if (key == "micro_batch") {
        edits.push_back({"strategy.micro_batch", v});
    } else if (key == "global_batch") {
        edits.push_back({"workload.global_batch", v});
    } else if (key == "batch") {
        edits.push_back({"workload.batch", v});
    } else if (key == "input_tokens") {
        edits.push_back({"workload.input_tokens", v});
    } else if (key == "output_tokens") {
        edits.push_back({"workload.output_tokens", v});
    } else if (key == "gpus") {
        edits.push_back({"gpus", v});
        rederiveDp(st.tp, st.pp, st.cp);
    }
    Row& row = rows_.at(key);
    const QString what = row.label->text() + " = " + QString::number(v);
    const QString err = doc_->setFields(edits, what);
    if (err.isEmpty()) {
        showMessage({}, nullptr);
        return;
    }
    // Refused: slider and box both show the value tried (so the three agree), and the message
    // says the charts still show the last valid scenario.
    {
        const QSignalBlocker b1(row.slider), b2(row.spin);
        row.spin->setValue(v);
        const auto at = std::find(row.choices.begin(), row.choices.end(), v);
        if (at != row.choices.end()) row.slider->setValue(int(at - row.choices.begin()));
    }
    showMessage(QString("%1 is not applied: %2. The charts still show the last valid scenario.")
                    .arg(what, err),
                row.spin);
}

void StrategyPanel::switchWorkload(bool serving) {
    const Scenario& s = doc_->scenario();
    const Strategy& st = s.strategy;
    std::vector<std::pair<std::string, nlohmann::json>> edits;
    if (serving) {
        const std::string prec = s.system.gpu.peak(Precision::FP8) > 0 ? "fp8" : "bf16";
        edits.push_back({"workload",
                         {{"kind", "inference"},
                          {"input_tokens", 1024},
                          {"output_tokens", 256},
                          {"batch", 0},
                          {"precision", prec},
                          {"weight_precision", prec},
                          {"kv_precision", prec}}});
        edits.push_back({"strategy.vp", 1});
        edits.push_back({"strategy.cp", 1});
        edits.push_back({"strategy.schedule", "1f1b"});
        if (s.model.layers % st.pp == 0) { // an uneven split (e.g. 61 layers) stays as it is
            edits.push_back({"strategy.first_stage_layers", 0});
            edits.push_back({"strategy.last_stage_layers", 0});
        }
        if (const int replicas = dataParallelDegree(s.gpus, st.tp, st.pp, 1)) {
            edits.push_back({"strategy.dp", replicas});
            // MoE: the experts stay on EP ranks when they still fold onto TP × replicas.
            if (s.model.isMoe() && (1LL * st.tp * replicas) % (1LL * st.ep * st.etp) != 0) {
                edits.push_back({"strategy.ep", 1});
                edits.push_back({"strategy.etp", 1});
            }
        }
    } else {
        const int dp = st.dp;
        edits.push_back({"workload",
                         {{"kind", "training"},
                          {"global_batch", 8 * dp * st.pp},
                          {"seq_len", 4096},
                          {"precision", "bf16"}}});
        edits.push_back({"strategy.micro_batch", 1});
    }
    applyEdits(edits, serving ? "switch to serving" : "switch to training", kind_);
    if (!message().isEmpty()) refresh(doc_->scenario()); // refused: show the workload as it is
}

void StrategyPanel::applyEdits(const std::vector<std::pair<std::string, nlohmann::json>>& edits,
                               const QString& what, QWidget* source) {
    const QString err = doc_->setFields(edits, what);
    showMessage(err, err.isEmpty() ? nullptr : source);
}

void StrategyPanel::applyFrozen(QWidget* source) {
    const bool dlrm = doc_->scenario().model.isDlrm();
    if (!dlrm && loraRank_->value() > 0) {
        applyEdits({{"workload.frozen", nullptr},
                    {"workload.lora",
                     {{"rank", loraRank_->value()},
                      {"targets", combos_["lora_targets"]->currentText().toStdString()},
                      {"base_precision", combos_["lora_base"]->currentText().toStdString()}}}},
                   "LoRA adapters", source);
        return;
    }
    if (source == loraRank_) { // LoRA switched off: back to pre-training, nothing frozen
        applyEdits({{"workload.lora", nullptr}, {"workload.frozen", nullptr}}, "LoRA off",
                   source);
        return;
    }
    nlohmann::json f = nlohmann::json::object();
    if (checks_["frozen_embedding"]->isChecked()) f["embedding"] = true;
    if (dlrm) {
        if (checks_["frozen_bottom_mlp"]->isChecked()) f["bottom_mlp"] = true;
        if (checks_["frozen_top_mlp"]->isChecked()) f["top_mlp"] = true;
    } else {
        if (checks_["frozen_head"]->isChecked()) f["head"] = true;
        if (frozenCount_->value() > 0)
            f["layers"] = {{"first", frozenFirst_->value()}, {"count", frozenCount_->value()}};
    }
    applyEdits({{"workload.lora", nullptr}, {"workload.frozen", f}}, "frozen components", source);
}

void StrategyPanel::showMessage(const QString& text, QWidget* source) {
    if (marked_) marked_->setStyleSheet("");
    marked_ = source;
    if (marked_) marked_->setStyleSheet("background: #FBE3D6;");
    message_->setText(text);
}

} // namespace madmax::ui
