// The UI tests' own main: the offscreen platform is set before QApplication exists, so the
// tests (and catch_discover_tests at build time) run without a display (docs/developer/qt-notes.md).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <QApplication>
#include <QStandardPaths>

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QStandardPaths::setTestModeEnabled(true); // settings and user presets in a test location
    QApplication app(argc, argv);
    QApplication::setOrganizationName("madmax-tests");
    QApplication::setApplicationName("madmax-explorer-tests");
    return Catch::Session().run(argc, argv);
}
