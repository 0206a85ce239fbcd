#include "job_tracker.hpp"

#include <QMetaObject>

namespace madmax::ui {

void JobContext::report(double fraction) const {
    JobTracker* t = tracker_;
    const quint64 g = generation_;
    t->deliver([t, g, fraction] {
        if (t->current(g)) emit t->progress(fraction);
    });
}

void JobContext::post(std::function<void()> fn) const {
    JobTracker* t = tracker_;
    const quint64 g = generation_;
    t->deliver([t, g, fn = std::move(fn)] {
        if (t->current(g)) fn();
    });
}

JobTracker::JobTracker(QObject* parent) : QObject(parent) {
    pool_.setMaxThreadCount(1); // stale jobs never pile up: one runs, the next waits
}

JobTracker::~JobTracker() {
    cancel_->store(true);
    pool_.waitForDone();
}

void JobTracker::deliver(std::function<void()> fn) {
    // A mailbox under a std::mutex, drained on the GUI thread: the hand-off's ordering is
    // explicit (and visible to ThreadSanitizer, which cannot see inside Qt's event queue).
    {
        const std::lock_guard<std::mutex> lock(mailMutex_);
        mail_.push_back(std::move(fn));
    }
    QMetaObject::invokeMethod(this, "drain", Qt::QueuedConnection);
}

void JobTracker::drain() {
    std::deque<std::function<void()>> batch;
    {
        const std::lock_guard<std::mutex> lock(mailMutex_);
        batch.swap(mail_);
    }
    for (auto& fn : batch)
        fn();
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
        const quint64 g = ctx.generation_;
        deliver([this, g, cancelled] {
            --running_;
            if (current(g)) emit finished(cancelled);
        });
    });
    return g;
}

void JobTracker::cancel() {
    cancel_->store(true);
}

} // namespace madmax::ui
