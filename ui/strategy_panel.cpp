#include "strategy_panel.hpp"

#include "strategy_rows.hpp"

#include "madmax/pipeline.hpp"
#include "madmax/scenario_io.hpp"
#include "madmax/strategy_space.hpp"

#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QSignalBlocker>
#include <QVBoxLayout>

#include <algorithm>
#include <map>

namespace madmax::ui {

QStringList StrategyPanel::keys() {
    QStringList k;
    for (const auto& r : kRows)
        k << r.key;
    return k;
}

/// The serving groups show for serving workloads, with the workload's values.
void StrategyPanel::syncServing(const Scenario& s, bool serving) {
    const InferenceWorkload& inf = s.workload.inference;
    serving_->setVisible(serving);
    deployment_->setVisible(serving);
    if (!serving) return;
    syncDeployment(inf);
    {
        QComboBox* mla = combos_["mla_decode"];
        const QSignalBlocker block(mla);
        mla->setCurrentText(QString::fromStdString(std::string(toString(inf.mlaDecode))));
        mla->setEnabled(s.model.mla); // MLA attention only (the engine refuses it otherwise)
    }
    const QSignalBlocker b1(combos_["precision"]), b2(combos_["mode"]), b3(ttft_), b4(tpot_);
    combos_["precision"]->setCurrentText(
        QString::fromStdString(std::string(toString(s.workload.precision))));
    combos_["mode"]->setCurrentText(inf.mode == ServingMode::Server ? "server" : "offline");
    ttft_->setValue(inf.ttftObjectiveS);
    tpot_->setValue(inf.tpotObjectiveS * 1e3);
}

/// The serving deployment controls show the workload's pool, prefix cache and speculation.
void StrategyPanel::syncDeployment(const InferenceWorkload& inf) {
    const QSignalBlocker b1(combos_["phase"]), b2(prefixHit_), b3(draftTokens_), b4(acceptance_),
        b5(combos_["prefix_cache_tier"]), b6(prefixLoad_), b7(meanLoad_);
    combos_["phase"]->setCurrentText(QString::fromStdString(std::string(toString(inf.phase))));
    prefixHit_->setValue(inf.prefixCacheHit * 100);
    meanLoad_->setValue(inf.meanLoad * 100);
    combos_["prefix_cache_tier"]->setCurrentText(
        QString::fromStdString(std::string(toString(inf.prefixCacheTier))));
    prefixLoad_->setValue(inf.prefixCacheLoadBytesPerS / 1e9);
    prefixLoad_->setEnabled(inf.prefixCacheTier == PrefixCacheTier::Host);
    draftTokens_->setValue(inf.draftTokens);
    acceptance_->setValue(inf.acceptanceRate * 100);
    acceptance_->setEnabled(inf.draftTokens > 0);
}

/// The ZeRO, schedule and recompute combos show the strategy's values.
void StrategyPanel::syncCombos(const Strategy& st) {
    const auto text = [](auto v) { return QString::fromStdString(std::string(toString(v))); };
    for (auto [key, value] : {std::pair{"schedule", text(st.schedule)},
                              std::pair{"recompute", text(st.recompute)},
                              std::pair{"fsdp_style", text(st.fsdpStyle)}}) {
        const QSignalBlocker b(combos_[key]);
        combos_[key]->setCurrentText(value);
    }
    const QSignalBlocker b(combos_["zero_stage"]);
    combos_["zero_stage"]->setCurrentIndex(st.zeroStage);
    // The coordinator gathers ZeRO-3's weights: nothing to choose below stage 3.
    combos_["fsdp_style"]->setEnabled(st.zeroStage == 3);
}

void StrategyPanel::refresh(const Scenario& s) {
    const Strategy& st = s.strategy;
    const bool serving = s.workload.kind == WorkloadKind::Inference;
    {
        const QSignalBlocker b(kind_);
        kind_->setCurrentIndex(serving ? 1 : 0);
    }
    const bool moe = s.model.isMoe();
    const bool dlrm = s.model.isDlrm();
    syncVisibility(serving, moe, dlrm);
    moe_->setVisible(moe);
    if (moe) syncMoe(s);
    frozen_->setVisible(!serving);
    if (!serving) syncFrozen(s, dlrm);
    overheads_->setVisible(!serving);
    if (!serving) {
        const QSignalBlocker b1(stepOverhead_), b2(microBatchOverhead_);
        stepOverhead_->setValue(s.workload.stepOverheadS * 1e3);
        microBatchOverhead_->setValue(s.workload.microBatchOverheadS * 1e3);
    }
    syncServing(s, serving);
    syncSliders(s);
    syncCombos(st);
    syncLayerControls(s);
}

/// Which rows the workload shows: DLRM's dense part is data-parallel over every GPU (its
/// tables follow the DLRM panel); serving and training each hide the other's rows; MoE rows
/// only for an MoE model.
void StrategyPanel::syncVisibility(bool serving, bool moe, bool dlrm) {
    dlrm_->setVisible(dlrm);
    kind_->setEnabled(!dlrm);
    kind_->setToolTip(dlrm ? "DLRM serving is not modelled by the native engine."
                           : "Switch the workload between pre-training and serving; one "
                             "undoable edit.");
    for (auto& [key, row] : rows_) {
        const bool show =
            dlrm ? (key == "gpus" || key == "global_batch")
                 : (serving ? !kTrainingOnly.contains(key) : !kServingOnly.contains(key)) &&
                       (moe || !kMoeOnly.contains(key));
        for (QWidget* w : {static_cast<QWidget*>(row.label), static_cast<QWidget*>(row.slider),
                           static_cast<QWidget*>(row.spin)})
            w->setVisible(show);
    }
    rows_.at("dp").label->setText(serving ? "Replicas" : "DP");
    switches_->setVisible(!serving && !dlrm);
}

void StrategyPanel::syncMoe(const Scenario& s) {
    const Strategy& st = s.strategy;
    const QSignalBlocker b1(imbalance_), b2(capacity_), b3(nodeLimit_),
        b4(combos_["moe_dispatcher"]);
    imbalance_->setValue(s.model.moe.loadImbalance);
    capacity_->setValue(s.model.moe.capacityFactor);
    nodeLimit_->setValue(st.moeNodeLimit);
    combos_["moe_dispatcher"]->setCurrentIndex(st.dispatcher == MoeDispatcher::DeepEp ? 1 : 0);
    syncSwitches(st, StrategySwitch::Group::MixtureOfExperts);
}

void StrategyPanel::syncSwitches(const Strategy& st, StrategySwitch::Group group) {
    for (const StrategySwitch& sw : strategySwitches()) {
        if (sw.group != group) continue;
        QCheckBox* c = checks_.at(QString::fromUtf8(sw.key.data(), qsizetype(sw.key.size())));
        const QSignalBlocker b(c);
        c->setChecked(st.*sw.member);
    }
}

/// The fine-tuning controls: LoRA freezes the whole base, so the per-part controls are off
/// under it; a DLRM freezes its tables and MLPs, a transformer its layers and head.
void StrategyPanel::syncFrozen(const Scenario& s, bool dlrm) {
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
    for (QWidget* w : {static_cast<QWidget*>(frozenFirst_), static_cast<QWidget*>(frozenCount_),
                       static_cast<QWidget*>(checks_["frozen_embedding"]),
                       static_cast<QWidget*>(checks_["frozen_head"])})
        w->setEnabled(!f.lora());
    for (QWidget* w : {static_cast<QWidget*>(frozenFirst_), static_cast<QWidget*>(frozenCount_),
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

/// Each slider's choices for the scenario, with its current value among them.
void StrategyPanel::syncSliders(const Scenario& s) {
    const Strategy& st = s.strategy;
    const auto& inf = s.workload.inference;
    const bool moe = s.model.isMoe();
    const long long inner = replicaGpus(st);
    const long long maxGpus = (long long)s.system.maxGpus();
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
        {"ep",
         {moe ? divisorsOf(s.model.moe.experts, s.model.moe.experts) : std::vector<int>{1}, st.ep}},
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
}

/// Recompute and offload counts, the placement and the switches.
void StrategyPanel::syncLayerControls(const Scenario& s) {
    const Strategy& st = s.strategy;
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
    syncSwitches(st, StrategySwitch::Group::Parallelism);
}

void StrategyPanel::applyValue(const QString& key, int v) {
    const Scenario& s = doc_->scenario();
    // The row's scenario path; what the change implies for the other fields is the core's rule.
    static const std::map<QString, std::string> kWorkloadRows = {
        {"global_batch", "workload.global_batch"}, {"batch", "workload.batch"},
        {"input_tokens", "workload.input_tokens"}, {"output_tokens", "workload.output_tokens"},
        {"gpus", "gpus"}};
    const auto w = kWorkloadRows.find(key);
    const std::string path = w != kWorkloadRows.end() ? w->second : "strategy." + key.toStdString();
    const FieldEdits edits = impliedEdits(s, path, v);
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
        applyEdits({{"workload.lora", nullptr}, {"workload.frozen", nullptr}}, "LoRA off", source);
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
