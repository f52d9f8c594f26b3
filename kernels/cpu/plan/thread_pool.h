// The cpu plan's threads. mt's own kernels split their work here; XNNPACK's operators run on a
// pthreadpool of the same size that this pool owns and hands to them.
//
// Why not pthreadpool for everything: Debian's pthreadpool makes a futex wake system call for
// every parallel region (and another when the last worker finishes), 0.25-0.32 us a region on
// this class of machine, and a ShuffleNet inference has ~100 regions of 2-5 us each. Here the
// workers spin on a generation counter between regions and the caller joins on a counter: no
// system call while the workers are awake. Workers sleep (futex) after 100 us without work, and
// whenever XNNPACK's own threads are about to run, so that the two sets of threads never compete
// for the same cores. The caller never waits for a worker that has not started: once its own
// share is done it takes the rest and closes the region (a descheduled or sleeping worker then
// costs nothing but its wake-up system call).
#pragma once

#include <pthread.h>
#include <pthreadpool.h>
#include <sched.h>
#include <xnnpack.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace mt::cpu {

class ThreadPool {
 public:
  using Task = void (*)(void* context, size_t index);

  // threads - 1 workers; the caller of run() is the first thread.
  explicit ThreadPool(size_t threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  size_t threads() const { return threads_; }

  // The CPU thread t first ran on (thread 0: the creator, when it created the pool), -1 before
  // it ran; for tests and diagnostics. Where the creator may use several CPUs, each worker starts
  // on one other than the creator's: under a real-time policy (SCHED_FIFO: chrt -f, as the
  // benchmarks run, or an app's audio thread) a worker the kernel left on its creator's CPU
  // waited there behind the creator, which never blocks during an inference, while the other CPU
  // idled. The caller, never waiting for a worker that has not started, then ran every region
  // alone: ShuffleNetV2 int8 at 2 threads took its 1-thread time in 1 to 3 runs of 6 started
  // right after another real-time process. Once running, a worker may use every CPU again.
  int start_cpu(size_t thread) const { return start_cpus_[thread].load(std::memory_order_relaxed); }

  // task(context, i) for every i in [0, count), on all threads; returns when every call has
  // returned. Thread t first takes the t-th of `threads` contiguous ranges (so that a thread
  // keeps reading what it wrote in the region before), then helps the others with theirs.
  void run(Task task, void* context, size_t count);

  // XNNPACK's pool of the same size (created on first use), for xnn_setup_* and xnn_run_operator.
  pthreadpool_t xnnpack();
  // Runs an XNNPACK operator on xnnpack() with this pool's workers asleep, then sends
  // XNNPACK's workers to sleep too (pthreadpool's spin after a region would otherwise take a
  // core from ours).
  xnn_status run_xnnpack(xnn_operator_t op);

 private:
  struct alignas(64) Range {
    std::atomic<size_t> next{0};
    size_t end = 0;
  };
  // The creator's CPUs: where workers start (any but the creator's current one) and may run.
  struct WorkerPlacement {
#if defined(__GLIBC__)
    cpu_set_t allowed;
#endif
    int here = -1;            // the creator's CPU as it placed the workers
    std::vector<int> others;  // the CPUs workers start on, in turn (none: where the kernel puts them)
    static WorkerPlacement of_this_thread();
  };
  void start_worker(size_t thread, const WorkerPlacement& placement);
  static void* run_worker(void* start);  // a worker's pthread start routine (thread_pool.cpp's WorkerStart)
  void stop_workers();
  void work(size_t thread);
  void worker_loop(size_t thread);
  // Enters the region of `generation` unless the caller has closed it.
  bool join(uint32_t generation);
  // Waits until generation_ differs from `seen`: spinning first (unless parked), then asleep.
  uint32_t wait_for_generation(uint32_t seen);
  void publish(uint32_t generation);
  // The generation of the next region: the next even value (only run()'s thread writes it).
  uint32_t next_region() const;
  void park();

  struct XnnPoolDeleter {
    void operator()(pthreadpool_t pool) const { pthreadpool_destroy(pool); }
  };

  const size_t threads_;
  // Even: a region to run; odd: workers go to sleep until the next one. Written only by the
  // thread that calls run(); read by the workers.
  alignas(64) std::atomic<uint32_t> generation_{0};
  // The current region: its generation (high 32 bits), whether it is closed to workers that have
  // not joined yet (kClosed), and how many joined and have not finished (kActive bits).
  static constexpr uint64_t kClosed = uint64_t{1} << 31, kActive = kClosed - 1;
  alignas(64) std::atomic<uint64_t> region_{0};
  alignas(64) std::atomic<uint32_t> sleeping_{0};  // workers in (or about to enter) futex wait
  std::atomic<bool> stop_{false};
  Task task_ = nullptr;
  void* context_ = nullptr;
  std::unique_ptr<Range[]> ranges_;
  std::vector<pthread_t> workers_;
  std::unique_ptr<std::atomic<int>[]> start_cpus_;
  std::unique_ptr<pthreadpool, XnnPoolDeleter> xnnpack_;
};

// Threads of a plan's pool; 1 without one (a 1-thread plan has none).
inline size_t thread_count(const ThreadPool* pool) { return pool == nullptr ? 1 : pool->threads(); }

// task(context, i) for i in [0, count): on the pool, or in order on this thread without one.
void parallelize(ThreadPool* pool, ThreadPool::Task task, void* context, size_t count);

// The same with a callable: fn(i) for i in [0, count).
template <typename Fn>
void parallel_for(ThreadPool* pool, size_t count, const Fn& fn) {
  parallelize(
      pool, [](void* context, size_t i) { (*static_cast<const Fn*>(context))(i); },
      const_cast<void*>(static_cast<const void*>(&fn)), count);
}

// The pthreadpool to hand XNNPACK: null (run on the caller) without a pool.
inline pthreadpool_t xnnpack_pool(ThreadPool* pool) { return pool == nullptr ? nullptr : pool->xnnpack(); }

// xnn_run_operator on the pool's XNNPACK threads (or on this thread without a pool).
xnn_status run_xnnpack(xnn_operator_t op, ThreadPool* pool);

}  // namespace mt::cpu
