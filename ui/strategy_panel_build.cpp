// The strategy panel's widgets, built once: the degree sliders, the sharding and overlap
// switches, the MoE, fine-tuning and serving groups, each edit wired to one undoable change.
#include "strategy_panel.hpp"

#include "strategy_rows.hpp"

#include "madmax/pipeline_schedule.hpp"

#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QVBoxLayout>

namespace madmax::ui {

QComboBox* StrategyPanel::addCombo(QFormLayout* into, const QString& key, const QString& label,
                                   const QStringList& items, const QString& tip) {
    auto* c = new QComboBox;
    c->addItems(items);
    c->setToolTip(tip);
    into->addRow(label, c);
    combos_[key] = c;
    return c;
}

QCheckBox* StrategyPanel::addCheck(QFormLayout* into, const QString& key, const QString& label,
                                   const QString& tip) {
    auto* c = new QCheckBox(label);
    c->setToolTip(tip);
    into->addRow(c);
    checks_[key] = c;
    return c;
}

/// One check box per switch of the group (madmax/strategy_switches.hpp: key, label, help), each
/// toggling strategy.<key> as one undoable edit.
void StrategyPanel::addSwitches(QFormLayout* into, StrategySwitch::Group group) {
    for (const StrategySwitch& sw : strategySwitches()) {
        if (sw.group != group) continue;
        const QString k = QString::fromUtf8(sw.key.data(), qsizetype(sw.key.size()));
        QCheckBox* c = addCheck(into, k, QString::fromUtf8(sw.label.data(), qsizetype(sw.label.size())),
                                QString::fromUtf8(sw.help.data(), qsizetype(sw.help.size())));
        connect(c, &QCheckBox::toggled, this, [this, k](bool on) {
            applyEdits({{"strategy." + k.toStdString(), on}}, k, checks_[k]);
        });
    }
}

StrategyPanel::StrategyPanel(ScenarioDocument* doc, QWidget* parent) : QWidget(parent), doc_(doc) {
    auto* outer = new QVBoxLayout(this);
    auto* kindRow = new QFormLayout;
    kind_ = new QComboBox;
    kind_->addItems({"Training", "Inference serving"});
    kind_->setToolTip("Switch the workload between pre-training and serving; one undoable edit.");
    kindRow->addRow("Workload", kind_);
    outer->addLayout(kindRow);
    buildDegrees(outer);
    buildSwitches(outer);
    buildMoe(outer);
    buildFineTuning(outer);
    buildOverheads(outer);
    buildServing(outer);
    buildDeployment(outer);
    connect(kind_, &QComboBox::currentIndexChanged, this,
            [this](int i) { switchWorkload(i == 1); });

    connectSwitches();

    message_ = new QLabel;
    message_->setWordWrap(true);
    message_->setStyleSheet("color: #D55E00;");
    message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    outer->addWidget(message_);
    outer->addStretch(1);

    connect(doc_, &ScenarioDocument::changed, this, &StrategyPanel::refresh);
    refresh(doc_->scenario());
}

/// A slider and a spin box per degree, batch and GPU count (kRows).
void StrategyPanel::buildDegrees(QVBoxLayout* outer) {
    auto* degrees = new QGroupBox("Parallelism and batch");
    auto* grid = new QGridLayout(degrees);
    int row = 0;
    for (const auto& spec : kRows) {
        const QString key = spec.key;
        Row r;
        r.label = new QLabel(rowLabel(spec));
        r.slider = new QSlider(Qt::Horizontal);
        r.slider->setPageStep(1);
        r.spin = new QSpinBox;
        r.spin->setRange(key == "batch" ? 0 : 1, 1 << 30);
        if (key == "batch") r.spin->setSpecialValueText("auto");
        r.spin->setKeyboardTracking(false);
        for (QWidget* w : {static_cast<QWidget*>(r.label), static_cast<QWidget*>(r.slider),
                           static_cast<QWidget*>(r.spin)})
            w->setToolTip(rowTip(spec));
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
}

/// ZeRO, recompute, offload, placement and the overlap switches.
void StrategyPanel::buildSwitches(QVBoxLayout* outer) {
    auto* switches = new QGroupBox("Sharding, memory and overlap");
    auto* form = new QFormLayout(switches);
    addCombo(form, "zero_stage", numberLabel("zero_stage"),
             {"0 — replicated", "1 — optimizer sharded", "2 — + gradients", "3 — + weights (FSDP)"},
             fromView(findStrategyNumber("zero_stage")->help));
    addCombo(form, "fsdp_style", "ZeRO-3 coordinator", {"overlapped", "deepspeed-legacy"},
             "How ZeRO-3 gathers weights. overlapped: behind the compute (FSDP, Megatron-FSDP, "
             "DeepSpeed ≥ 0.6). deepspeed-legacy: DeepSpeed's stage 3 up to v0.5.10 — each "
             "linear's weight gathered at that linear after a device-wide host synchronise, "
             "only the next weight prefetched, the gradient bucket's reduce-scatter exposed. "
             "Needs ZeRO stage 3 and a dense model.");
    addCombo(form, "recompute", "Recompute", {"none", "selective", "full"},
             "Activation recompute (Korthikanti et al. 2022): selective recomputes the attention "
             "core, full the whole layer.");
    {
        // The schedules the core models, by their scenario names, each with its source.
        QStringList names, sources;
        for (const ScheduleModel& m : scheduleModels()) {
            names << QString::fromUtf8(m.name.data(), int(m.name.size()));
            sources << names.back() + ": " + QString::fromUtf8(m.source.data(), int(m.source.size()));
        }
        addCombo(form, "schedule", "Pipeline schedule", names,
                 "How the pipeline orders micro-batches; the bubble, activations held and parameter "
                 "copies follow.\n" + sources.join("\n") +
                 "\nMore than one virtual stage is the interleaved schedule.");
    }
    recomputeLayers_ = new QSpinBox;
    declareSpin(recomputeLayers_, "recompute_layers");
    recomputeLayers_->setSpecialValueText("every layer");
    recomputeLayers_->setKeyboardTracking(false); // typing "12" does not try 1 first
    form->addRow(numberLabel("recompute_layers"), recomputeLayers_);
    offloadLayers_ = new QSpinBox;
    declareSpin(offloadLayers_, "offload_layers");
    offloadLayers_->setSpecialValueText("none");
    offloadLayers_->setKeyboardTracking(false);
    form->addRow(numberLabel("offload_layers"), offloadLayers_);
    addCombo(
        form, "placement", "Placement (innermost first)", placements(),
        "Rank order: the first dimension gets neighbouring ranks (NVLink), the last the farthest.");
    addSwitches(form, StrategySwitch::Group::Parallelism);
    outer->addWidget(switches);
    switches_ = switches;
}

/// Routing and dispatch of mixture-of-experts models.
void StrategyPanel::buildMoe(QVBoxLayout* outer) {
    moe_ = new QGroupBox("Mixture of experts");
    auto* mform = new QFormLayout(moe_);
    imbalance_ = new QDoubleSpinBox;
    imbalance_->setRange(1.0, 4.0);
    imbalance_->setSingleStep(0.05);
    imbalance_->setDecimals(2);
    imbalance_->setToolTip("The busiest GPU of the EP group's routed tokens over the mean: 1.00 = "
                           "force-balanced (benchmarks); learned routing served after EPLB "
                           "measures about 1.3 (SGLang, DeepSeek-V3 at EP32). Scales that GPU's "
                           "expert GEMMs and all-to-all bytes; no effect without EP.");
    capacity_ = new QDoubleSpinBox;
    capacity_->setRange(0.0, 16.0);
    capacity_->setSingleStep(0.25);
    capacity_->setDecimals(2);
    capacity_->setSpecialValueText("dropless");
    capacity_->setToolTip("Capacity factor: tokens an expert accepts, × the mean; the excess is "
                          "dropped (the drop rate is reported). 0 = dropless.");
    nodeLimit_ = new QSpinBox;
    declareSpin(nodeLimit_, "moe_node_limit");
    nodeLimit_->setSpecialValueText("off");
    for (auto* sb : {imbalance_, capacity_})
        sb->setKeyboardTracking(false);
    nodeLimit_->setKeyboardTracking(false);
    mform->addRow("Load imbalance", imbalance_);
    mform->addRow("Capacity factor", capacity_);
    mform->addRow(numberLabel("moe_node_limit"), nodeLimit_);
    auto* dispatcher =
        addCombo(mform, "moe_dispatcher", "Dispatch", {"flat all-to-all", "per-node (DeepEP)"},
                 "Flat: every token copy travels to its expert's GPU. Per-node (DeepEP): once "
                 "per destination node over the network, then NVLink.");
    addSwitches(mform, StrategySwitch::Group::MixtureOfExperts);
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
}

/// Framework time no op accounts for (data loading, logging, the host's step work), as the user
/// states it: the engine assumes none, and the breakdown shows what is stated as its own segment.
void StrategyPanel::buildOverheads(QVBoxLayout* outer) {
    overheads_ = new QGroupBox("Framework overhead (stated)");
    auto* form = new QFormLayout(overheads_);
    auto ms = [](const QString& tip) {
        auto* sb = new QDoubleSpinBox;
        sb->setRange(0.0, 1e7);
        sb->setDecimals(1);
        sb->setSingleStep(1.0);
        sb->setSuffix(" ms");
        sb->setSpecialValueText("none stated");
        sb->setKeyboardTracking(false);
        sb->setToolTip(tip);
        return sb;
    };
    stepOverhead_ = ms("workload.step_overhead_ms: time per step no op accounts for (data "
                       "loading, logging, the host's step work). The engine assumes none; a "
                       "measured figure belongs here.");
    microBatchOverhead_ = ms("workload.micro_batch_overhead_ms: time per micro-batch no op "
                             "accounts for (the schedule's host work between micro-batches).");
    form->addRow("Per step", stepOverhead_);
    form->addRow("Per micro-batch", microBatchOverhead_);
    outer->addWidget(overheads_);
    connect(stepOverhead_, &QDoubleSpinBox::valueChanged, this, [this](double v) {
        applyEdits({{"workload.step_overhead_ms", v}}, "framework overhead", stepOverhead_);
    });
    connect(microBatchOverhead_, &QDoubleSpinBox::valueChanged, this, [this](double v) {
        applyEdits({{"workload.micro_batch_overhead_ms", v}}, "framework overhead",
                   microBatchOverhead_);
    });
}

/// What fine-tuning freezes: layers, components, LoRA.
void StrategyPanel::buildFineTuning(QVBoxLayout* outer) {
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
}

/// Serving deployment: the pool (disaggregation), the prefix cache and speculative decoding.
void StrategyPanel::buildDeployment(QVBoxLayout* outer) {
    deployment_ = new QGroupBox("Serving deployment");
    auto* form = new QFormLayout(deployment_);
    auto* phase = addCombo(form, "phase", "Pool", {"aggregated", "prefill", "decode"},
                           "Aggregated: prefill and decode on every GPU. Prefill or decode: these "
                           "GPUs are one pool of a disaggregated deployment; the KV cache of each "
                           "prompt crosses the scale-out network between them.");
    auto percent = [](double max, const QString& tip) {
        auto* sb = new QDoubleSpinBox;
        sb->setRange(0, max);
        sb->setDecimals(1);
        sb->setSuffix(" %");
        sb->setKeyboardTracking(false);
        sb->setToolTip(tip);
        return sb;
    };
    prefixHit_ = percent(99.9, "Share of prompt tokens whose KV cache the prefix cache holds: "
                               "their prefill compute is skipped, not their memory.");
    draftTokens_ = new QSpinBox;
    draftTokens_->setRange(0, 16);
    draftTokens_->setSpecialValueText("off");
    draftTokens_->setKeyboardTracking(false);
    draftTokens_->setToolTip("Speculative decoding / MTP: draft tokens proposed per step; tokens "
                             "per step (1 − α^(k+1)) / (1 − α) (Leviathan et al. 2023).");
    acceptance_ = percent(100, "Chance each draft token is accepted (DeepSeek-V3 MTP: 85–90%).");
    meanLoad_ = percent(100, "Mean load: the share of capacity the traffic uses over the period "
                             "quoted (a day's swing, headroom). A prefill pool idles the rest of "
                             "the time; a decode pool holds this share of its batch. Throughput "
                             "and cost per token are the period's averages.");
    meanLoad_->setMinimum(0.1);
    form->addRow("Mean load", meanLoad_);
    form->addRow("Prefix-cache hits", prefixHit_);
    buildPrefixCache(form);
    auto* mla = addCombo(form, "mla_decode", "MLA decode", {"absorbed", "expanded"},
                         "MLA models: absorbed attends the cached latent itself (W_UK folded "
                         "into the query, W_UV into the output: FlashMLA, SGLang, TensorRT-LLM); "
                         "expanded up-projects every cached latent to the heads' keys and "
                         "values each step, the naive form (DeepSeek-V2 §2.1.2).");
    connect(mla, &QComboBox::currentTextChanged, this, [this, mla](const QString& v) {
        applyEdits({{"workload.mla_decode", v.toStdString()}}, "MLA decode " + v, mla);
    });
    form->addRow("Draft tokens", draftTokens_);
    form->addRow("Acceptance", acceptance_);
    outer->addWidget(deployment_);
    connect(phase, &QComboBox::currentTextChanged, this, [this](const QString& p) {
        applyEdits({{"workload.phase", p.toStdString()}}, "serving pool " + p, combos_["phase"]);
    });
    connect(prefixHit_, &QDoubleSpinBox::valueChanged, this, [this](double v) {
        applyEdits({{"workload.prefix_cache_hit", v / 100}}, "prefix-cache hits", prefixHit_);
    });
    connect(meanLoad_, &QDoubleSpinBox::valueChanged, this, [this](double v) {
        applyEdits({{"workload.mean_load", v / 100}}, "mean load", meanLoad_);
    });
    connect(draftTokens_, &QSpinBox::valueChanged, this, [this](int v) {
        applyEdits({{"workload.draft_tokens", v}}, "draft tokens", draftTokens_);
    });
    connect(acceptance_, &QDoubleSpinBox::valueChanged, this, [this](double v) {
        applyEdits({{"workload.draft_tokens", doc_->scenario().workload.inference.draftTokens},
                    {"workload.acceptance_rate", v / 100}},
                   "draft acceptance", acceptance_);
    });
}

/// Where the prefix cache keeps its hits, and an offload tier's load rate.
void StrategyPanel::buildPrefixCache(QFormLayout* form) {
    auto* tier = addCombo(form, "prefix_cache_tier", "Prefix cache in", {"gpu", "host"},
                          "gpu: the hits' KV cache stays in GPU memory. host: an offload tier "
                          "(host memory, or storage at the rate below) holds it; each prompt's "
                          "hits load into the GPU layer by layer beside its prefill.");
    prefixLoad_ = new QDoubleSpinBox;
    prefixLoad_->setRange(0, 1e4);
    prefixLoad_->setDecimals(1);
    prefixLoad_->setSuffix(" GB/s");
    prefixLoad_->setSpecialValueText("host link");
    prefixLoad_->setKeyboardTracking(false);
    prefixLoad_->setToolTip("The offload tier's read rate per GPU; 'host link': the system's "
                            "host_link_gbps (PCIe or NVLink-C2C to host memory).");
    form->addRow("Prefix load rate", prefixLoad_);
    connect(tier, &QComboBox::currentTextChanged, this, [this, tier](const QString& t) {
        const bool host = t == "host";
        applyEdits({{"workload.prefix_cache_tier", t.toStdString()},
                    {"workload.prefix_cache_load_gbps",
                     host ? nlohmann::json(prefixLoad_->value()) : nlohmann::json(nullptr)}},
                   "prefix cache in " + t, tier);
    });
    connect(prefixLoad_, &QDoubleSpinBox::valueChanged, this, [this](double v) {
        applyEdits({{"workload.prefix_cache_tier", "host"}, {"workload.prefix_cache_load_gbps", v}},
                   "prefix load rate", prefixLoad_);
    });
}

/// Serving precision, mode and latency objectives.
void StrategyPanel::buildServing(QVBoxLayout* outer) {
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
}

/// The sharding, recompute, offload, placement and overlap switches, each one undoable edit.
void StrategyPanel::connectSwitches() {
    connect(combos_["zero_stage"], &QComboBox::currentIndexChanged, this, [this](int i) {
        // DeepSpeed's legacy coordinator is ZeRO-3's: leaving stage 3 leaves it too.
        std::vector<std::pair<std::string, nlohmann::json>> edits{{"strategy.zero_stage", i}};
        if (i != 3) edits.push_back({"strategy.fsdp_style", "overlapped"});
        applyEdits(edits, "ZeRO stage", combos_["zero_stage"]);
    });
    connect(combos_["fsdp_style"], &QComboBox::currentTextChanged, this, [this](const QString& t) {
        applyEdits({{"strategy.fsdp_style", t.toStdString()}}, "ZeRO-3 coordinator " + t,
                   combos_["fsdp_style"]);
    });
    connect(combos_["recompute"], &QComboBox::currentTextChanged, this, [this](const QString& t) {
        // A layer count applies to full recompute only: leaving full recomputes no layer fully.
        std::vector<std::pair<std::string, nlohmann::json>> edits{
            {"strategy.recompute", t.toStdString()}};
        if (t != "full") edits.push_back({"strategy.recompute_layers", 0});
        applyEdits(edits, "recompute", combos_["recompute"]);
    });
    connect(combos_["schedule"], &QComboBox::currentTextChanged, this, [this](const QString& t) {
        applyEdits({{"strategy.schedule", t.toStdString()}}, "pipeline schedule " + t,
                   combos_["schedule"]);
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
}

} // namespace madmax::ui
