// Scale / zero-point math, weight and bias quantization, and the calibration observers.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "lib/ops/int8_arithmetic.h"
#include "lib/quant/calibration.h"
#include "lib/quant/quant_params.h"

namespace mt::quant {

TEST_CASE("activation parameters cover the range and make zero exact") {
  QuantParams p = activation_params(0.0f, 2.55f);  // after ReLU
  CHECK(p.scales[0] == doctest::Approx(0.01f));
  CHECK(p.zero_points[0] == -128);
  p = activation_params(-1.0f, 1.0f);
  CHECK(p.scales[0] == doctest::Approx(2.0f / 255));
  CHECK((p.zero_points[0] == 0 || p.zero_points[0] == -1));  // -128 + 127.5: within float rounding of -0.5
  p = activation_params(0.5f, 1.0f);  // widened to include zero
  CHECK(p.zero_points[0] == -128);
  CHECK(p.scales[0] == doctest::Approx(1.0f / 255));
  p = activation_params(0.0f, 0.0f);
  CHECK(p.scales[0] > 0);
  CHECK(dequantize_value(quantize_value(0.0f, p.scales[0], p.zero_points[0]), p.scales[0],
                                    p.zero_points[0]) == 0.0f);
}

TEST_CASE("quantize_value rounds half to even and saturates") {
  CHECK(quantize_value(0.5f, 1.0f, 0) == 0);
  CHECK(quantize_value(1.5f, 1.0f, 0) == 2);
  CHECK(quantize_value(-2.5f, 1.0f, 0) == -2);
  CHECK(quantize_value(1000.0f, 1.0f, 0) == 127);
  CHECK(quantize_value(-1000.0f, 1.0f, 10) == -128);
  CHECK(quantize_value(3.0f, 0.5f, -128) == -122);
  CHECK(requantize(250, 0.01f, 5, -128, 127) == 7);   // 2.5 -> 2, + 5
  CHECK(requantize(350, 0.01f, 5, -128, 127) == 9);   // 3.5 -> 4, + 5
  CHECK(requantize(100000, 0.01f, 0, -128, 100) == 100);
}

TEST_CASE("weights: symmetric per output channel; bias: int32 at x_scale * w_scale") {
  const std::vector<float> w = {0.5f, -1.27f, 0.0f, 0.02f, 0.01f, 0.0f, 0.0f, 0.0f};
  const QuantizedWeights q = quantize_weights(w, 4);
  CHECK(q.params.axis == 0);
  REQUIRE(q.params.scales.size() == 4);
  CHECK(q.params.scales[0] == doctest::Approx(0.01f));
  CHECK(q.values[0] == 50);
  CHECK(q.values[1] == -127);
  CHECK(q.params.scales[1] == doctest::Approx(0.02f / 127));
  CHECK(q.values[2] == 0);
  CHECK(q.values[3] == 127);
  CHECK(q.values[4] == 127);
  CHECK(q.params.scales[3] == 1.0f);  // an all-zero channel
  CHECK(q.params.zero_points == std::vector<int32_t>(4, 0));
  const auto b = quantize_bias(std::vector<float>{1.0f, -0.5f}, 0.1f, std::vector<float>{0.01f, 0.5f});
  CHECK(b == std::vector<int32_t>{1000, -10});
}

TEST_CASE("observers: minmax, percentile and entropy ranges") {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> values(100000);
  for (auto& v : values) v = normal(rng);
  values[0] = 50.0f;  // one outlier
  Observer observer;
  observer.observe_range(values);
  observer.start_histogram();
  observer.observe_histogram(values);
  const Range minmax = observer.range(Method::minmax, 0);
  CHECK(minmax.hi == 50.0f);
  CHECK(minmax.lo < -3.5f);
  const Range percentile = observer.range(Method::percentile, 99.9);
  // 0.05% of a standard normal lies above 3.29; bins are 50/1024 wide.
  CHECK(percentile.hi == doctest::Approx(3.29).epsilon(0.03));
  CHECK(percentile.lo == doctest::Approx(-3.29).epsilon(0.03));
  const Range entropy = observer.range(Method::entropy, 0);
  CHECK(entropy.hi < 10.0f);
  CHECK(entropy.hi > 2.0f);
  CHECK(entropy.lo == std::max(minmax.lo, -entropy.hi));  // symmetric threshold, within the observed range

  Observer relu;  // one-sided: only the upper tail is cut
  std::vector<float> positive(values.size());
  for (size_t i = 0; i < values.size(); ++i) positive[i] = std::max(values[i], 0.0f);
  relu.observe_range(positive);
  relu.start_histogram();
  relu.observe_histogram(positive);
  CHECK(relu.one_sided());
  CHECK(relu.range(Method::percentile, 99.9).lo == 0.0f);
  CHECK(relu.range(Method::percentile, 99.9).hi == doctest::Approx(3.09).epsilon(0.03));
}

TEST_CASE("histogram ranges stay valid for a tensor far from zero (shufflenet's entropy threshold below its minimum)") {
  // Values in [0.9, 1]: the one-sided histogram spans [0, 1], so the entropy search can choose a
  // threshold below the minimum; the range must still satisfy lo <= hi (activation_params throws
  // otherwise).
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> uniform(0.9f, 1.0f);
  std::vector<float> values(20000);
  for (auto& v : values) v = uniform(rng);
  Observer observer;
  observer.observe_range(values);
  observer.start_histogram();
  observer.observe_histogram(values);
  for (const Method method : {Method::minmax, Method::percentile, Method::entropy}) {
    const Range range = observer.range(method, 99.0);
    CHECK(range.lo <= range.hi);
    CHECK(range.hi <= 1.0f);
    CHECK_NOTHROW(activation_params(range.lo, range.hi));
  }
}

}  // namespace mt::quant
