// Built-in presets plus the user's own, saved in the platform's app-data folder (never over
// the installed ones).
#pragma once

#include "madmax/presets.hpp"

#include <nlohmann/json.hpp>

#include <QString>
#include <QStringList>

namespace madmax::ui {

class PresetStore {
  public:
    /// `folder` defaults to <AppDataLocation>/presets.
    explicit PresetStore(QString folder = {});

    const PresetLibrary& library() const { return library_; }
    QString folder() const { return folder_; }
    bool isUserPreset(PresetKind kind, const std::string& id) const;
    bool isBuiltin(PresetKind kind, const std::string& id) const;

    /// Save `json` as a user preset; an id that names a built-in preset is refused (returns
    /// an error message, empty on success).
    QString save(PresetKind kind, const std::string& id, nlohmann::json json);
    /// The preset's JSON as installed or saved (for "reset to original").
    const nlohmann::json* original(PresetKind kind, const std::string& id) const;
    /// User preset files that were not loaded, each with why (unreadable, broken, or named
    /// like an installed preset); empty when every file loaded.
    const QStringList& skipped() const { return skipped_; }

  private:
    void load();
    QString folder_;
    PresetLibrary library_;
    QStringList skipped_;
};

QString kindFolder(PresetKind kind);

} // namespace madmax::ui
