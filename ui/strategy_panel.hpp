// Sliders (with spin boxes) for the parallel degrees, batch and GPU count, and switches for
// ZeRO, recompute, sequence parallelism, overlaps and placement. Sliders step only through valid
// values; a typed value the core rejects is explained, not snapped.
#pragma once

#include "dlrm_panel.hpp"
#include "document.hpp"

#include "madmax/strategy_switches.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QSlider>
#include <QSpinBox>
#include <QVBoxLayout>
#include <QWidget>

#include <map>
#include <vector>

namespace madmax::ui {

class StrategyPanel : public QWidget {
    Q_OBJECT
  public:
    explicit StrategyPanel(ScenarioDocument* doc, QWidget* parent = nullptr);

    QSlider* slider(const QString& key) const { return rows_.at(key).slider; }
    QSpinBox* spinBox(const QString& key) const { return rows_.at(key).spin; }
    QComboBox* combo(const QString& key) const { return combos_.at(key); }
    QCheckBox* check(const QString& key) const { return checks_.at(key); }
    QSpinBox* recomputeLayersBox() const { return recomputeLayers_; }
    QSpinBox* offloadLayersBox() const { return offloadLayers_; }
    QDoubleSpinBox* prefixHitBox() const { return prefixHit_; }
    QDoubleSpinBox* meanLoadBox() const { return meanLoad_; }
    QDoubleSpinBox* prefixLoadBox() const { return prefixLoad_; }
    QSpinBox* draftTokensBox() const { return draftTokens_; }
    QDoubleSpinBox* acceptanceBox() const { return acceptance_; }
    QComboBox* workloadSwitch() const { return kind_; }
    QWidget* moeBox() const { return moe_; }
    DlrmPanel* dlrmPanel() const { return dlrm_; }
    QDoubleSpinBox* loadImbalance() const { return imbalance_; }
    QDoubleSpinBox* stepOverheadBox() const { return stepOverhead_; }
    QDoubleSpinBox* microBatchOverheadBox() const { return microBatchOverhead_; }
    QString message() const { return message_->text(); }
    QWidget* frozenBox() const { return frozen_; }
    QSpinBox* frozenFirst() const { return frozenFirst_; }
    QSpinBox* frozenCount() const { return frozenCount_; }
    QSpinBox* loraRank() const { return loraRank_; }
    static QStringList keys();
    /// The values the slider of `key` steps through for the current scenario.
    std::vector<int> choices(const QString& key) const { return rows_.at(key).choices; }

  private:
    struct Row {
        QLabel* label;
        QSlider* slider;
        QSpinBox* spin;
        std::vector<int> choices;
    };
    QComboBox* addCombo(QFormLayout* into, const QString& key, const QString& label,
                        const QStringList& items, const QString& tip);
    void addSwitches(QFormLayout* into, StrategySwitch::Group group);
    void syncSwitches(const Strategy& st, StrategySwitch::Group group);
    QCheckBox* addCheck(QFormLayout* into, const QString& key, const QString& label,
                        const QString& tip);
    void buildDegrees(QVBoxLayout* outer);
    void buildSwitches(QVBoxLayout* outer);
    void buildMoe(QVBoxLayout* outer);
    void buildFineTuning(QVBoxLayout* outer);
    void buildOverheads(QVBoxLayout* outer);
    void buildServing(QVBoxLayout* outer);
    void buildDeployment(QVBoxLayout* outer);
    void buildPrefixCache(QFormLayout* form);
    void syncDeployment(const InferenceWorkload& inf);
    void syncServing(const Scenario& s, bool serving);
    void syncVisibility(bool serving, bool moe, bool dlrm);
    void syncMoe(const Scenario& s);
    void syncFrozen(const Scenario& s, bool dlrm);
    void syncSliders(const Scenario& s);
    void syncLayerControls(const Scenario& s);
    void connectSwitches();
    void syncCombos(const Strategy& st);
    void refresh(const Scenario& s);
    void applyValue(const QString& key, int value);
    void applyEdits(const std::vector<std::pair<std::string, nlohmann::json>>& edits,
                    const QString& what, QWidget* source);
    void showMessage(const QString& text, QWidget* source);
    void switchWorkload(bool serving);
    void applyFrozen(QWidget* source);

    ScenarioDocument* doc_;
    std::map<QString, Row> rows_;
    std::map<QString, QComboBox*> combos_;
    std::map<QString, QCheckBox*> checks_;
    QLabel* message_;
    QComboBox* kind_;
    QWidget* switches_;
    QWidget* serving_;
    QWidget* deployment_;          ///< serving pool, prefix cache, speculation
    QDoubleSpinBox* prefixHit_;    ///< percent of prompt tokens from the prefix cache
    QDoubleSpinBox* meanLoad_;     ///< the deployment's mean load, percent of capacity
    QDoubleSpinBox* prefixLoad_;   ///< an offloaded prefix cache's load rate, GB/s (0: host link)
    QSpinBox* draftTokens_;        ///< speculative decoding: draft tokens per step (0: off)
    QDoubleSpinBox* acceptance_;   ///< percent of drafts accepted
    DlrmPanel* dlrm_;
    QWidget* degrees_;
    QDoubleSpinBox* ttft_;
    QDoubleSpinBox* tpot_;
    QWidget* moe_; ///< mixture-of-experts controls (MoE models only)
    QDoubleSpinBox* imbalance_;
    QDoubleSpinBox* capacity_;
    QSpinBox* nodeLimit_;
    QSpinBox* recomputeLayers_; ///< full recompute of the first n layers per chunk (0: all)
    QSpinBox* offloadLayers_;   ///< activations of the first n layers offloaded to the host
    QWidget* frozen_;           ///< fine-tuning: what is frozen (training only)
    QSpinBox* frozenFirst_;     ///< first frozen layer
    QSpinBox* frozenCount_;     ///< frozen layers
    QSpinBox* loraRank_;        ///< LoRA adapters' rank (0: none)
    QWidget* overheads_;        ///< stated framework overheads (training only)
    QDoubleSpinBox* stepOverhead_;       ///< workload.step_overhead_ms (0: none stated)
    QDoubleSpinBox* microBatchOverhead_; ///< workload.micro_batch_overhead_ms (0: none stated)
    QWidget* marked_ = nullptr;
};

} // namespace madmax::ui
