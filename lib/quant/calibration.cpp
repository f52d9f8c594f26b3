#include "lib/quant/calibration.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "lib/core/error.h"
#include "lib/runtime/backend_registry.h"
#include "lib/runtime/run_once.h"

namespace mt::quant {

void Observer::observe_range(std::span<const float> values) {
  for (float v : values)
    if (std::isfinite(v)) {
      min_ = std::min(min_, v);
      max_ = std::max(max_, v);
    }
}

void Observer::start_histogram() {
  if (min_ > max_) min_ = max_ = 0;  // nothing finite seen
  upper_ = std::max(std::abs(min_), std::abs(max_));
  lower_ = one_sided() ? 0.0f : -upper_;
  bins_.assign(kBins, 0.0);
}

void Observer::observe_histogram(std::span<const float> values) {
  if (upper_ <= lower_) return;
  const double width = (static_cast<double>(upper_) - lower_) / kBins;
  for (float v : values) {
    if (!std::isfinite(v)) continue;
    const auto bin = static_cast<int64_t>((static_cast<double>(v) - lower_) / width);
    bins_[static_cast<size_t>(std::clamp<int64_t>(bin, 0, kBins - 1))] += 1.0;
  }
}

Range Observer::range(Method method, double percentile) const {
  if (min_ > max_) return {0, 0};
  if (method == Method::minmax || upper_ <= lower_ || bins_.empty()) return {min_, max_};
  return method == Method::percentile ? percentile_range(percentile) : entropy_range();
}

Range Observer::percentile_range(double percentile) const {
  double total = 0;
  for (double count : bins_) total += count;
  const double tail = total * (100.0 - percentile) / 100.0 / (one_sided() ? 1.0 : 2.0);
  const double width = (static_cast<double>(upper_) - lower_) / kBins;
  Range result{min_, max_};
  double seen = 0;
  for (int i = kBins - 1; i >= 0 && seen + bins_[i] <= tail; --i) {
    seen += bins_[i];
    result.hi = static_cast<float>(lower_ + width * i);
  }
  if (!one_sided()) {
    seen = 0;
    for (int i = 0; i < kBins && seen + bins_[i] <= tail; ++i) {
      seen += bins_[i];
      result.lo = static_cast<float>(lower_ + width * (i + 1));
    }
  }
  result.hi = std::max(std::min(result.hi, max_), result.lo);
  result.lo = std::max(result.lo, min_);
  return result;
}

namespace {

// KL(P || Q) for P = `reference` (the first n bins, with everything beyond folded into the last)
// and Q = P merged into `levels` equal groups of bins, each group's mass spread over its non-empty bins.
double clipped_divergence(const std::vector<double>& histogram, size_t n, size_t levels) {
  std::vector<double> p(histogram.begin(), histogram.begin() + static_cast<std::ptrdiff_t>(n));
  for (size_t i = n; i < histogram.size(); ++i) p[n - 1] += histogram[i];
  std::vector<double> q(n, 0.0);
  for (size_t level = 0; level < levels; ++level) {
    const size_t begin = level * n / levels, end = (level + 1) * n / levels;
    double mass = 0;
    size_t nonzero = 0;
    for (size_t i = begin; i < end; ++i) {
      mass += histogram[i];  // the clipped-off outliers are not spread into Q (TensorRT's choice)
      nonzero += p[i] > 0;
    }
    // Where P has mass and Q none (the clipped bin), a small count keeps the divergence finite.
    for (size_t i = begin; i < end; ++i)
      if (p[i] > 0) q[i] = mass > 0 ? mass / static_cast<double>(nonzero) : 1e-4;
  }
  double p_total = 0, q_total = 0;
  for (size_t i = 0; i < n; ++i) {
    p_total += p[i];
    q_total += q[i];
  }
  if (p_total <= 0 || q_total <= 0) return std::numeric_limits<double>::infinity();
  double divergence = 0;
  for (size_t i = 0; i < n; ++i) {
    if (p[i] <= 0) continue;
    if (q[i] <= 0) return std::numeric_limits<double>::infinity();
    divergence += p[i] / p_total * std::log((p[i] / p_total) / (q[i] / q_total));
  }
  return divergence;
}

}  // namespace

Range Observer::entropy_range() const {
  // A two-sided histogram is folded around zero into |x| bins.
  std::vector<double> histogram;
  size_t levels = 256;
  if (one_sided()) {
    histogram = bins_;
  } else {
    levels = 128;
    histogram.assign(kBins / 2, 0.0);
    for (int i = 0; i < kBins; ++i) histogram[i < kBins / 2 ? kBins / 2 - 1 - i : i - kBins / 2] += bins_[i];
  }
  const double width = (static_cast<double>(upper_) - lower_) / kBins;
  size_t best_n = histogram.size();
  double best = std::numeric_limits<double>::infinity();
  for (size_t n = levels; n <= histogram.size(); ++n) {
    const double divergence = clipped_divergence(histogram, n, levels);
    if (divergence < best) {
      best = divergence;
      best_n = n;
    }
  }
  const auto threshold = static_cast<float>(width * static_cast<double>(best_n));
  // The histogram starts at 0 or -max, so the threshold may lie below the minimum of a tensor
  // that is never near zero; then everything clips to the threshold (and lo must not pass hi).
  const float hi = std::min(max_, threshold);
  return {std::min(std::max(min_, -threshold), hi), hi};
}

const Backend& reference_backend() {
  // Through the registry (kernels/backend_registry.cpp), so that lib/ depends on no backend's
  // headers; the reference backend is always built in.
  static const Backend* const backend = find_backend("reference");
  if (backend == nullptr) fail(ExitCode::failure, "internal: the reference backend is not built in");
  return *backend;
}

std::vector<HostArray> run_and_capture(const Graph& graph, const Sample& sample, const std::vector<std::string>& tensors) {
  Graph probe = graph;
  std::vector<std::string> outputs;
  std::vector<size_t> from_input(tensors.size(), SIZE_MAX);
  for (size_t t = 0; t < tensors.size(); ++t) {
    auto input = std::find(graph.inputs.begin(), graph.inputs.end(), tensors[t]);
    if (input != graph.inputs.end()) {
      from_input[t] = static_cast<size_t>(input - graph.inputs.begin());
      continue;
    }
    if (std::find(outputs.begin(), outputs.end(), tensors[t]) == outputs.end()) outputs.push_back(tensors[t]);
  }
  probe.outputs = outputs;
  RunResult result = run_once(reference_backend(), probe, PlanOptions{}, sample);
  std::vector<HostArray> captured;
  for (size_t t = 0; t < tensors.size(); ++t) {
    if (from_input[t] != SIZE_MAX) {
      captured.push_back(sample[from_input[t]]);
      continue;
    }
    const auto at = std::find(outputs.begin(), outputs.end(), tensors[t]) - outputs.begin();
    captured.push_back(result.outputs[static_cast<size_t>(at)]);
  }
  return captured;
}

std::map<std::string, Range, std::less<>> calibrate(const Graph& graph, const std::vector<Sample>& samples,
                                                    const CalibrationOptions& options) {
  std::vector<std::string> observed;
  for (const auto& input : graph.inputs)
    if (graph.tensor(input).dtype == DType::f32) observed.push_back(input);
  std::set<std::string> seen(observed.begin(), observed.end());
  for (const auto& node : graph.nodes)
    for (const auto& output : node.outputs)
      if (!output.empty() && graph.tensor(output).dtype == DType::f32 && seen.insert(output).second)
        observed.push_back(output);

  std::vector<Observer> observers(observed.size());
  const bool histogram = options.method != Method::minmax;
  const size_t passes = histogram ? 2 : 1;
  const size_t total = samples.size() * passes;
  size_t done = 0;
  for (size_t pass = 0; pass < passes; ++pass) {
    if (pass == 1)
      for (auto& observer : observers) observer.start_histogram();
    for (const Sample& sample : samples) {
      const std::vector<HostArray> values = run_and_capture(graph, sample, observed);
      for (size_t t = 0; t < observed.size(); ++t) {
        std::span<const float> data(values[t].as<float>(), static_cast<size_t>(values[t].numel()));
        if (pass == 0)
          observers[t].observe_range(data);
        else
          observers[t].observe_histogram(data);
      }
      if (options.progress) options.progress(++done, total);
    }
  }
  std::map<std::string, Range, std::less<>> ranges;
  for (size_t t = 0; t < observed.size(); ++t) ranges[observed[t]] = observers[t].range(options.method, options.percentile);
  return ranges;
}

}  // namespace mt::quant
