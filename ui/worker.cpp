#include "worker.hpp"

namespace madmax::ui {

EvaluationWorker::EvaluationWorker(QObject* parent) : QObject(parent) {
    qRegisterMetaType<madmax::ui::Evaluation>();
    coalesce_.setSingleShot(true);
    coalesce_.setInterval(2);
    connect(&coalesce_, &QTimer::timeout, this, &EvaluationWorker::launch);
    // One evaluation at a time; the newest pending request starts when it returns.
    connect(&jobs_, &JobTracker::finished, this, [this] {
        if (pending_) launch();
    });
}

EvaluationWorker::~EvaluationWorker() {
    coalesce_.stop();
}

void EvaluationWorker::request(const Scenario& s) {
    pending_ = s;
    ++latest_;
    coalesce_.start();
}

void EvaluationWorker::launch() {
    if (!pending_ || jobs_.running()) return;
    auto job = std::make_shared<Evaluation>();
    job->generation = latest_;
    job->scenario = std::move(*pending_);
    pending_.reset();
    jobs_.start([this, job](const JobContext& ctx) {
        Evaluation e = evaluateForDisplay(job->generation, job->scenario);
        ctx.post([this, e = std::move(e)] { deliver(e); });
    });
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

void EvaluationWorker::deliver(const Evaluation& e) {
    if (e.generation < delivered_) return;
    delivered_ = e.generation;
    emit evaluated(e);
}

} // namespace madmax::ui
