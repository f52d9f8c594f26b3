// Latency statistics: hand-computed percentiles (linear interpolation), mean and sample stddev.
#include <doctest/doctest.h>

#include "lib/bench/latency_stats.h"

namespace mt::bench {

TEST_CASE("percentile interpolates between ranks like numpy") {
  const std::vector<double> sorted = {1, 2, 3, 4};
  CHECK(percentile(sorted, 0) == 1);
  CHECK(percentile(sorted, 50) == doctest::Approx(2.5));
  CHECK(percentile(sorted, 90) == doctest::Approx(3.7));  // rank 2.7: 3 + 0.7 * (4 - 3)
  CHECK(percentile(sorted, 100) == 4);
  CHECK(percentile(std::vector<double>{5}, 99) == 5);
  CHECK(percentile(std::vector<double>{}, 50) == 0);
}

TEST_CASE("summarize_latency computes every statistic and keeps the samples in order") {
  const LatencyStats s = summarize_latency({4, 1, 3, 2});
  CHECK(s.count == 4);
  CHECK(s.samples == std::vector<double>{4, 1, 3, 2});
  CHECK(s.min == 1);
  CHECK(s.max == 4);
  CHECK(s.median == doctest::Approx(2.5));
  CHECK(s.mean == doctest::Approx(2.5));
  CHECK(s.p90 == doctest::Approx(3.7));
  CHECK(s.p99 == doctest::Approx(3.97));
  CHECK(s.stddev == doctest::Approx(1.2909944));  // sqrt(5 / 3)
}

TEST_CASE("summarize_latency of one sample and of none") {
  const LatencyStats one = summarize_latency({0.25});
  CHECK(one.count == 1);
  CHECK(one.min == 0.25);
  CHECK(one.median == 0.25);
  CHECK(one.p99 == 0.25);
  CHECK(one.stddev == 0);
  const LatencyStats none = summarize_latency({});
  CHECK(none.count == 0);
  CHECK(none.median == 0);
}

TEST_CASE("summarize_latency of 100 samples: p90 and p99 near the top") {
  std::vector<double> samples;
  for (int i = 100; i >= 1; --i) samples.push_back(i);
  const LatencyStats s = summarize_latency(samples);
  CHECK(s.median == doctest::Approx(50.5));
  CHECK(s.p90 == doctest::Approx(90.1));  // rank 89.1
  CHECK(s.p99 == doctest::Approx(99.01));
}

}  // namespace mt::bench
