// Private: the process-wide thread pool behind parallel_for (common/parallel.hpp).
//
// One pool per process, created on first use and never destroyed (its workers sleep until the
// process exits; a forked child starts a fresh one). Workers wait on a condition variable: idle
// workers use no CPU, so a busy machine is not made busier (issue 9: OpenMP's spinning workers
// made a fit 12-16x slower with every core busy).
//
// A region splits [0, n) into tasks of `chunk` iterations. The calling thread takes part, and
// every thread claims the next task from one atomic counter, so a worker that the OS does not
// schedule simply gets no task: the caller does the work itself and only waits for tasks that
// a worker has already started.
//
// Thread-safety: run_tasks may be called from any thread. One region runs on the pool at a time;
// a call made while another thread's region holds the pool, or from inside a region (nested
// parallel_for), runs serially on its own thread.
#pragma once

#include <cstddef>

namespace rateopt::detail {

// A task body, called as call(ctx, begin, end) for the iterations [begin, end).
struct TaskFn {
  void (*call)(void* ctx, std::size_t begin, std::size_t end);
  void* ctx;
};

// The cores this process may run on (sched_getaffinity, else hardware_concurrency), >= 1.
int hardware_threads();

// Threads of one region at most; larger requests are capped to this.
inline constexpr int kMaxThreads = 256;

// Runs body over [0, n) in tasks of `chunk` (>= 1) iterations on up to `threads` threads (the
// caller and threads - 1 pool workers). Runs body(0, n) on the caller instead when threads <= 1,
// n <= chunk, inside another region, or while another thread's region holds the pool. In a
// parallel region the first exception thrown by a task is rethrown after every started task has
// finished; tasks not yet started are skipped.
void run_tasks(std::size_t n, std::size_t chunk, int threads, TaskFn body);

}  // namespace rateopt::detail
