// Summary statistics of latency samples: min, median, mean, p90, p99, max, standard deviation,
// with the samples themselves kept (reports record every one).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace mt::bench {

struct LatencyStats {
  std::vector<double> samples;  // seconds, in the order they were measured
  size_t count = 0;
  double min = 0;
  double median = 0;
  double mean = 0;
  double p90 = 0;
  double p99 = 0;
  double max = 0;
  double stddev = 0;  // sample standard deviation (n - 1); 0 for fewer than two samples
};

// Percentile q in [0, 100] of sorted values, interpolating linearly between the two closest
// ranks (numpy's default), so p50 of {1, 2, 3, 4} is 2.5. 0 for no values.
double percentile(std::span<const double> sorted, double q);

// All statistics of `samples`; all zero for no samples.
LatencyStats summarize_latency(std::vector<double> samples);

}  // namespace mt::bench
