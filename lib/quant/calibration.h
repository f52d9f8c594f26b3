// Calibration: run the fp32 model on sample inputs with the reference backend, observe every
// float32 activation, and choose the range [lo, hi] each will be quantized over.
#pragma once

#include <functional>
#include <limits>
#include <span>
#include <map>
#include <string>
#include <vector>

#include "lib/ir/graph.h"
#include "lib/quant/samples.h"
#include "lib/runtime/backend.h"

namespace mt::quant {

enum class Method { minmax, percentile, entropy };

struct Range {
  float lo = 0;
  float hi = 0;
};

// One tensor's statistics: its min/max, then a histogram of kBins bins over [-a, a] (a = max |x|)
// or over [0, max] when the tensor is never negative (after ReLU), filled in a second pass.
class Observer {
 public:
  static constexpr int kBins = 2048;

  void observe_range(std::span<const float> values);
  void start_histogram();  // after every observe_range
  void observe_histogram(std::span<const float> values);

  float min() const { return min_; }
  float max() const { return max_; }
  bool one_sided() const { return min_ >= 0; }
  // The range each method chooses. minmax: [min, max]. percentile: the central `percentile`
  // percent of the values (both tails cut by (100 - p) / 2 percent, the upper tail alone for a
  // one-sided tensor). entropy: the threshold t minimising the KL divergence between the
  // histogram clipped at t and its quantization to 256 (one-sided) or 128 (|x|) levels, as
  // TensorRT's entropy calibration; the range is [max(min, -t), min(max, t)].
  Range range(Method method, double percentile) const;

 private:
  Range percentile_range(double percentile) const;
  Range entropy_range() const;
  float min_ = std::numeric_limits<float>::infinity();
  float max_ = -std::numeric_limits<float>::infinity();
  float lower_ = 0, upper_ = 0;  // histogram span
  std::vector<double> bins_;
};

struct CalibrationOptions {
  Method method = Method::minmax;
  double percentile = 99.99;
  // Called after each inference with (done, total) for a progress display; may be empty.
  std::function<void(size_t, size_t)> progress;
};

// The chosen range of every float32 tensor the graph's nodes produce and of its inputs.
std::map<std::string, Range, std::less<>> calibrate(const Graph& graph, const std::vector<Sample>& samples,
                                                    const CalibrationOptions& options);

// The reference backend, on which lib/quant runs every graph (calibration, bias correction, report).
const Backend& reference_backend();

// Runs `graph` on the reference backend and returns every tensor named in `tensors` (which must be
// produced by a node or be graph inputs), in that order.
std::vector<HostArray> run_and_capture(const Graph& graph, const Sample& sample, const std::vector<std::string>& tensors);

}  // namespace mt::quant
