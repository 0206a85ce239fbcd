// The one mechanism for background work in the explorer (after KDAB hotspot's jobtracker): a
// generation counter, a cancel flag the core polls, work on one worker thread of its own, and
// progress and results marshalled back to the GUI thread with queued calls — dropped when a
// newer job has started since. The engine worker, the search / co-design views and the DLRM
// plan search all use it.
#pragma once

#include <QObject>

#include <atomic>
#include <condition_variable>
#include <thread>
#include <deque>
#include <mutex>
#include <functional>
#include <memory>

namespace madmax::ui {

class JobTracker;

/// What a running job sees: its cancel flag, and ways to reach the GUI thread.
class JobContext {
  public:
    bool cancelled() const { return cancel_->load(); }
    const std::atomic<bool>* cancelFlag() const { return cancel_.get(); }
    /// Progress in [0, 1], delivered as JobTracker::progress unless the job went stale.
    void report(double fraction) const;
    /// Run `fn` on the GUI thread, unless the job went stale before it gets there.
    void post(std::function<void()> fn) const;

  private:
    friend class JobTracker;
    JobContext(JobTracker* tracker, quint64 generation, std::shared_ptr<std::atomic<bool>> cancel)
        : tracker_(tracker), generation_(generation), cancel_(std::move(cancel)) {}
    JobTracker* tracker_;
    quint64 generation_;
    std::shared_ptr<std::atomic<bool>> cancel_;
};

class JobTracker : public QObject {
    Q_OBJECT
  public:
    explicit JobTracker(QObject* parent = nullptr);
    ~JobTracker() override; ///< cancels the running job and waits for it

    /// Start `work` off the GUI thread as the newest job; an older job still running is asked to
    /// cancel and its later reports and posts are dropped. Returns the job's generation.
    quint64 start(std::function<void(const JobContext&)> work);
    void cancel();
    bool running() const { return running_ > 0; }
    quint64 generation() const { return generation_; }

  signals:
    void progress(double fraction);
    /// The newest job returned (cancelled: its flag was set before it did).
    void finished(bool cancelled);

  private slots:
    void drain(); ///< GUI thread: run what jobs delivered, in order

  private:
    friend class JobContext;
    bool current(quint64 generation) const { return generation == generation_; }
    /// Any thread: queue `fn` to run on the GUI thread.
    void deliver(std::function<void()> fn);

    void workerLoop();

    /// Jobs go to the worker thread, results come back, through queues under std::mutex: the
    /// ordering is explicit and visible to ThreadSanitizer (Qt's own queues are not).
    struct Job {
        JobContext ctx;
        std::function<void(const JobContext&)> work;
    };
    std::mutex jobsMutex_;
    std::condition_variable jobsReady_;
    std::deque<Job> jobs_;
    bool stopping_ = false;
    std::thread worker_;
    quint64 generation_ = 0;
    int running_ = 0;
    std::shared_ptr<std::atomic<bool>> cancel_ = std::make_shared<std::atomic<bool>>(false);
    std::mutex mailMutex_;
    std::deque<std::function<void()>> mail_;
};

} // namespace madmax::ui
