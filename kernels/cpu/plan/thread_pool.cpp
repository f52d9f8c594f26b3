#include "kernels/cpu/plan/thread_pool.h"

#include <algorithm>
#include <chrono>

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
  workers_.reserve(threads_ - 1);
  for (size_t t = 1; t < threads_; ++t) workers_.emplace_back([this, t] { worker_loop(t); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_relaxed);
  publish(next_region());
  for (std::thread& worker : workers_) worker.join();
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
