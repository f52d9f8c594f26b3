// The cpu plan's thread pool (kernels/cpu/plan/thread_pool.h): every index of a region runs
// exactly once and its writes are visible when run() returns, at 1 to 4 threads and counts below,
// at and above the thread count (from one index per thread on, every thread taking part: the
// tasks wait for each other, so a late worker still gets its range); regions after the workers fell asleep (idle past their spin,
// or parked for an XNNPACK operator) still run on every thread; XNNPACK operators run on the
// pool's pthreadpool and give the right result; workers start on a CPU other than their creator's,
// then may use all of its CPUs.
#include "kernels/cpu/plan/thread_pool.h"

#include <doctest/doctest.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace mt::test {
namespace {

struct Counts {
  std::vector<std::atomic<int>> runs;
  std::vector<int> written;  // plain writes: must be visible to the caller after run()
  std::mutex mutex;
  std::set<std::thread::id> threads;
  size_t expect;  // threads every task waits to have seen (up to 10 s), 0: none
  Counts(size_t n, size_t e) : runs(n), written(n, 0), expect(e) {}
};

void count(void* context, size_t i) {
  auto* c = static_cast<Counts*>(context);
  c->runs[i].fetch_add(1, std::memory_order_relaxed);
  c->written[i] = static_cast<int>(i) + 1;
  {
    std::lock_guard<std::mutex> lock(c->mutex);
    c->threads.insert(std::this_thread::get_id());
  }
  // Every task waits until `expect` threads have run one: a thread blocked here takes no other
  // thread's range, so each worker must join the region itself, however late it is scheduled
  // (a pool whose workers never join fails after 10 s instead of hanging).
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < until) {
    {
      std::lock_guard<std::mutex> lock(c->mutex);
      if (c->threads.size() >= c->expect) return;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

// Runs `n` tasks, each waiting for `expect` threads to have taken part; returns how many did.
size_t run_and_check(cpu::ThreadPool* pool, size_t n, size_t expect) {
  Counts c(n, expect);
  cpu::parallelize(pool, count, &c, n);
  for (size_t i = 0; i < n; ++i) {
    CHECK_MESSAGE(c.runs[i].load() == 1, "index ", i, " of ", n, " ran ", c.runs[i].load(), " times");
    CHECK(c.written[i] == static_cast<int>(i) + 1);
  }
  return c.threads.size();
}

TEST_CASE("cpu thread pool: every index once, at every thread count") {
  CHECK(cpu::thread_count(nullptr) == 1);
  CHECK(run_and_check(nullptr, 5, 1) == 1);
  for (size_t threads : {1, 2, 3, 4}) {
    cpu::ThreadPool pool(threads);
    CHECK(cpu::thread_count(&pool) == threads);
    for (size_t n : {0, 1, 2, 3, 5, 8, 16}) {
      // From one index per thread on, every thread has a range of its own and must take part.
      const size_t used = run_and_check(&pool, n, n >= threads ? threads : 0);
      if (n >= threads) CHECK_MESSAGE(used == threads, threads, " threads, ", n, " indices: ", used, " ran them");
      else CHECK(used <= std::max<size_t>(n, 1));
    }
  }
}

TEST_CASE("cpu thread pool: workers wake after sleeping") {
  cpu::ThreadPool pool(3);
  CHECK(run_and_check(&pool, 24, 3) == 3);
  // Idle far past the spin: the workers are asleep in futex wait and must be woken.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(run_and_check(&pool, 24, 3) == 3);
  for (int round = 0; round < 200; ++round)
    run_and_check(&pool, static_cast<size_t>(round % 7), 0);
}

// Counts the tasks whose thread may not use exactly the CPUs `expected` holds.
struct AffinityCheck {
  cpu_set_t expected;
  std::atomic<int> tasks{0}, different{0};
};

void check_affinity(void* context, size_t) {
  auto* c = static_cast<AffinityCheck*>(context);
  cpu_set_t mine;
  CPU_ZERO(&mine);
  c->tasks.fetch_add(1);
  if (sched_getaffinity(0, sizeof mine, &mine) != 0 || !CPU_EQUAL(&mine, &c->expected)) c->different.fetch_add(1);
}

TEST_CASE("cpu thread pool: workers start off their creator's CPU, then may use all of its CPUs") {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  REQUIRE(sched_getaffinity(0, sizeof allowed, &allowed) == 0);
  const int cpus = CPU_COUNT(&allowed);
  for (size_t threads : {2, 3}) {
    cpu::ThreadPool pool(threads);
    REQUIRE(run_and_check(&pool, 8, threads) == threads);  // every worker has run
    const int creator = pool.start_cpu(0);
    CHECK(CPU_ISSET(creator, &allowed));
    for (size_t t = 1; t < threads; ++t) {
      const int cpu = pool.start_cpu(t);
      REQUIRE(cpu >= 0);
      CHECK(CPU_ISSET(cpu, &allowed));
      // A worker left on its creator's CPU can wait there forever under SCHED_FIFO.
      if (cpus >= 2) CHECK_MESSAGE(cpu != creator, "worker ", t, " started on its creator's CPU ", cpu);
    }
    AffinityCheck c;
    c.expected = allowed;
    cpu::parallelize(&pool, check_affinity, &c, 64);
    CHECK(c.tasks.load() == 64);
    CHECK_MESSAGE(c.different.load() == 0, c.different.load(), " tasks ran on a thread kept to fewer CPUs");
  }
}

TEST_CASE("cpu thread pool: XNNPACK operators on the pool's pthreadpool, then regions again") {
  REQUIRE(xnn_initialize(nullptr) == xnn_status_success);
  cpu::ThreadPool pool(2);
  REQUIRE(pool.xnnpack() != nullptr);
  CHECK(pthreadpool_get_threads_count(pool.xnnpack()) == 2);
  xnn_operator_t op = nullptr;
  const size_t channels = 3, batch = 1000;
  REQUIRE(xnn_create_clamp_nc_f32(channels, channels, channels, -1.0f, 1.0f, 0, &op) == xnn_status_success);
  std::vector<float> x(channels * batch), y(x.size() + XNN_EXTRA_BYTES / sizeof(float));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 5) - 2.0f;
  REQUIRE(xnn_setup_clamp_nc_f32(op, batch, x.data(), y.data(), pool.xnnpack()) == xnn_status_success);
  for (int round = 0; round < 3; ++round) {
    CHECK(run_and_check(&pool, 8, 2) == 2);
    std::fill(y.begin(), y.end(), 9.0f);
    REQUIRE(cpu::run_xnnpack(op, &pool) == xnn_status_success);
    for (size_t i = 0; i < x.size(); ++i) REQUIRE(y[i] == std::min(1.0f, std::max(-1.0f, x[i])));
    CHECK(run_and_check(&pool, 8, 2) == 2);  // the parked workers are back
  }
  xnn_delete_operator(op);
  // Without a pool the operator runs on this thread.
  CHECK(cpu::xnnpack_pool(nullptr) == nullptr);
}

}  // namespace
}  // namespace mt::test
