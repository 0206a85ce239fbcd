// Runs the engine off the GUI thread; the newest request wins (docs/developer/qt-notes.md "Latest request wins").
#pragma once

#include "evaluation.hpp"
#include "job_tracker.hpp"

#include <QObject>
#include <QTimer>

#include <optional>

namespace madmax::ui {

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
    bool busy() const { return jobs_.running() || coalesce_.isActive(); }

  signals:
    /// The result of the newest request; never one older than a result already delivered.
    void evaluated(const madmax::ui::Evaluation& e);

  private:
    void launch();
    void deliver(const Evaluation& e);

    JobTracker jobs_;
    QTimer coalesce_;
    std::optional<Scenario> pending_;
    quint64 latest_ = 0;
    quint64 delivered_ = 0;
};

} // namespace madmax::ui

