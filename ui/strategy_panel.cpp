#include "strategy_panel.hpp"

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
    {"tp", "TP", "Tensor parallel degree: splits every layer's GEMMs and heads (Shoeybi et al. 2019). Must divide the heads, KV heads, FFN width and vocabulary."},
    {"pp", "PP", "Pipeline stages: splits the layers (Narayanan et al. SC21). Must divide the layers (or use an uneven split in the file)."},
    {"vp", "Virtual stages", "Model chunks per GPU with the interleaved schedule: bubble ÷ v at v × the point-to-point traffic."},
    {"cp", "CP", "Context parallel: splits the sequence; K and V blocks circulate while attention computes."},
    {"dp", "DP", "Data-parallel replicas; changing DP changes the GPU count."},
    {"micro_batch", "Micro-batch", "Sequences per micro-batch per GPU; gradient accumulation = global batch / (DP × micro-batch)."},
    {"global_batch", "Global batch", "Sequences per optimizer step."},
    {"gpus", "GPUs", "GPU count; DP follows as GPUs / (TP × PP × CP)."},
};

std::vector<int> withValue(std::vector<int> v, int current) {
    if (std::find(v.begin(), v.end(), current) == v.end()) v.push_back(current);
    std::sort(v.begin(), v.end());
    return v;
}

std::vector<int> scaledPowers(long long base, long long cap) {
    std::vector<int> out;
    for (long long v = base; v <= cap && v < (1LL << 30); v *= 2) out.push_back(int(v));
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
    for (const auto& r : kRows) k << r.key;
    return k;
}

