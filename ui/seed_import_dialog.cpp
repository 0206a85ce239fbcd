#include "seed_import_dialog.hpp"

#include "madmax/engine.hpp"
#include "madmax/error.hpp"
#include "madmax/presets.hpp"
#include "madmax/report.hpp"
#include "madmax/scenario_io.hpp"
#include "madmax/seed.hpp"

#include <QCompleter>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFontDatabase>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

namespace madmax::ui {

namespace {
QStringList idsOf(const char* kind) {
    QStringList ids;
    for (const auto& i : seed::builtinIds(kind))
        ids << QString::fromStdString(i);
    return ids;
}
} // namespace

SeedImportDialog::SeedImportDialog(QWidget* parent) : QDialog(parent) {
    setWindowTitle("Import the seed's files");
    auto* outer = new QVBoxLayout(this);
    auto* intro = new QLabel(
        "The MAD-Max reference code's model, system and task files (a path, or the id of a "
        "shipped one). They run on a reproduction of that code's computation; LLM, LLM_MoE "
        "and ViT pretrain or finetune files also convert to a native scenario for our engine.");
    intro->setWordWrap(true);
    outer->addWidget(intro);
    auto* form = new QFormLayout;
    auto row = [&](const QString& label, const char* kind, QLineEdit*& edit) {
        edit = new QLineEdit;
        // The shipped ids (33 models, 66 systems, 12 tasks): typing any part of one offers
        // the matches, a path is taken as it is.
        const QStringList ids = idsOf(kind);
        auto* completer = new QCompleter(ids, edit);
        completer->setCaseSensitivity(Qt::CaseInsensitive);
        completer->setFilterMode(Qt::MatchContains);
        completer->setMaxVisibleItems(12);
        edit->setCompleter(completer);
        edit->setPlaceholderText(QString("a path, or one of %1 shipped %2 (type to search)")
                                     .arg(ids.size())
                                     .arg(kind));
        edit->setToolTip(QString("<p>Shipped %1: %2</p>").arg(kind, ids.join(", ")));
        auto* browse = new QPushButton("Browse…");
        connect(browse, &QPushButton::clicked, this, [this, edit, label] {
            const QString p = QFileDialog::getOpenFileName(this, label, {}, "JSON (*.json)");
            if (!p.isEmpty()) edit->setText(p);
        });
        auto* h = new QHBoxLayout;
        h->addWidget(edit, 1);
        h->addWidget(browse);
        form->addRow(label, h);
    };
    row("Model", "models", model_);
    row("System", "systems", system_);
    row("Task", "tasks", task_);
    outer->addLayout(form);
    auto* runButton = new QPushButton("Run");
    connect(runButton, &QPushButton::clicked, this, [this] { run(); });
    outer->addWidget(runButton, 0, Qt::AlignLeft);
    report_ = new QPlainTextEdit;
    report_->setReadOnly(true);
    report_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    report_->setMinimumSize(720, 420);
    outer->addWidget(report_, 1);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    open_ = buttons->addButton("Open native scenario in the explorer",
                               QDialogButtonBox::AcceptRole);
    open_->setEnabled(false);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(open_, &QPushButton::clicked, this, [this] {
        if (scenario_) emit openScenario(*scenario_);
        accept();
    });
    outer->addWidget(buttons);
}

void SeedImportDialog::setFiles(const QString& model, const QString& system, const QString& task) {
    model_->setText(model);
    system_->setText(system);
    task_->setText(task);
}

QString SeedImportDialog::run() {
    scenario_.reset();
    open_->setEnabled(false);
    QString text;
    try {
        const std::string mp = model_->text().toStdString(), sp = system_->text().toStdString(),
                          tp = task_->text().toStdString();
        const seed::Model m = seed::parseModel(seed::loadFile("models", mp), mp);
        const seed::System s = seed::parseSystem(seed::loadFile("systems", sp), sp);
        const seed::Task t = seed::parseTask(seed::loadFile("tasks", tp), tp);
        const seed::ReferenceResult ref = seed::runReference(m, s, t, tp);
        text = QString::fromStdString(seed::formatReport(m, s, t, ref));
        try {
            std::vector<std::string> assumed;
            const nlohmann::json doc =
                seed::toScenarioJson(m, s, t, PresetLibrary::builtin(), assumed, mp);
            const Scenario sc = parseScenario(doc, mp + " (converted)");
            const Result r = evaluate(sc);
            text += "\nNative engine on the converted scenario\n";
            for (const auto& a : assumed)
                text += "  assumed: " + QString::fromStdString(a) + "\n";
            text += QString::fromStdString(seed::formatComparison(m, s, t, ref, r));
            text += "\n" + QString::fromStdString(formatReport(sc, r));
            scenario_ = doc;
            open_->setEnabled(true);
        } catch (const InputError& e) {
            text += "\nNative engine: " + QString::fromStdString(e.what()) + "\n";
        }
    } catch (const std::exception& e) {
        text = QString::fromStdString(e.what());
    }
    report_->setPlainText(text);
    return text;
}

} // namespace madmax::ui
