// The searches' threads: kept between searches, since a serving search of a few hundred
// layouts lasts about as long as starting a thread (20–50 µs on a 2-core VM, by perf).
#pragma once

#include <functional>

namespace madmax::detail {

/// Runs fn(0) … fn(n − 1) at once: fn(0) on the calling thread, the rest on a process-wide
/// pool of threads (one fewer than the hardware threads, started on first use). While it
/// waits the caller runs queued tasks itself, so every task runs even when the pool is busy
/// with another caller's, and a task may itself call parallelRun. The first exception a task
/// throws is rethrown here once every task has finished.
void parallelRun(int n, const std::function<void(int)>& fn);

/// The pool's size plus the caller: how many tasks parallelRun runs at the same time.
int parallelWidth();

} // namespace madmax::detail
