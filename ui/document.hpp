// The scenario being explored: its JSON document, the parsed Scenario, the file it lives in,
// and an undo stack of every edit. Edits that the core rejects leave it unchanged.
#pragma once

#include "madmax/presets.hpp"
#include "madmax/scenario.hpp"

#include <nlohmann/json.hpp>

#include <QObject>
#include <QString>
#include <QUndoStack>

#include <utility>
#include <vector>

namespace madmax::ui {

class ScenarioDocument : public QObject {
    Q_OBJECT
  public:
    ScenarioDocument(const PresetLibrary& library, QObject* parent = nullptr);

    const Scenario& scenario() const { return scenario_; }
    /// The document as inline JSON (what Save writes, what overrides apply to).
    const nlohmann::json& json() const { return doc_; }
    QUndoStack* undoStack() { return &undo_; }
    const PresetLibrary& library() const { return *library_; }
    void setLibrary(const PresetLibrary& lib) { library_ = &lib; }

    /// Apply several `path = value` edits as one undoable step. On error nothing changes and the
    /// core's message is returned (empty string on success).
    QString setFields(const std::vector<std::pair<std::string, nlohmann::json>>& edits,
                      const QString& description);
    QString setField(const std::string& path, const nlohmann::json& value);

    /// Replace the whole document (open, new from preset); clears undo history. Throws
    /// InputError when the document is not a valid scenario.
    void reset(const nlohmann::json& doc, const QString& filePath = {});

    QString filePath() const { return filePath_; }
    bool isModified() const { return !undo_.isClean(); }
    /// Atomic save; returns an error message or empty. The document keeps its old path on error.
    QString saveAs(const QString& path);

    /// Set from an undo command: no validation, the document was valid when recorded.
    void applyRecorded(const nlohmann::json& doc, const Scenario& parsed);
    /// The document no longer belongs to its file (a scenario preset replaced it): Save asks
    /// for a name instead of overwriting the file it came from.
    void detachFromFile();

  signals:
    void changed(const madmax::Scenario& s);
    void filePathChanged(const QString& path);

  private:
    const PresetLibrary* library_;
    nlohmann::json doc_;
    Scenario scenario_;
    QUndoStack undo_;
    QString filePath_;
};

} // namespace madmax::ui
