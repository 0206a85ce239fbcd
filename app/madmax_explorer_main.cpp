// madmax-explorer: the desktop explorer. Opens straight onto the built-in default scenario (or
// the last session, or the scenario given); `--screenshot FILE` grabs the window once the first
// result is shown, then exits.
#include "madmax/file_io.hpp"
#include "codesign_panel.hpp"
#include "design_space_panel.hpp"
#include "main_window.hpp"

#include <QApplication>
#include <QCommandLineParser>
#include <QBuffer>
#include <QTimer>

#include <cstdio>

namespace {

/// Without a display, --screenshot renders offscreen (real text) and --help / --version only
/// print; anything else says what to do instead of aborting inside Qt. False: refused.
bool chooseHeadlessPlatform(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") && qEnvironmentVariableIsEmpty("DISPLAY") &&
        qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY")) {
        bool headless = false;
        for (int i = 1; i < argc; ++i) {
            const QByteArray a(argv[i]);
            headless = headless || a == "--screenshot" || a == "--help" || a == "-h" ||
                       a == "--help-all" || a == "--version" || a == "-v";
        }
        if (!headless) {
            std::fprintf(stderr,
                         "error: no display (DISPLAY and WAYLAND_DISPLAY are unset). Run it in a "
                         "desktop session, render a picture with --screenshot FILE, or use the "
                         "command line: madmax evaluate\n");
            return false;
        }
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    return true;
}

/// Saves a PNG of the window once its first result is shown (after the shown view's search or
/// sensitivity when `runFirst`), then quits with 0, or 2 when the file cannot be written.
void shootWhenShown(madmax::ui::MainWindow& window, const QString& file, bool runFirst) {
    auto shoot = [&window, file] {
        QTimer::singleShot(50, &window, [&window, file] {
            // Encoded in memory, then the core's atomic, checked, mode-keeping save: a full
            // disk or a kill leaves the old picture whole, and a link is not followed.
            QByteArray png;
            QBuffer buffer(&png);
            bool ok = buffer.open(QIODevice::WriteOnly) && window.grab().save(&buffer, "PNG");
            if (!ok) std::fprintf(stderr, "error: %s: cannot encode the PNG\n", qPrintable(file));
            try {
                if (ok) madmax::writeFileAtomically(file.toStdString(), png.toStdString());
            } catch (const std::exception& e) {
                std::fprintf(stderr, "error: %s\n", e.what());
                ok = false;
            }
            QApplication::exit(ok ? 0 : 2);
        });
    };
    QObject::connect(
        &window, &madmax::ui::MainWindow::resultShown, &window,
        [&window, shoot, runFirst, done = false]() mutable {
            if (done) return;
            done = true;
            QWidget* view = window.views()->currentWidget();
            if (runFirst && view == window.designSpace()) {
                QObject::connect(window.designSpace(),
                                 &madmax::ui::DesignSpacePanel::searchFinished, &window, shoot);
                window.designSpace()->runSearch();
            } else if (runFirst && view == window.coDesign()) {
                QObject::connect(window.coDesign(), &madmax::ui::CoDesignPanel::runFinished,
                                 &window, shoot);
                window.coDesign()->runSensitivity();
            } else {
                shoot();
            }
        });
}

} // namespace

int main(int argc, char** argv) {
    if (!chooseHeadlessPlatform(argc, argv)) return 2;
    QApplication app(argc, argv);
    QApplication::setApplicationName("madmax-explorer");
    QApplication::setOrganizationName("madmax");
    QApplication::setApplicationVersion(MADMAX_VERSION);

    QCommandLineParser parser;
    parser.setApplicationDescription(
        "MAD-Max Explorer: what-if exploration of distributed training performance");
    parser.addHelpOption();
    parser.addVersionOption();
    QCommandLineOption screenshot(
        "screenshot", "Save a PNG of the window once the first result is shown, then exit.",
        "FILE");
    QCommandLineOption noRestore("no-restore",
                                 "Do not restore the last session's scenario and layout.");
    QCommandLineOption size("size",
                            "Window size for --screenshot, e.g. 1280x720 (default 1600x1000).",
                            "WxH", "1600x1000");
    QCommandLineOption tab("tab",
                           "Bring a tab forward: strategy, scenario, explorer, design-space or "
                           "co-design (repeatable: one editor tab and one view tab).",
                           "NAME");
    QCommandLineOption run("run", "With --screenshot: first run the shown view's search "
                                  "(Design space) or hardware sensitivity (Co-design).");
    parser.addOption(screenshot);
    parser.addOption(tab);
    parser.addOption(run);
    parser.addOption(size);
    parser.addOption(noRestore);
    parser.addPositionalArgument("scenario", "Scenario file or preset id to open (default: the "
                                             "last session, else the built-in default).");
    parser.process(app);

    madmax::ui::WindowOptions options;
    options.restoreSession = !parser.isSet(noRestore) && !parser.isSet(screenshot);
    if (!parser.positionalArguments().isEmpty())
        options.scenario = parser.positionalArguments().first();
    madmax::ui::MainWindow window(options);

    for (const QString& name : parser.values(tab))
        if (!window.showTab(name)) {
            std::fprintf(stderr,
                         "error: --tab: no tab \"%s\" (strategy, scenario, explorer, "
                         "design-space, co-design)\n",
                         qPrintable(name));
            return 2;
        }
    if (parser.isSet(screenshot)) {
        const QString file = parser.value(screenshot);
        const QStringList wh = parser.value(size).split('x');
        bool okW = false, okH = false;
        const int w = wh.size() == 2 ? wh[0].toInt(&okW) : 0;
        const int h = wh.size() == 2 ? wh[1].toInt(&okH) : 0;
        if (!okW || !okH || w < 320 || h < 240 || w > 10000 || h > 10000) {
            std::fprintf(stderr,
                         "error: --size: \"%s\" is not WIDTHxHEIGHT (320x240 to 10000x10000)\n",
                         qPrintable(parser.value(size)));
            return 2;
        }
        window.resize(w, h);
        shootWhenShown(window, file, parser.isSet(run));
    }
    window.show();
    return app.exec();
}
