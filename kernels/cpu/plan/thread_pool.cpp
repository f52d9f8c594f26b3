#include "kernels/cpu/plan/thread_pool.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <memory>

#include "lib/core/error.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace mt::cpu {
namespace {

// How long an idle worker spins before it sleeps: longer than the gap between two regions of
// one inference (a few us) and between back-to-back inferences, short enough that an app that
// runs one inference a frame does not keep a core busy. pthreadpool spins ~1M pause
// instructions (milliseconds); ONNX Runtime also spins before sleeping.
constexpr auto kSpin = std::chrono::microseconds(100);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// A no-op region with PTHREADPOOL_FLAG_YIELD_WORKERS sends pthreadpool's workers straight to
// sleep instead of spinning.
void nothing(void*, size_t) {}

}  // namespace

ThreadPool::ThreadPool(size_t threads) : threads_(std::max<size_t>(1, threads)) {
  ranges_ = std::make_unique<Range[]>(threads_);
  const WorkerPlacement placement = WorkerPlacement::of_this_thread();
  start_cpus_ = std::make_unique<std::atomic<int>[]>(threads_);
  for (size_t t = 0; t < threads_; ++t) start_cpus_[t].store(t == 0 ? placement.here : -1, std::memory_order_relaxed);
  workers_.reserve(threads_ - 1);
  for (size_t t = 1; t < threads_; ++t) {
    try {
      start_worker(t, placement);
    } catch (...) {
      stop_workers();
      throw;
    }
  }
}

ThreadPool::~ThreadPool() { stop_workers(); }

void ThreadPool::stop_workers() {
  stop_.store(true, std::memory_order_relaxed);
  publish(next_region());
  for (pthread_t worker : workers_) pthread_join(worker, nullptr);
  workers_.clear();
}

ThreadPool::WorkerPlacement ThreadPool::WorkerPlacement::of_this_thread() {
  WorkerPlacement p;
  p.here = sched_getcpu();
#if defined(__GLIBC__)
  CPU_ZERO(&p.allowed);
  if (sched_getaffinity(0, sizeof p.allowed, &p.allowed) == 0)
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &p.allowed) && cpu != p.here) p.others.push_back(cpu);
#endif
  return p;
}

namespace {

// What a new worker needs before it enters worker_loop.
struct WorkerStart {
  ThreadPool* pool;
  size_t thread;
#if defined(__GLIBC__)
  cpu_set_t allowed;  // its creator's CPUs
  bool widen;         // whether it started kept to one of them
#endif
};

}  // namespace

void* ThreadPool::run_worker(void* raw) {
  std::unique_ptr<WorkerStart> start(static_cast<WorkerStart*>(raw));
#if defined(__GLIBC__)
  // Back to every CPU its creator may use: the first CPU only decided where it starts.
  if (start->widen) sched_setaffinity(0, sizeof start->allowed, &start->allowed);
#endif
  start->pool->worker_loop(start->thread);
  return nullptr;
}

void ThreadPool::start_worker(size_t thread, const WorkerPlacement& placement) {
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) fail(ExitCode::failure, "cannot create the cpu plan's worker thread {}", thread);
  auto start = std::make_unique<WorkerStart>(WorkerStart{.pool = this, .thread = thread});
#if defined(__GLIBC__)
  start->allowed = placement.allowed;
  start->widen = false;
  if (!placement.others.empty()) {
    cpu_set_t first;
    CPU_ZERO(&first);
    CPU_SET(placement.others[(thread - 1) % placement.others.size()], &first);
    start->widen = pthread_attr_setaffinity_np(&attr, sizeof first, &first) == 0;
  }
#else
  (void)placement;
#endif
  pthread_t id;
  const int error = pthread_create(&id, &attr, run_worker, start.get());
  pthread_attr_destroy(&attr);
  if (error != 0) fail(ExitCode::failure, "cannot create the cpu plan's worker thread {} (error {})", thread, error);
  start.release();  // run_worker owns it now
  workers_.push_back(id);
}

void ThreadPool::publish(uint32_t generation) {
  // seq_cst on both sides (here and in wait_for_generation) makes it impossible for a worker to
  // go to sleep on the old generation while this thread sees no sleeper to wake.
  generation_.store(generation, std::memory_order_seq_cst);
  if (sleeping_.load(std::memory_order_seq_cst) != 0) generation_.notify_all();
}

uint32_t ThreadPool::next_region() const {
  return (generation_.load(std::memory_order_relaxed) | 1u) + 1u;  // the next even value
}

