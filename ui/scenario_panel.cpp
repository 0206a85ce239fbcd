#include "scenario_panel.hpp"

#include "madmax/scenario_io.hpp"

#include <QCompleter>
#include <QFormLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QMap>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalBlocker>
#include <QTreeWidgetItemIterator>
#include <QVBoxLayout>

namespace madmax::ui {

namespace {
constexpr int kPathRole = Qt::UserRole + 1;

QString displayValue(const nlohmann::json& v) {
    if (v.is_string()) return QString::fromStdString(v.get<std::string>());
    return QString::fromStdString(v.dump());
}

void makeSearchable(QComboBox* c) {
    c->setEditable(true);
    c->setInsertPolicy(QComboBox::NoInsert);
    c->completer()->setCompletionMode(QCompleter::PopupCompletion);
    c->completer()->setFilterMode(Qt::MatchContains);
    c->completer()->setCaseSensitivity(Qt::CaseInsensitive);
}
} // namespace

QString ScenarioPanel::loadScenarioPreset(const QString& id) {
    const Preset* p = store_->library().find(PresetKind::Scenario, id.toStdString());
    if (!p) return QString("no scenario preset \"%1\"").arg(id);
    std::vector<std::pair<std::string, nlohmann::json>> edits;
    for (const char* key : {"model", "system", "gpus", "strategy", "workload", "name"})
        if (p->json.contains(key)) edits.push_back({key, p->json[key]});
    if (p->json.contains("strategy") && !p->json["strategy"].contains("dp")) {
        // The preset leaves dp to be derived; the current document's dp must not linger.
        const auto& st = p->json["strategy"];
        edits.push_back({"strategy.dp",
                         dataParallelDegree(p->json.value("gpus", 0LL), st.value("tp", 1LL),
                                            st.value("pp", 1LL), st.value("cp", 1LL))});
    }
    const QString err = doc_->setFields(edits, "scenario preset " + id);
    if (err.isEmpty()) doc_->detachFromFile(); // a new scenario, not an edit of the open file
    message_->setText(err);
    return err;
}

ScenarioPanel::ScenarioPanel(ScenarioDocument* doc, PresetStore* store, QWidget* parent)
    : QWidget(parent), doc_(doc), store_(store) {
    auto* outer = new QVBoxLayout(this);
    auto* form = new QFormLayout;
    scenario_ = new QComboBox;
    scenario_->setToolTip(
        "Start from a scenario preset: its model, system, GPU count, strategy and workload "
        "(one undoable edit).");
    for (const Preset* p : store_->library().list(PresetKind::Scenario))
        scenario_->addItem(QString::fromStdString(p->json.value("name", p->id)),
                           QString::fromStdString(p->id));
    scenario_->setPlaceholderText("(your own scenario: choose a preset to start over)");
    form->addRow("Scenario preset", scenario_);
    model_ = new QComboBox;
    system_ = new QComboBox;
    makeSearchable(model_);
    makeSearchable(system_);
    model_->setToolTip("The model preset (type to search). Built-in and your own presets.");
    system_->setToolTip(
        "The system preset: GPU, NVLink domain and scale-out network (type to search).");
    form->addRow("Model", model_);
    form->addRow("System", system_);
    outer->addLayout(form);

    // Two rows (model, system) of two buttons: four in one row were cut at 1280 px.
    auto* buttons = new QGridLayout;
    auto* saveModel = new QPushButton("Save model as preset…");
    auto* saveSystem = new QPushButton("Save system as preset…");
    auto* resetModel = new QPushButton("Reset model");
    auto* resetSystem = new QPushButton("Reset system");
    resetModel->setToolTip("Discard field edits: reload the model from its preset.");
    resetSystem->setToolTip("Discard field edits: reload the system from its preset.");
    buttons->addWidget(saveModel, 0, 0);
    buttons->addWidget(resetModel, 0, 1);
    buttons->addWidget(saveSystem, 1, 0);
    buttons->addWidget(resetSystem, 1, 1);
    outer->addLayout(buttons);

    tree_ = new QTreeWidget;
    tree_->setColumnCount(4);
    tree_->setHeaderLabels({"Field", "Value", "Unit", "Allowed"});
    tree_->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    tree_->setToolTip(
        "Double-click a value to edit it. Invalid values are marked and explained; the "
        "scenario keeps its last valid state.");
    outer->addWidget(tree_, 1);

    sources_ = new QLabel;
    sources_->setWordWrap(true);
    sources_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    outer->addWidget(sources_);
    message_ = new QLabel;
    message_->setWordWrap(true);
    message_->setStyleSheet("color: #D55E00;");
    outer->addWidget(message_);

    connect(scenario_, &QComboBox::activated, this,
            [this](int i) { loadScenarioPreset(scenario_->itemData(i).toString()); });
    connect(model_, &QComboBox::activated, this, [this](int i) {
        const QString err = doc_->setField("model", model_->itemData(i).toString().toStdString());
        message_->setText(err);
    });
    connect(system_, &QComboBox::activated, this, [this](int i) {
        const QString err = doc_->setField("system", system_->itemData(i).toString().toStdString());
        message_->setText(err);
    });
    connect(saveModel, &QPushButton::clicked, this, [this] { saveAsPreset(PresetKind::Model); });
    connect(saveSystem, &QPushButton::clicked, this, [this] { saveAsPreset(PresetKind::System); });
    connect(resetModel, &QPushButton::clicked, this, [this] { resetToPreset(PresetKind::Model); });
    connect(resetSystem, &QPushButton::clicked, this,
            [this] { resetToPreset(PresetKind::System); });
    connect(tree_, &QTreeWidget::itemChanged, this, &ScenarioPanel::onItemChanged);
    connect(doc_, &ScenarioDocument::changed, this, &ScenarioPanel::refresh);
    fillCombos();
    refresh(doc_->scenario());
}

void ScenarioPanel::fillCombos() {
    for (auto [combo, kind] :
         {std::pair{model_, PresetKind::Model}, {system_, PresetKind::System}}) {
        const QSignalBlocker b(combo);
        combo->clear();
        for (const Preset* p : store_->library().list(kind)) {
            const QString name = QString::fromStdString(p->json.value("name", p->id));
            const bool user = store_->isUserPreset(kind, p->id);
            combo->addItem(name + (user ? "  (yours)" : ""), QString::fromStdString(p->id));
        }
    }
}

void ScenarioPanel::refresh(const Scenario& s) {
    {
        // The scenario preset the document is (by name), else none: never the list's first.
        const QSignalBlocker b(scenario_);
        int at = -1, i = 0;
        for (const Preset* p : store_->library().list(PresetKind::Scenario)) {
            if (p->json.value("name", p->id) == s.name) at = i;
            ++i;
        }
        scenario_->setCurrentIndex(at);
    }
    for (auto [combo, id] : {std::pair{model_, s.model.id}, {system_, s.system.id}}) {
        const QSignalBlocker b(combo);
        const int i = combo->findData(QString::fromStdString(id));
        if (i >= 0)
            combo->setCurrentIndex(i);
        else
            combo->setEditText(QString::fromStdString(id.empty() ? "(custom)" : id) + " (edited)");
    }
    sources_->setText(QString("<b>Sources</b> — model: %1<br>system: %2<br>GPU: %3")
                          .arg(QString::fromStdString(s.model.source).toHtmlEscaped(),
                               QString::fromStdString(s.system.source).toHtmlEscaped(),
                               QString::fromStdString(s.system.gpu.source).toHtmlEscaped()));
    nlohmann::json now = {{"model", doc_->json()["model"]},
                          {"system", doc_->json()["system"]},
                          {"workload", doc_->json()["workload"]}};
    if (now != shown_) {
        shown_ = std::move(now);
        rebuildTree();
    }
}

void ScenarioPanel::rebuildTree() {
    filling_ = true;
    tree_->clear();
    // Units and allowed values as the core's parser checks them (one owner for each rule).
    const FieldCatalog catalog = describeScenarioFields(doc_->json());
    std::function<void(QTreeWidgetItem*, const nlohmann::json&, const QString&)> add =
        [&](QTreeWidgetItem* parent, const nlohmann::json& j, const QString& path) {
            auto child = [&](const QString& key, const nlohmann::json& v) {
                const QString p = path.isEmpty() ? key : path + "." + key;
                auto* item = new QTreeWidgetItem(parent, {key});
                item->setData(0, kPathRole, p);
                if (v.is_object() || (v.is_array() && !v.empty() && (v[0].is_object()))) {
                    add(item, v, p);
                } else {
                    item->setText(1, displayValue(v));
                    const auto info = catalog.find(p.toStdString());
                    if (info != catalog.end()) {
                        item->setText(2, QString::fromStdString(info->second.unit));
                        item->setText(3, QString::fromStdString(info->second.allowed));
                    }
                    item->setFlags(item->flags() | Qt::ItemIsEditable);
                    item->setToolTip(1, "JSON path: " + p);
                }
            };
            if (j.is_object())
                for (auto it = j.begin(); it != j.end(); ++it)
                    child(QString::fromStdString(it.key()), it.value());
            else if (j.is_array())
                for (std::size_t i = 0; i < j.size(); ++i)
                    child(QString::number(i), j[i]);
        };
    for (const char* section : {"model", "system", "workload"}) {
        auto* top = new QTreeWidgetItem(tree_, {QString(section)});
        top->setData(0, kPathRole, QString(section));
        add(top, shown_[section], section);
        top->setExpanded(std::string(section) != "system");
    }
    filling_ = false;
}

QTreeWidgetItem* ScenarioPanel::fieldItem(const QString& path) const {
    for (QTreeWidgetItemIterator it(tree_); *it; ++it)
        if ((*it)->data(0, kPathRole).toString() == path) return *it;
    return nullptr;
}

QString ScenarioPanel::editField(const QString& path, const QString& text) {
    nlohmann::json value;
    try {
        value = nlohmann::json::parse(text.toStdString());
    } catch (const nlohmann::json::parse_error&) {
        value = text.toStdString(); // a bare word is a string
    } catch (const nlohmann::json::out_of_range&) { // 1e400: no number holds it
        const QString err = path + ": number overflow: " + text +
                            " is beyond what a number can hold (±1.8e308); give a finite value";
        message_->setText(err);
        return err;
    }
    const QString err = doc_->setField(path.toStdString(), value);
    message_->setText(err);
    return err;
}

void ScenarioPanel::onItemChanged(QTreeWidgetItem* item, int column) {
    if (filling_ || column != 1) return;
    const QString path = item->data(0, kPathRole).toString();
    const QString err = editField(path, item->text(1));
    filling_ = true;
    if (!err.isEmpty()) {
        // Marked where the eye is: a strong tint on the value, and the core's message in the
        // row itself (the "allowed" column), not only in the panel's message line.
        item->setBackground(1, QColor(0xF4, 0xB6, 0x9A));
        item->setForeground(1, QColor(0x9A, 0x2D, 0x00));
        item->setToolTip(1, err);
        if (!item->data(3, Qt::UserRole).isValid()) item->setData(3, Qt::UserRole, item->text(3));
        item->setText(3, "✗ " + err);
        item->setForeground(3, QColor(0x9A, 0x2D, 0x00));
        item->setToolTip(3, err);
        tree_->scrollToItem(item);
    } else {
        item->setBackground(1, QBrush());
        item->setForeground(1, QBrush());
        item->setToolTip(1, "JSON path: " + path);
        if (item->data(3, Qt::UserRole).isValid()) {
            item->setText(3, item->data(3, Qt::UserRole).toString());
            item->setData(3, Qt::UserRole, QVariant());
        }
        item->setForeground(3, QBrush());
        item->setToolTip(3, QString());
    }
    filling_ = false;
}

void ScenarioPanel::saveAsPreset(PresetKind kind) {
    const char* section = kind == PresetKind::Model ? "model" : "system";
    const nlohmann::json& current = doc_->json()[section];
    bool ok = false;
    const QString suggested =
        QString::fromStdString(current.value("id", std::string(section))) + "-custom";
    const QString id = QInputDialog::getText(
        this, "Save as preset", "Preset id (letters, digits, '-', '_'):", QLineEdit::Normal,
        suggested, &ok);
    if (!ok) return;
    const QString err = store_->save(kind, id.toStdString(), current);
    if (!err.isEmpty()) {
        QMessageBox::warning(this, "Save as preset", err);
        return;
    }
    fillCombos();
    message_->setText(doc_->setField(section, id.toStdString()));
}

void ScenarioPanel::resetToPreset(PresetKind kind) {
    const char* section = kind == PresetKind::Model ? "model" : "system";
    const std::string id = doc_->json()[section].value("id", "");
    if (!store_->original(kind, id)) {
        message_->setText(
            QString("The %1 did not come from a preset; nothing to reset to.").arg(section));
        return;
    }
    message_->setText(doc_->setField(section, id));
}

} // namespace madmax::ui
