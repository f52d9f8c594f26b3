#include "lib/bench/latency_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace mt::bench {

double percentile(std::span<const double> sorted, double q) {
  if (sorted.empty()) return 0;
  const double rank = std::clamp(q, 0.0, 100.0) / 100.0 * static_cast<double>(sorted.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(rank));
  const size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = rank - static_cast<double>(below);
  return sorted[below] + (sorted[above] - sorted[below]) * fraction;
}

LatencyStats summarize_latency(std::vector<double> samples) {
  LatencyStats stats;
  stats.samples = std::move(samples);
  stats.count = stats.samples.size();
  if (stats.count == 0) return stats;
  std::vector<double> sorted = stats.samples;
  std::sort(sorted.begin(), sorted.end());
  stats.min = sorted.front();
  stats.max = sorted.back();
  stats.median = percentile(sorted, 50);
  stats.p90 = percentile(sorted, 90);
  stats.p99 = percentile(sorted, 99);
  const double n = static_cast<double>(stats.count);
  stats.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / n;
  if (stats.count > 1) {
    double squares = 0;
    for (double s : sorted) squares += (s - stats.mean) * (s - stats.mean);
    stats.stddev = std::sqrt(squares / (n - 1));
  }
  return stats;
}

}  // namespace mt::bench
