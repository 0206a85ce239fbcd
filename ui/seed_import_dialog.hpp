// File → Import the seed's files: the MAD-Max reference code's model, system and task JSON (or
// shipped ids). Shows the reference computation's result; for LLM pretrain files also our
// prediction side by side, and opens the converted scenario in the explorer.
#pragma once

#include <nlohmann/json.hpp>

#include <QDialog>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>

#include <optional>

namespace madmax::ui {

class SeedImportDialog : public QDialog {
    Q_OBJECT
  public:
    explicit SeedImportDialog(QWidget* parent = nullptr);

    /// Fill the three fields (paths or shipped ids) and run (used by tests and by Import).
    void setFiles(const QString& model, const QString& system, const QString& task);
    /// Run the reference engine (and the native one when the files convert); the text shown.
    QString run();
    /// The converted native scenario, when the last run produced one.
    const std::optional<nlohmann::json>& scenario() const { return scenario_; }
    QString report() const { return report_->toPlainText(); }
    /// The field of "models", "systems" or "tasks" (its completer offers the shipped ids).
    QLineEdit* field(const QString& kind) const {
        return kind == "models" ? model_ : kind == "systems" ? system_ : task_;
    }

  signals:
    /// "Open in the explorer" was chosen for the converted scenario.
    void openScenario(const nlohmann::json& scenario);

  private:
    QLineEdit* model_;
    QLineEdit* system_;
    QLineEdit* task_;
    QPlainTextEdit* report_;
    QPushButton* open_;
    std::optional<nlohmann::json> scenario_;
};

} // namespace madmax::ui
