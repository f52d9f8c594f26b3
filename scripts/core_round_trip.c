/* The round trip of a cache line between the first two CPUs this process may run on, in ns (median of
 * 9 batches of 20000): what a thread handing work to another and waiting for its answer pays at the
 * least. On a VM it shows where the host placed the two vCPUs: near (one core complex, ~100 ns) or far
 * (250-800 ns), which moves every 2-thread result (scripts/compare_peers.py probes it around each
 * model's runs). Prints one number; exit 1 where fewer than two CPUs are available. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { kTrips = 20000, kBatches = 9 };
static _Atomic int flag;
static int cpus[2];

static void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void* answer(void* unused) {
  (void)unused;
  for (int i = 0; i < kTrips * kBatches; ++i) {
    while (atomic_load(&flag) != 1) {
    }
    atomic_store(&flag, 0);
  }
  return NULL;
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(void) {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return 1;
  int found = 0;
  for (int c = 0; c < CPU_SETSIZE && found < 2; ++c)
    if (CPU_ISSET(c, &allowed)) cpus[found++] = c;
  if (found < 2) return 1;
  pin(cpus[0]);
  /* The answering thread starts on its own CPU: under a real-time policy (chrt, as compare_peers runs)
   * a thread created on this one would wait behind this one's spinning forever. */
  cpu_set_t other;
  CPU_ZERO(&other);
  CPU_SET(cpus[1], &other);
  pthread_attr_t attr;
  pthread_t thread;
  if (pthread_attr_init(&attr) != 0 || pthread_attr_setaffinity_np(&attr, sizeof other, &other) != 0 ||
      pthread_create(&thread, &attr, answer, NULL) != 0)
    return 1;
  double batch_ns[kBatches];
  for (int b = 0; b < kBatches; ++b) {
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (int i = 0; i < kTrips; ++i) {
      atomic_store(&flag, 1);
      while (atomic_load(&flag) != 0) {
      }
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    batch_ns[b] = ((double)(end.tv_sec - start.tv_sec) * 1e9 + (double)(end.tv_nsec - start.tv_nsec)) / kTrips;
  }
  pthread_join(thread, NULL);
  qsort(batch_ns, kBatches, sizeof batch_ns[0], by_value);
  printf("%.0f\n", batch_ns[kBatches / 2]);
  return 0;
}
