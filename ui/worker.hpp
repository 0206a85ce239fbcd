// Runs the engine off the GUI thread; the newest request wins (QT-NOTES.md "Latest request wins").
#pragma once

#include "madmax/engine.hpp"
#include "madmax/serving.hpp"

#include <QFutureWatcher>
#include <QObject>
#include <QThreadPool>
#include <QTimer>

#include <atomic>
#include <optional>

namespace madmax::ui {

struct Evaluation {
    quint64 generation = 0;
    Scenario scenario;
    Result result;
    std::vector<CurvePoint> curve; ///< inference: latency vs throughput as the batch grows
};

/// Evaluate a scenario the way the explorer shows it (timeline; serving curve for inference).
Evaluation evaluateForDisplay(quint64 generation, const Scenario& s);

class EvaluationWorker : public QObject {
    Q_OBJECT
  public:
    explicit EvaluationWorker(QObject* parent = nullptr);
    ~EvaluationWorker() override;

    /// Ask for `s` to be evaluated. Bursts are coalesced (the timer restarts on every call) and
    /// only the newest request's result is ever delivered.
    void request(const Scenario& s);
    /// Generation of the newest request (results of older ones are dropped).
    quint64 latestGeneration() const { return latest_; }
    void setCoalesceMs(int ms) { coalesce_.setInterval(ms); }
    bool busy() const { return watcher_.isRunning() || coalesce_.isActive(); }

  signals:
    /// The result of the newest request; never one older than a result already delivered.
    void evaluated(const madmax::ui::Evaluation& e);

  private:
    void launch();
    void onFinished();

    QThreadPool pool_;
    QTimer coalesce_;
    QFutureWatcher<Evaluation> watcher_;
    std::optional<Scenario> pending_;
    quint64 latest_ = 0;
    quint64 delivered_ = 0;
    std::atomic<quint64> cancelBelow_{0};
};

} // namespace madmax::ui

Q_DECLARE_METATYPE(madmax::ui::Evaluation)
