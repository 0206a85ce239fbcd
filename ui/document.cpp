#include "document.hpp"

#include "madmax/error.hpp"
#include "madmax/scenario_io.hpp"

#include <QUndoCommand>

namespace madmax::ui {

namespace {

class EditCommand : public QUndoCommand {
  public:
    /// Both states are kept parsed: undo and redo never parse again.
    EditCommand(ScenarioDocument* doc, nlohmann::json before, Scenario beforeScenario,
                nlohmann::json after, Scenario afterScenario, const QString& text)
        : QUndoCommand(text), doc_(doc), before_(std::move(before)), after_(std::move(after)),
          beforeScenario_(std::move(beforeScenario)), afterScenario_(std::move(afterScenario)) {}
    void undo() override { doc_->applyRecorded(before_, beforeScenario_); }
    void redo() override { doc_->applyRecorded(after_, afterScenario_); }

  private:
    ScenarioDocument* doc_;
    nlohmann::json before_, after_;
    Scenario beforeScenario_, afterScenario_;
};

} // namespace

ScenarioDocument::ScenarioDocument(const PresetLibrary& library, QObject* parent)
    : QObject(parent), library_(&library) {
    reset(library.find(PresetKind::Scenario, PresetLibrary::kDefaultScenario)->json);
}

void ScenarioDocument::reset(const nlohmann::json& doc, const QString& filePath) {
    const std::string where = filePath.isEmpty() ? "scenario" : filePath.toStdString();
    nlohmann::json resolved = resolveScenario(doc, *library_, where);
    Scenario s = parseScenario(resolved, where);
    doc_ = std::move(resolved);
    scenario_ = std::move(s);
    undo_.clear();
    undo_.setClean();
    filePath_ = filePath;
    emit filePathChanged(filePath_);
    emit changed(scenario_);
}

void ScenarioDocument::applyRecorded(const nlohmann::json& doc, const Scenario& parsed) {
    doc_ = doc;
    scenario_ = parsed;
    emit changed(scenario_);
}

QString
ScenarioDocument::setFields(const std::vector<std::pair<std::string, nlohmann::json>>& edits,
                            const QString& description) {
    nlohmann::json next = doc_;
    Scenario parsed;
    try {
        for (const auto& [path, value] : edits) {
            applyOverride(next, path, value, "edit");
            resolvePresetRefs(next, *library_, "edit");
        }
        parsed = parseScenario(next, "edit"); // validates; throws with the core's message
    } catch (const InputError& e) {
        // Drop the "edit: " prefix: the field is named in the message itself.
        QString msg = QString::fromStdString(e.what());
        if (msg.startsWith("edit: ")) msg = msg.mid(6);
        return msg;
    }
    if (next == doc_) return {};
    undo_.push(new EditCommand(this, doc_, scenario_, std::move(next), std::move(parsed),
                               description));
    return {};
}

void ScenarioDocument::detachFromFile() {
    if (filePath_.isEmpty()) return;
    filePath_.clear();
    emit filePathChanged(filePath_);
}

QString ScenarioDocument::setField(const std::string& path, const nlohmann::json& value) {
    return setFields({{path, value}}, QString::fromStdString(path));
}

QString ScenarioDocument::saveAs(const QString& path) {
    try {
        nlohmann::json out = toJson(scenario_);
        writeFileAtomically(path.toStdString(), out.dump(2) + "\n");
    } catch (const std::exception& e) {
        return QString::fromStdString(e.what());
    }
    filePath_ = path;
    undo_.setClean();
    emit filePathChanged(filePath_);
    return {};
}

} // namespace madmax::ui
