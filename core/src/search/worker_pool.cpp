#include "search/worker_pool.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace madmax::detail {

namespace {

/// How long an idle thread (a pool thread, or a caller waiting for its tasks) polls before it
/// sleeps. Waking a sleeping thread took 30-60 µs on the 2-core VM (a 160-layout serving search
/// split in two ran slower than on one thread); polling this long catches the back-to-back
/// searches of a sweep or a slider drag, and costs a fraction of a millisecond of one core
/// after the last (OpenMP runtimes poll for 200 ms by default: KMP_BLOCKTIME).
constexpr auto kPoll = std::chrono::microseconds(500);

/// One parallelRun call: its tasks not yet finished and the first error.
struct Batch {
    const std::function<void(int)>* fn = nullptr;
    std::atomic<int> left{0};
    std::exception_ptr error; ///< guarded by Pool::m_
};

struct Job {
    Batch* batch;
    int index;
};

/// Polls `ready` until it holds or kPoll has passed; whether it held.
template <typename Ready>
bool pollFor(Ready ready) {
    const auto until = std::chrono::steady_clock::now() + kPoll;
    for (int i = 0;; ++i) {
        if (ready()) return true;
        // The processor's spin-wait hint between polls; the clock and the scheduler only now
        // and then (a yield every 64 polls delayed a woken thread by 2-5 us on the 2-core VM).
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        if ((i & 1023) == 1023) {
            if (std::chrono::steady_clock::now() >= until) return false;
            std::this_thread::yield();
        }
    }
}

class Pool {
  public:
    Pool() {
        const int n = std::max(1, int(std::thread::hardware_concurrency())) - 1;
        for (int i = 0; i < n; ++i)
            threads_.emplace_back([this] { work(); });
    }
    ~Pool() {
        {
            std::lock_guard<std::mutex> lock(m_);
            stopping_ = true;
        }
        wake_.notify_all();
        for (auto& t : threads_)
            t.join();
    }
    int width() const { return int(threads_.size()) + 1; }

    void run(int n, const std::function<void(int)>& fn) {
        Batch b;
        b.fn = &fn;
        b.left = n;
        {
            std::lock_guard<std::mutex> lock(m_);
            for (int i = 1; i < n; ++i)
                queue_.push_back({&b, i});
            queued_ += n - 1;
        }
        wake_.notify_all();
        execute({&b, 0});
        // Help with queued tasks (this call's or another's) while any of this call's remain,
        // then poll, then sleep until the last of them finishes.
        while (b.left.load() > 0) {
            if (runQueued()) continue;
            if (pollFor([&] { return b.left.load() == 0 || queued_.load() > 0; })) continue;
            std::unique_lock<std::mutex> lock(m_);
            done_.wait(lock, [&] { return b.left.load() == 0 || !queue_.empty(); });
        }
        std::lock_guard<std::mutex> lock(m_); // (the last task's write of the error)
        if (b.error) std::rethrow_exception(b.error);
    }

  private:
    /// Takes and runs one queued task; false when none is queued.
    bool runQueued() {
        std::unique_lock<std::mutex> lock(m_);
        if (queue_.empty()) return false;
        const Job j = queue_.front();
        queue_.pop_front();
        --queued_;
        lock.unlock();
        execute(j);
        return true;
    }
    void execute(const Job& j) {
        try {
            (*j.batch->fn)(j.index);
        } catch (...) {
            std::lock_guard<std::mutex> lock(m_);
            if (!j.batch->error) j.batch->error = std::current_exception();
        }
        if (j.batch->left.fetch_sub(1) == 1) {
            // The caller may be asleep on done_: wake it under the lock it checks with.
            std::lock_guard<std::mutex> lock(m_);
            done_.notify_all();
        }
    }
    void work() {
        while (true) {
            if (runQueued()) continue;
            if (pollFor([&] { return queued_.load() > 0 || stopping_.load(); })) {
                if (stopping_.load() && queued_.load() == 0) return;
                continue;
            }
            std::unique_lock<std::mutex> lock(m_);
            wake_.wait(lock, [&] { return stopping_.load() || !queue_.empty(); });
            if (stopping_.load() && queue_.empty()) return;
        }
    }

    std::mutex m_;
    std::condition_variable wake_; ///< tasks queued (or stopping): for the pool's threads
    std::condition_variable done_; ///< a call's last task finished: for the callers
    std::deque<Job> queue_;
    std::atomic<int> queued_{0}; ///< queue_.size(), readable without the lock while polling
    std::atomic<bool> stopping_{false}; ///< set under m_, read while polling without it
    std::vector<std::thread> threads_;
};

Pool& pool() {
    static Pool p;
    return p;
}

} // namespace

void parallelRun(int n, const std::function<void(int)>& fn) {
    if (n <= 0) return;
    if (n == 1) {
        fn(0);
        return;
    }
    pool().run(n, fn);
}

int parallelWidth() { return pool().width(); }

} // namespace madmax::detail
