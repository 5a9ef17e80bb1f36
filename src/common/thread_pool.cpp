// The process-wide thread pool (common/thread_pool.hpp).
//
// Protocol. The caller publishes a Job under mutex_ and bumps generation_; workers wake, and
// while the job still wants helpers they register (helpers, active) under mutex_ and claim tasks
// from job.next. When the caller runs out of tasks it withdraws the job under mutex_ (no worker
// can register after that) and waits until the registered helpers have finished their current
// task. A worker that wakes late finds no job and goes back to sleep. Every access to the job's
// results happens after that mutex handshake, so the workers' writes are visible to the caller.
#include "common/thread_pool.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>

namespace rateopt::detail {
namespace {

// True on pool workers, and on a caller while it runs its region: nested regions run serially.
thread_local bool t_in_region = false;

struct Job {
  TaskFn body{};
  std::size_t n = 0;
  std::size_t chunk = 1;
  std::size_t tasks = 0;
  std::atomic<std::size_t> next{0};
  int max_helpers = 0;  // workers that may join (threads - 1)
  int helpers = 0;      // workers that joined (pool mutex)
  int active = 0;       // joined workers still running tasks (pool mutex)
  std::mutex error_mutex;
  std::exception_ptr error;
};

// Claims and runs tasks until none is left. After an exception the remaining tasks are skipped.
void work(Job& job) {
  for (;;) {
    const std::size_t t = job.next.fetch_add(1, std::memory_order_relaxed);
    if (t >= job.tasks) return;
    const std::size_t begin = t * job.chunk;
    const std::size_t end = std::min(job.n, begin + job.chunk);
    try {
      job.body.call(job.body.ctx, begin, end);
    } catch (...) {
      {
        const std::lock_guard<std::mutex> lock(job.error_mutex);
        if (!job.error) job.error = std::current_exception();
      }
      job.next.store(job.tasks, std::memory_order_relaxed);
    }
  }
}

class ThreadPool {
 public:
  // Runs job on this thread and up to job.max_helpers workers. Returns false, without running
  // anything, when another thread's region holds the pool.
  bool run(Job& job) {
    const std::unique_lock<std::mutex> region(region_mutex_, std::try_to_lock);
    if (!region.owns_lock()) return false;
    const int helpers = grow(job.max_helpers);
    job.max_helpers = helpers;
    if (helpers > 0) {
      {
        const std::lock_guard<std::mutex> lock(mutex_);
        job_ = &job;
        ++generation_;
      }
      if (helpers >= workers_) {
        wake_.notify_all();
      } else {
        for (int i = 0; i < helpers; ++i) wake_.notify_one();
      }
    }
    t_in_region = true;
    work(job);
    t_in_region = false;
    if (helpers > 0) {
      std::unique_lock<std::mutex> lock(mutex_);
      job_ = nullptr;
      done_.wait(lock, [&] { return job.active == 0; });
    }
    return true;
  }

 private:
  // Starts workers until `wanted` exist (as many as the system allows); returns how many may help.
  int grow(int wanted) {
    while (workers_ < wanted) {
      try {
        std::thread(&ThreadPool::worker_loop, this).detach();
      } catch (const std::system_error&) {
        break;
      }
      ++workers_;
    }
    return std::min(wanted, workers_);
  }

  void worker_loop() {
    t_in_region = true;
    std::uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return generation_ != seen; });
      seen = generation_;
      Job* job = job_;
      if (job == nullptr || job->helpers >= job->max_helpers) continue;
      ++job->helpers;
      ++job->active;
      lock.unlock();
      work(*job);
      lock.lock();
      if (--job->active == 0) done_.notify_one();
    }
  }

  std::mutex region_mutex_;  // held by the caller of the running region
  int workers_ = 0;          // started workers (region_mutex_)

  std::mutex mutex_;
  std::condition_variable wake_;  // workers: a new generation
  std::condition_variable done_;  // caller: job.active reached 0
  Job* job_ = nullptr;
  std::uint64_t generation_ = 0;
};

// The pool is never destroyed: detached workers may still be asleep on it at exit. A forked child
// has none of the parent's workers (and maybe a locked mutex), so it drops the parent's pool.
std::atomic<ThreadPool*> g_pool{nullptr};

ThreadPool& pool() {
  ThreadPool* p = g_pool.load(std::memory_order_acquire);
  if (p != nullptr) return *p;
  static const bool registered = [] {
    pthread_atfork(nullptr, nullptr, [] { g_pool.store(nullptr, std::memory_order_relaxed); });
    return true;
  }();
  (void)registered;
  auto* fresh = new ThreadPool();  // lives until exit
  if (g_pool.compare_exchange_strong(p, fresh, std::memory_order_acq_rel)) return *fresh;
  delete fresh;  // another thread was first (it has no workers yet)
  return *p;
}

}  // namespace

int hardware_threads() {
  static const int count = [] {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
      const int n = CPU_COUNT(&set);
      if (n > 0) return n;
    }
    return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  }();
  return count;
}

void run_tasks(std::size_t n, std::size_t chunk, int threads, TaskFn body) {
  chunk = std::max<std::size_t>(chunk, 1);
  threads = std::min(threads, kMaxThreads);
  if (threads <= 1 || n <= chunk || t_in_region) {
    body.call(body.ctx, 0, n);
    return;
  }
  Job job;
  job.body = body;
  job.n = n;
  job.chunk = chunk;
  job.tasks = (n + chunk - 1) / chunk;
  job.max_helpers =
      static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(threads - 1), job.tasks - 1));
  if (!pool().run(job)) {
    body.call(body.ctx, 0, n);
    return;
  }
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace rateopt::detail