StrategyPanel::StrategyPanel(ScenarioDocument* doc, QWidget* parent) : QWidget(parent), doc_(doc) {
    auto* outer = new QVBoxLayout(this);
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
        r.spin->setRange(1, 1 << 30);
        r.spin->setKeyboardTracking(false);
        for (QWidget* w : {static_cast<QWidget*>(r.label), static_cast<QWidget*>(r.slider), static_cast<QWidget*>(r.spin)})
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

    auto* switches = new QGroupBox("Sharding, memory and overlap");
    auto* form = new QFormLayout(switches);
    auto addCombo = [&](const QString& key, const QString& label, const QStringList& items, const QString& tip) {
        auto* c = new QComboBox;
        c->addItems(items);
        c->setToolTip(tip);
        form->addRow(label, c);
        combos_[key] = c;
        return c;
    };
    addCombo("zero_stage", "ZeRO stage", {"0 — replicated", "1 — optimizer sharded", "2 — + gradients", "3 — + weights (FSDP)"},
             "Rajbhandari et al. SC20: what data-parallel ranks shard.");
    addCombo("recompute", "Recompute", {"none", "selective", "full"},
             "Activation recompute (Korthikanti et al. 2022): selective recomputes the attention core, full the whole layer.");
    addCombo("placement", "Placement (innermost first)", placements(),
             "Rank order: the first dimension gets neighbouring ranks (NVLink), the last the farthest.");
    auto addCheck = [&](const QString& key, const QString& label, const QString& tip) {
        auto* c = new QCheckBox(label);
        c->setToolTip(tip);
        form->addRow(c);
        checks_[key] = c;
        return c;
    };
    addCheck("sequence_parallel", "Sequence parallelism", "Split norms and dropout along the sequence across TP ranks (Korthikanti et al. 2022): reduce-scatter + all-gather replace the all-reduce.");
    addCheck("tp_comm_overlap", "TP communication overlap", "Pipeline TP collectives with the adjacent GEMMs (Wang et al. ASPLOS 2023).");
    addCheck("dp_overlap", "Overlap gradient reduction", "Bucketed gradient reduction overlapping the backward pass (PyTorch DDP).");
    outer->addWidget(switches);

    connect(combos_["zero_stage"], &QComboBox::currentIndexChanged, this,
            [this](int i) { applyEdits({{"strategy.zero_stage", i}}, "ZeRO stage", combos_["zero_stage"]); });
    connect(combos_["recompute"], &QComboBox::currentTextChanged, this, [this](const QString& t) {
        applyEdits({{"strategy.recompute", t.toStdString()}}, "recompute", combos_["recompute"]);
    });
    connect(combos_["placement"], &QComboBox::currentTextChanged, this, [this](const QString& t) {
        nlohmann::json arr = nlohmann::json::array();
        for (const QString& d : t.split(", ")) arr.push_back(d.toStdString());
        applyEdits({{"strategy.placement", arr}}, "placement", combos_["placement"]);
    });
    for (const char* key : {"sequence_parallel", "tp_comm_overlap", "dp_overlap"}) {
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
    const long long inner = 1LL * st.tp * st.pp * st.cp;
    const long long maxGpus = (long long)s.system.maxGpus();
    std::map<QString, std::pair<std::vector<int>, int>> spec = {
        {"tp", {tpChoices(s.model), st.tp}},
        {"pp", {ppChoices(s.model), st.pp}},
        {"vp", {vpChoices(s.model, st.pp), st.vp}},
        {"cp", {cpChoices(s.workload.seqLen), st.cp}},
        {"dp", {powersOfTwo(std::max<long long>(1, maxGpus / inner)), st.dp}},
        {"micro_batch", {microBatchChoices(s.workload.globalBatch, st.dp), st.microBatch}},
        {"global_batch", {scaledPowers(1LL * st.dp * st.microBatch, 1LL << 22), s.workload.globalBatch}},
        {"gpus", {scaledPowers(inner, maxGpus), s.gpus}},
    };
    for (auto& [key, cv] : spec) {
        Row& r = rows_.at(key);
        r.choices = withValue(cv.first, cv.second);
        const QSignalBlocker b1(r.slider), b2(r.spin);
        r.slider->setRange(0, int(r.choices.size()) - 1);
        r.slider->setValue(int(std::find(r.choices.begin(), r.choices.end(), cv.second) - r.choices.begin()));
        r.spin->setValue(cv.second);
    }
    {
        const QSignalBlocker b(combos_["zero_stage"]);
        combos_["zero_stage"]->setCurrentIndex(st.zeroStage);
    }
    {
        const QSignalBlocker b(combos_["recompute"]);
        combos_["recompute"]->setCurrentText(QString::fromStdString(std::string(toString(st.recompute))));
    }
    {
        const QSignalBlocker b(combos_["placement"]);
        const QString text = placementText(st);
        if (combos_["placement"]->findText(text) < 0) combos_["placement"]->addItem(text);
        combos_["placement"]->setCurrentText(text);
    }
    for (auto [key, value] : {std::pair{"sequence_parallel", st.sequenceParallel}, {"tp_comm_overlap", st.tpCommOverlap},
                              {"dp_overlap", st.dpOverlap}}) {
        const QSignalBlocker b(checks_[key]);
        checks_[key]->setChecked(value);
    }
}

void StrategyPanel::applyValue(const QString& key, int v) {
    const Scenario& s = doc_->scenario();
    const Strategy& st = s.strategy;
    std::vector<std::pair<std::string, nlohmann::json>> edits;
    auto rederiveDp = [&](long long tp, long long pp, long long cp) {
        const long long inner = tp * pp * cp;
        if (inner > 0 && s.gpus % inner == 0) edits.push_back({"strategy.dp", s.gpus / inner});
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
        edits.push_back({"gpus", 1LL * st.tp * st.pp * st.cp * v});
    } else if (key == "micro_batch") {
        edits.push_back({"strategy.micro_batch", v});
    } else if (key == "global_batch") {
        edits.push_back({"workload.global_batch", v});
    } else if (key == "gpus") {
        edits.push_back({"gpus", v});
        rederiveDp(st.tp, st.pp, st.cp);
    }
    QWidget* source = rows_.at(key).spin;
    applyEdits(edits, rows_.at(key).label->text() + " = " + QString::number(v), source);
}

void StrategyPanel::applyEdits(const std::vector<std::pair<std::string, nlohmann::json>>& edits,
                               const QString& what, QWidget* source) {
    const QString err = doc_->setFields(edits, what);
    showMessage(err, err.isEmpty() ? nullptr : source);
}

void StrategyPanel::showMessage(const QString& text, QWidget* source) {
    if (marked_) marked_->setStyleSheet("");
    marked_ = source;
    if (marked_) marked_->setStyleSheet("background: #FBE3D6;");
    message_->setText(text);
}

} // namespace madmax::ui
