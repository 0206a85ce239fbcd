#pragma once

#include "main_window.hpp"

#include <QTemporaryDir>
#include <QTest>

#include <memory>

namespace madmax::test {

/// A window on the built-in default scenario, no session restored, presets in a temp folder.
struct Explorer {
    QTemporaryDir presets;
    std::unique_ptr<ui::MainWindow> window;
    explicit Explorer(const QString& scenario = "default") {
        ui::WindowOptions o;
        o.restoreSession = false;
        o.scenario = scenario;
        o.presetFolder = presets.path();
        window = std::make_unique<ui::MainWindow>(o);
        window->resize(1400, 900);
        window->show();
        settle();
    }
    /// Wait until the charts show the newest request's result.
    bool settle(int timeoutMs = 20000) {
        QElapsedTimer t;
        t.start();
        while (window->shown().generation < window->worker()->latestGeneration() ||
               window->shown().generation == 0) {
            if (t.elapsed() > timeoutMs) return false;
            QTest::qWait(2);
        }
        return true;
    }
};

} // namespace madmax::test
