// The quantize kernels (kernels/cpu/engines/int8_quantize.h) against lib/ops/int8_arithmetic.h's
// quantize_value, exactly: both paths (AVX-512 where the CPU has it, and portable), in order and
// NCHW -> NHWC, at pixel counts around the 16-value steps, 1 to 17 channels (the vpermb interleave
// takes up to 4), two images, one and two threads, and values that stress the arithmetic (NaN,
// infinities, halves that round to even, values past the clamp). And the planner's use of the
// NHWC form: a quantize read by an int8 conv, on cpu, equals the reference.
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/engines/int8_quantize.h"
#include "kernels/cpu/engines/int8_vnni.h"
#include "kernels/cpu/plan/thread_pool.h"
#include "lib/ops/int8_arithmetic.h"
#include "tests/unit/cpu/cpu_test_util.h"

namespace mt::test {
namespace {

std::vector<float> awkward_floats(size_t n, float scale, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> spread(-300.0f * scale, 300.0f * scale);
  std::uniform_int_distribution<int> step(-140, 140);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    switch (i % 7) {
      case 0: v[i] = (static_cast<float>(step(rng)) + 0.5f) * scale; break;  // halves
      case 1: v[i] = std::numeric_limits<float>::quiet_NaN(); break;
      case 2: v[i] = i % 2 ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity(); break;
      default: v[i] = spread(rng);
    }
  }
  return v;
}

}  // namespace

TEST_CASE("cpu int8 quantize: equals quantize_value, in order and NCHW -> NHWC, on both paths") {
  mt::cpu::ThreadPool two_threads(2);
  mt::cpu::ThreadPool* two = &two_threads;
  const cpu::QuantizeParams q{.scale = 0.037f, .zero_point = -9};
  std::vector<bool> paths{false};
  if (cpu::int8_vnni_supported()) paths.push_back(true);
  for (bool avx512 : paths)
    for (mt::cpu::ThreadPool* pool : {static_cast<mt::cpu::ThreadPool*>(nullptr), two}) {
      const std::string path = std::string(avx512 ? "AVX-512" : "portable") + (pool ? ", 2 threads" : ", 1 thread");
      for (size_t n : {0, 1, 15, 16, 17, 40000}) {
        const std::vector<float> x = awkward_floats(n, q.scale, static_cast<uint32_t>(n));
        std::vector<int8_t> y(n + 1, 99);
        cpu::int8_quantize(x.data(), y.data(), n, q, avx512, pool);
        for (size_t i = 0; i < n; ++i)
          if (y[i] != quantize_value(x[i], q.scale, q.zero_point))
            FAIL_CHECK(path << " n=" << n << " at " << i << ": x=" << x[i] << " got " << int{y[i]});
        CHECK_MESSAGE(y[n] == 99, path << " n=" << n << ": wrote past the end");
      }
      for (size_t channels : {1, 3, 4, 5, 17})
        for (size_t pixels : {1, 15, 16, 17, 50, 3000}) {
          const size_t batch = 2, count = batch * channels * pixels;
          const std::vector<float> x = awkward_floats(count, q.scale, static_cast<uint32_t>(channels * 1000 + pixels));
          std::vector<int8_t> y(count + 1, 99);
          cpu::int8_quantize_to_nhwc(x.data(), y.data(), batch, channels, pixels, q, avx512, pool);
          size_t wrong = 0;
          for (size_t b = 0; b < batch; ++b)
            for (size_t c = 0; c < channels; ++c)
              for (size_t p = 0; p < pixels; ++p)
                wrong += y[(b * pixels + p) * channels + c] !=
                         quantize_value(x[(b * channels + c) * pixels + p], q.scale, q.zero_point);
          CHECK_MESSAGE(wrong == 0, path << " NHWC channels=" << channels << " pixels=" << pixels << ": " << wrong
                                         << " values differ");
          CHECK_MESSAGE(y[count] == 99, path << " NHWC: wrote past the end");
        }
    }
}

TEST_CASE("cpu int8 quantize: a model input read by an int8 conv is quantized into NHWC, equal to the reference") {
  // quantize (3 channels, 9x7) -> int8 3x3 conv to 5 channels -> dequantize.
  GraphBuilder b;
  std::vector<float> input(3 * 9 * 7);
  for (size_t i = 0; i < input.size(); ++i) input[i] = std::sin(static_cast<float>(i) * 0.37f) * 2.0f;
  std::vector<int8_t> weights(5 * 3 * 3 * 3);
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<int8_t>(i * 29 % 201 - 100);
  const auto x = b.input("x", HostTensor::of(DType::f32, {1, 3, 9, 7}, input));
  const auto q = b.op("quantize", {x});
  b.graph.tensor(q).dtype = DType::i8;
  b.graph.tensor(q).quant = QuantParams{.scales = {0.02f}, .zero_points = {4}};
  const auto w = b.constant("w", HostTensor::of(DType::i8, {5, 3, 3, 3}, weights));
  b.graph.tensor(w).quant =
      QuantParams{.scales = std::vector<float>(5, 0.01f), .zero_points = std::vector<int32_t>(5, 0), .axis = 0};
  const auto y = b.op("conv2d", {q, w}, {{"pads", ints({1, 1, 1, 1})}});
  b.graph.tensor(y).quant = QuantParams{.scales = {0.05f}, .zero_points = {-3}};
  const auto out = b.op("dequantize", {y});
  b.graph.tensor(out).dtype = DType::f32;
  b.output(out);
  const auto expected = run_graph(reference_backend(), b.graph, b.feeds);
  for (bool vnni : {true, false}) {
    PlanOptions options;
    options.int8_vnni = vnni;
    const auto actual = run_graph(cpu_backend(), b.graph, b.feeds, options);
    const auto e = expected[0].values<float>(), a = actual[0].values<float>();
    REQUIRE(a.size() == e.size());
    // The VNNI conv equals the reference; XNNPACK's may be one step (0.05) away.
    const float tolerance = vnni && cpu::int8_vnni_supported() ? 0.0f : 0.0501f;
    for (size_t i = 0; i < a.size(); ++i)
      if (std::abs(a[i] - e[i]) > tolerance)
        FAIL_CHECK("vnni=" << vnni << " at " << i << ": " << a[i] << " vs " << e[i]);
  }
}

}  // namespace mt::test
