#include "presets_store.hpp"

#include "madmax/file_io.hpp"

#include "madmax/scenario_io.hpp"

#include <QDir>
#include <QFile>
#include <QStandardPaths>

namespace madmax::ui {

QString kindFolder(PresetKind kind) {
    switch (kind) {
    case PresetKind::Model:
        return "models";
    case PresetKind::Gpu:
        return "gpus";
    case PresetKind::System:
        return "systems";
    case PresetKind::Scenario:
        return "scenarios";
    }
    return "other";
}

PresetStore::PresetStore(QString folder) : folder_(std::move(folder)) {
    if (folder_.isEmpty())
        folder_ = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + "/presets";
    load();
}

void PresetStore::load() {
    library_ = PresetLibrary::builtin();
    for (PresetKind kind :
         {PresetKind::Model, PresetKind::Gpu, PresetKind::System, PresetKind::Scenario}) {
        QDir dir(folder_ + "/" + kindFolder(kind));
        for (const QString& name : dir.entryList({"*.json"}, QDir::Files)) {
            const std::string id = name.chopped(5).toStdString();
            const QString path = dir.filePath(name);
            if (isBuiltin(kind, id)) { // never shadow an installed preset
                skipped_ << path + ": named like an installed preset; rename it";
                continue;
            }
            try {
                // The core's reader: regular files only, bounded in size.
                library_.add(kind, id, path.toStdString(), readTextFile(path.toStdString()));
            } catch (const std::exception& e) {
                // A broken user preset is skipped and said; the rest of the library loads.
                skipped_ << QString::fromStdString(e.what());
            }
        }
    }
}

bool PresetStore::isBuiltin(PresetKind kind, const std::string& id) const {
    return PresetLibrary::builtin().find(kind, id) != nullptr;
}

bool PresetStore::isUserPreset(PresetKind kind, const std::string& id) const {
    return !isBuiltin(kind, id) && library_.find(kind, id) != nullptr;
}

QString PresetStore::save(PresetKind kind, const std::string& id, nlohmann::json json) {
    if (auto why = explainBadFileId(id)) return "preset id: " + QString::fromStdString(*why);
    if (isBuiltin(kind, id))
        return QString("\"%1\" is an installed preset; choose another id")
            .arg(QString::fromStdString(id));
    json["id"] = id;
    const QString dir = folder_ + "/" + kindFolder(kind);
    QDir().mkpath(dir);
    const QString path = dir + "/" + QString::fromStdString(id) + ".json";
    try {
        writeFileAtomically(path.toStdString(), json.dump(2) + "\n");
        library_.add(kind, id, path.toStdString(), json.dump());
    } catch (const std::exception& e) {
        return QString::fromStdString(e.what());
    }
    return {};
}

const nlohmann::json* PresetStore::original(PresetKind kind, const std::string& id) const {
    const Preset* p = library_.find(kind, id);
    return p ? &p->json : nullptr;
}

} // namespace madmax::ui
