#include "worker.hpp"

#include <QtConcurrent/QtConcurrent>

namespace madmax::ui {

EvaluationWorker::EvaluationWorker(QObject* parent) : QObject(parent) {
    qRegisterMetaType<madmax::ui::Evaluation>();
    pool_.setMaxThreadCount(1); // stale jobs never pile up: one runs, the newest waits
    coalesce_.setSingleShot(true);
    coalesce_.setInterval(2);
    connect(&coalesce_, &QTimer::timeout, this, &EvaluationWorker::launch);
    // Connected before the first setFuture(): re-pointing drops a stale future's notifications.
    connect(&watcher_, &QFutureWatcher<Evaluation>::finished, this, &EvaluationWorker::onFinished);
}

EvaluationWorker::~EvaluationWorker() {
    coalesce_.stop();
    watcher_.waitForFinished();
    pool_.waitForDone();
}

void EvaluationWorker::request(const Scenario& s) {
    pending_ = s;
    ++latest_;
    coalesce_.start();
}

void EvaluationWorker::launch() {
    if (!pending_) return;
    if (watcher_.isRunning()) {
        // One job at a time; the newest pending scenario is launched when it finishes.
        return;
    }
    Evaluation job;
    job.generation = latest_;
    job.scenario = std::move(*pending_);
    pending_.reset();
    watcher_.setFuture(QtConcurrent::run(&pool_, [job = std::move(job)]() mutable {
        return evaluateForDisplay(job.generation, job.scenario);
    }));
}

Evaluation evaluateForDisplay(quint64 generation, const Scenario& s) {
    Evaluation e;
    e.generation = generation;
    e.scenario = s;
    EvaluateOptions opt;
    opt.timeline = true; // the explorer draws the critical stage's timeline
    e.result = evaluate(s, opt);
    if (s.workload.kind == WorkloadKind::Inference) e.curve = latencyThroughputCurve(s);
    return e;
}

void EvaluationWorker::onFinished() {
    const Evaluation e = watcher_.result();
    if (pending_) launch(); // a newer request arrived meanwhile
    if (e.generation < delivered_) return;
    delivered_ = e.generation;
    emit evaluated(e);
}

} // namespace madmax::ui
