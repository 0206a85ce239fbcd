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
    // One worker thread: stale jobs never pile up, one runs and the next waits.
    worker_ = std::thread([this] { workerLoop(); });
}

JobTracker::~JobTracker() {
    cancel_->store(true);
    {
        const std::lock_guard<std::mutex> lock(jobsMutex_);
        stopping_ = true;
        for (Job& j : jobs_)
            j.ctx.cancel_->store(true);
    }
    jobsReady_.notify_all();
    worker_.join(); // the running job sees its cancel flag and returns
}

void JobTracker::workerLoop() {
    while (true) {
        std::unique_lock<std::mutex> lock(jobsMutex_);
        jobsReady_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
        if (jobs_.empty()) return; // stopping, nothing left
        Job job = std::move(jobs_.front());
        jobs_.pop_front();
        const bool stop = stopping_;
        lock.unlock();
        if (!stop) job.work(job.ctx);
        const bool cancelled = job.ctx.cancelled() || stop;
        const quint64 g = job.ctx.generation_;
        deliver([this, g, cancelled] {
            --running_;
            if (current(g)) emit finished(cancelled);
        });
    }
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
    {
        const std::lock_guard<std::mutex> lock(jobsMutex_);
        jobs_.push_back({JobContext(this, g, cancel_), std::move(work)});
    }
    jobsReady_.notify_one();
    return g;
}

void JobTracker::cancel() {
    cancel_->store(true);
}

} // namespace madmax::ui