void ThreadPool::park() {
  const uint32_t g = generation_.load(std::memory_order_relaxed);
  if ((g & 1u) == 0) publish(g + 1u);
}

void ThreadPool::run(Task task, void* context, size_t count) {
  if (threads_ == 1 || count <= 1) {
    for (size_t i = 0; i < count; ++i) task(context, i);
    return;
  }
  task_ = task;
  context_ = context;
  for (size_t t = 0; t < threads_; ++t) {
    ranges_[t].next.store(count * t / threads_, std::memory_order_relaxed);
    ranges_[t].end = count * (t + 1) / threads_;
  }
  const uint32_t generation = next_region();
  region_.store(uint64_t{generation} << 32, std::memory_order_relaxed);                 // open, nobody in it
  publish(generation);
  // Closing the region stops late workers from joining; those in it are waited for. A worker still
  // asleep or descheduled is not: this thread takes its range instead of waiting for it to wake.
  auto close = [this] {
    uint64_t state = region_.fetch_or(kClosed, std::memory_order_acq_rel);
    while ((state & kActive) != 0) {
      cpu_relax();
      state = region_.load(std::memory_order_acquire);
    }
  };
  try {
    work(0);
  } catch (...) {
    close();  // the workers in the region still use the task and its context
    throw;
  }
  close();
}

void ThreadPool::work(size_t thread) {
  for (size_t k = 0; k < threads_; ++k) {
    Range& range = ranges_[(thread + k) % threads_];
    for (;;) {
      const size_t i = range.next.fetch_add(1, std::memory_order_relaxed);
      if (i >= range.end) break;
      task_(context_, i);
    }
  }
}

uint32_t ThreadPool::wait_for_generation(uint32_t seen) {
  if ((seen & 1u) == 0) {  // not parked: spin a while
    const auto until = std::chrono::steady_clock::now() + kSpin;
    for (unsigned spins = 1;; ++spins) {
      const uint32_t g = generation_.load(std::memory_order_acquire);
      if (g != seen) return g;
      cpu_relax();
      if (spins % 64 == 0 && std::chrono::steady_clock::now() >= until) break;
    }
  }
  sleeping_.fetch_add(1, std::memory_order_seq_cst);
  uint32_t g = generation_.load(std::memory_order_seq_cst);
  while (g == seen) {
    generation_.wait(seen, std::memory_order_seq_cst);
    g = generation_.load(std::memory_order_seq_cst);
  }
  sleeping_.fetch_sub(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  return g;
}

bool ThreadPool::join(uint32_t generation) {
  uint64_t state = region_.load(std::memory_order_acquire);
  while ((state >> 32) == generation && (state & kClosed) == 0)
    if (region_.compare_exchange_weak(state, state + 1, std::memory_order_acq_rel, std::memory_order_acquire))
      return true;
  return false;
}

void ThreadPool::worker_loop(size_t thread) {
  start_cpus_[thread].store(sched_getcpu(), std::memory_order_relaxed);
  // 0, the generation at construction, not a load: run() may publish a region before this
  // thread first gets to run, and that region is this thread's to join.
  uint32_t seen = 0;
  for (;;) {
    seen = wait_for_generation(seen);
    if (stop_.load(std::memory_order_relaxed)) return;
    if ((seen & 1u) != 0) continue;  // parked: sleep until the next region
    if (!join(seen)) continue;       // closed already: the caller did this thread's share
    work(thread);
    region_.fetch_sub(1, std::memory_order_release);
  }
}

pthreadpool_t ThreadPool::xnnpack() {
  if (!xnnpack_ && threads_ > 1) {
    xnnpack_.reset(pthreadpool_create(threads_));
    if (!xnnpack_) fail(ExitCode::failure, "cannot create XNNPACK's pool of {} threads", threads_);
  }
  return xnnpack_.get();
}

xnn_status ThreadPool::run_xnnpack(xnn_operator_t op) {
  park();
  const xnn_status status = xnn_run_operator(op, xnnpack());
  if (xnnpack_) pthreadpool_parallelize_1d(xnnpack_.get(), nothing, nullptr, threads_, PTHREADPOOL_FLAG_YIELD_WORKERS);
  return status;
}

void parallelize(ThreadPool* pool, ThreadPool::Task task, void* context, size_t count) {
  if (pool != nullptr) return pool->run(task, context, count);
  for (size_t i = 0; i < count; ++i) task(context, i);
}

xnn_status run_xnnpack(xnn_operator_t op, ThreadPool* pool) {
  return pool == nullptr ? xnn_run_operator(op, nullptr) : pool->run_xnnpack(op);
}

}  // namespace mt::cpu
