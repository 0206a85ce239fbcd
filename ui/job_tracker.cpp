#include "job_tracker.hpp"

#include <QMetaObject>

namespace madmax::ui {

void JobContext::report(double fraction) const {
    JobTracker* t = tracker_;
    const quint64 g = generation_;
    QMetaObject::invokeMethod(
        t,
        [t, g, fraction] {
            if (t->current(g)) emit t->progress(fraction);
        },
        Qt::QueuedConnection);
}

void JobContext::post(std::function<void()> fn) const {
    JobTracker* t = tracker_;
    const quint64 g = generation_;
    QMetaObject::invokeMethod(
        t,
        [t, g, fn = std::move(fn)] {
            if (t->current(g)) fn();
        },
        Qt::QueuedConnection);
}

JobTracker::JobTracker(QObject* parent) : QObject(parent) {
    pool_.setMaxThreadCount(1); // stale jobs never pile up: one runs, the next waits
}

JobTracker::~JobTracker() {
    cancel_->store(true);
    pool_.waitForDone();
}

quint64 JobTracker::start(std::function<void(const JobContext&)> work) {
    cancel_->store(true); // the previous job, if any, should stop
    cancel_ = std::make_shared<std::atomic<bool>>(false);
    const quint64 g = ++generation_;
    ++running_;
    const JobContext ctx(this, g, cancel_);
    pool_.start([this, ctx, work = std::move(work)] {
        work(ctx);
        const bool cancelled = ctx.cancelled();
        QMetaObject::invokeMethod(
            this,
            [this, g = ctx.generation_, cancelled] {
                --running_;
                if (current(g)) emit finished(cancelled);
            },
            Qt::QueuedConnection);
    });
    return g;
}

void JobTracker::cancel() {
    cancel_->store(true);
}

} // namespace madmax::ui
