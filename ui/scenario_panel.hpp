// Model, system and workload: chosen from presets (searchable), every field editable with its
// unit and the preset's source shown; invalid values are marked at the field with the core's
// message and never reach the engine. Edited models and systems can be saved as user presets.
#pragma once

#include "document.hpp"
#include "presets_store.hpp"

#include <QComboBox>
#include <QLabel>
#include <QTreeWidget>
#include <QWidget>

namespace madmax::ui {

class ScenarioPanel : public QWidget {
    Q_OBJECT
  public:
    ScenarioPanel(ScenarioDocument* doc, PresetStore* store, QWidget* parent = nullptr);

    QComboBox* scenarioCombo() const { return scenario_; }
    QComboBox* modelCombo() const { return model_; }
    QComboBox* systemCombo() const { return system_; }
    QTreeWidget* fields() const { return tree_; }
    /// Edit the field at `path` as if typed into the tree; returns the core's message or empty.
    QString editField(const QString& path, const QString& text);
    QString message() const { return message_->text(); }
    /// The tree item of the field at dotted path `path` (nullptr when not shown).
    QTreeWidgetItem* fieldItem(const QString& path) const;
    /// Load a scenario preset's model, system, GPU count, strategy and workload as one edit.
    QString loadScenarioPreset(const QString& id);

  private:
    void refresh(const Scenario& s);
    void rebuildTree();
    void fillCombos();
    void saveAsPreset(PresetKind kind);
    void resetToPreset(PresetKind kind);
    void onItemChanged(QTreeWidgetItem* item, int column);

    ScenarioDocument* doc_;
    PresetStore* store_;
    QComboBox* scenario_;
    QComboBox* model_;
    QComboBox* system_;
    QTreeWidget* tree_;
    QLabel* sources_;
    QLabel* message_;
    nlohmann::json shown_; ///< model/system/workload as the tree shows them
    bool filling_ = false;
};

} // namespace madmax::ui
