// The AVX-512 depthwise conv (kernels/cpu/engines/depthwise_conv.h) against a double-precision
// loop: 3x3 and 5x5, strides 1 and 2, dilations 1 to 4, symmetric and asymmetric padding, widths
// around its 8-pixel groups, channel counts around its 16-lane blocks,
// two images, each output stage (clamp, hardswish, silu, residual add with its own clamp), one and
// two threads; nothing outside the output is written. Tolerance: 1e-5 of the sum of |w x| terms
// (fp32 accumulation), plus 2e-6 of the value for silu's exp. The weights' packing is checked to be
// a pure function of its inputs. On a CPU without AVX-512F there is nothing to test.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/engines/depthwise_conv.h"
#include "kernels/cpu/plan/plan_builder.h"
#include "kernels/cpu/plan/thread_pool.h"
#include "tests/unit/cpu/epilogue_reference.h"

namespace mt::test {
namespace {

struct Case {
  size_t n, channels, h, w, kernel, stride, dilation;
  int64_t pad_top, pad_left, pad_bottom, pad_right;
};

void check_depthwise(const Case& k, cpu::Epilogue e, bool residual, mt::cpu::ThreadPool* pool) {
  const size_t c = k.channels, span = (k.kernel - 1) * k.dilation + 1;
  const size_t out_h = (k.h + static_cast<size_t>(k.pad_top + k.pad_bottom) - span) / k.stride + 1;
  const size_t out_w = (k.w + static_cast<size_t>(k.pad_left + k.pad_right) - span) / k.stride + 1;
  std::mt19937 rng(static_cast<unsigned>(c * 131 + k.h * 7 + k.kernel + k.stride * 3 + k.dilation));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> x(k.n * k.h * k.w * c), w(c * k.kernel * k.kernel), bias(c), r(k.n * out_h * out_w * c);
  for (auto* v : {&x, &w, &bias, &r})
    for (float& f : *v) f = 2.0f * dist(rng);
  const float sentinel = 12345.0f;
  std::vector<float> y(k.n * out_h * out_w * c + 16, sentinel);  // 16 more: nothing written past the end
  const cpu::OwnedBlock memory(cpu::depthwise_bytes(k.kernel, k.kernel, c));
  const cpu::PackedDepthwise packed =
      cpu::pack_depthwise_weights(memory.data(), w.data(), bias.data(), k.kernel, k.kernel, c);
  const cpu::PackedConvShape shape{.n = k.n,
                                   .h = k.h,
                                   .w = k.w,
                                   .channels = c,
                                   .out_h = out_h,
                                   .out_w = out_w,
                                   .kernel_h = k.kernel,
                                   .kernel_w = k.kernel,
                                   .stride_h = k.stride,
                                   .stride_w = k.stride,
                                   .dilation_h = k.dilation,
                                   .dilation_w = k.dilation,
                                   .pad_top = k.pad_top,
                                   .pad_left = k.pad_left};
  if (residual) e.residual = r.data();
  cpu::depthwise_conv(packed, shape, x.data(), y.data(), e, pool);

  const std::string what = "n=" + std::to_string(k.n) + " c=" + std::to_string(c) + " " + std::to_string(k.h) + "x" +
                           std::to_string(k.w) + " k=" + std::to_string(k.kernel) + " s=" + std::to_string(k.stride) +
                           " d=" + std::to_string(k.dilation) +
                           " act=" + std::to_string(static_cast<int>(e.activation)) + (residual ? " residual" : "");
  size_t mismatches = 0;
  for (size_t b = 0; b < k.n; ++b)
    for (size_t oy = 0; oy < out_h; ++oy)
      for (size_t ox = 0; ox < out_w; ++ox)
        for (size_t ch = 0; ch < c; ++ch) {
          double sum = bias[ch], magnitude = std::fabs(sum);
          for (size_t ky = 0; ky < k.kernel; ++ky)
            for (size_t kx = 0; kx < k.kernel; ++kx) {
              const int64_t iy = static_cast<int64_t>(oy * k.stride + ky * k.dilation) - k.pad_top;
              const int64_t ix = static_cast<int64_t>(ox * k.stride + kx * k.dilation) - k.pad_left;
              if (iy < 0 || ix < 0 || iy >= static_cast<int64_t>(k.h) || ix >= static_cast<int64_t>(k.w)) continue;
              const double term = static_cast<double>(w[(ch * k.kernel + ky) * k.kernel + kx]) *
                                  x[((b * k.h + static_cast<size_t>(iy)) * k.w + static_cast<size_t>(ix)) * c + ch];
              sum += term;
              magnitude += std::fabs(term);
            }
          const size_t at = ((b * out_h + oy) * out_w + ox) * c + ch;
          const auto [want, ok] = check_epilogue_output(y[at], sum, magnitude, e, r[at]);
          if (!ok && mismatches++ < 5)
            FAIL_CHECK(what << " at " << b << "," << oy << "," << ox << "," << ch << ": got " << y[at] << ", want "
                            << want);
        }
  for (size_t i = y.size() - 16; i < y.size(); ++i)
    if (y[i] != sentinel) FAIL_CHECK(what << ": wrote past the output");
}

}  // namespace

TEST_CASE("cpu depthwise conv: matches a double-precision loop") {
  if (!cpu::depthwise_supported()) {
    MESSAGE("skipped: this CPU has no AVX-512F, so the cpu backend uses XNNPACK's depthwise convs instead");
    return;
  }
  const float inf = std::numeric_limits<float>::infinity();
  mt::cpu::ThreadPool two_threads(2);
  mt::cpu::ThreadPool* two = &two_threads;
  const std::vector<Case> cases = {
      {1, 16, 12, 12, 3, 1, 1, 1, 1, 1, 1},  // one full block, interior of 10 pixels: 8 + 2
      {2, 40, 9, 23, 3, 1, 1, 1, 1, 1, 1},   // 2.5 blocks, two images, 21 interior pixels
      {1, 17, 14, 14, 3, 2, 1, 1, 1, 1, 1},  // stride 2, a lane of the second block
      {1, 32, 11, 20, 3, 2, 1, 0, 1, 1, 0},  // asymmetric pads (TF-style "same" stride 2)
      {1, 24, 10, 19, 5, 1, 1, 2, 2, 2, 2},  // 5x5: 4-pixel groups
      {1, 48, 7, 7, 5, 1, 1, 2, 2, 2, 2},    // 5x5 on 7x7: every pixel but 3 at an edge
      {1, 8, 15, 15, 5, 2, 1, 2, 2, 2, 2},   // 5x5 stride 2, fewer channels than a block
      {1, 20, 17, 17, 5, 1, 2, 4, 4, 4, 4},  // dilation 2 (DeepLabV3's)
      {1, 16, 13, 26, 3, 1, 3, 3, 3, 3, 3},  // dilation 3
      {1, 16, 12, 30, 5, 1, 4, 8, 8, 8, 8},  // dilation 4, the widest taken
      {2, 33, 11, 25, 3, 2, 2, 2, 2, 2, 2},  // stride 2 and dilation 2 (the run-time path)
      {1, 3, 5, 5, 3, 1, 1, 0, 0, 0, 0},     // no padding, 3 channels
      {1, 16, 4, 4, 5, 1, 2, 4, 4, 4, 4},    // every tap of some pixels outside the input
  };
  for (const Case& k : cases) {
    check_depthwise(k, cpu::Epilogue{}, false, nullptr);
    check_depthwise(k, cpu::Epilogue{.low = 0.0f, .high = 6.0f}, false, two);
    check_depthwise(k, cpu::Epilogue{.activation = cpu::Activation::hardswish}, false, nullptr);
    check_depthwise(k, cpu::Epilogue{.activation = cpu::Activation::silu}, true, two);
    check_depthwise(k, cpu::Epilogue{.low = -1.0f, .high = inf, .residual_low = 0.0f, .residual_high = 3.0f}, true,
                    nullptr);
  }
}

TEST_CASE("cpu depthwise conv: silu's extremes, NaN kept") {
  if (!cpu::depthwise_supported()) return;
  // A 1x1-channel 3x3 conv of a single pixel is its centre weight times the pixel plus the bias:
  // with weight 1 and bias 0 the output is silu(x) itself, as the reference's x / (1 + exp(-x)):
  // NaN for -inf / inf.
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (const auto& [input, expected] :
       {std::pair{0.0f, 0.0f}, {100.0f, 100.0f}, {-100.0f, 0.0f}, {-1e30f, 0.0f}, {inf, inf}, {-inf, nan}, {nan, nan}}) {
    // Copies: doctest's INFO captures by reference, which C++20 (clang 14) refuses for structured bindings.
    const float x = input, want = expected;
    std::vector<float> w(9, 0.0f);
    w[4] = 1.0f;
    const cpu::OwnedBlock memory(cpu::depthwise_bytes(3, 3, 1));
    const cpu::PackedDepthwise packed = cpu::pack_depthwise_weights(memory.data(), w.data(), nullptr, 3, 3, 1);
    const cpu::PackedConvShape shape{.n = 1,
                                     .h = 1,
                                     .w = 1,
                                     .channels = 1,
                                     .out_h = 1,
                                     .out_w = 1,
                                     .kernel_h = 3,
                                     .kernel_w = 3,
                                     .stride_h = 1,
                                     .stride_w = 1,
                                     .dilation_h = 1,
                                     .dilation_w = 1,
                                     .pad_top = 1,
                                     .pad_left = 1};
    float y = 0;
    cpu::depthwise_conv(packed, shape, &x, &y, cpu::Epilogue{.activation = cpu::Activation::silu}, nullptr);
    INFO("silu(" << x << ") = " << y);
    if (std::isnan(want)) CHECK(std::isnan(y));
    else if (std::isinf(want)) CHECK(y == want);
    else CHECK(std::fabs(y - want) <= 1e-30f + 1e-6f * std::fabs(want));
  }
}

TEST_CASE("cpu depthwise conv: packing is a pure function of the weights") {
  const size_t c = 21;
  std::vector<float> w(c * 25), bias(c);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i) * 0.5f;
  for (size_t i = 0; i < c; ++i) bias[i] = -static_cast<float>(i);
  const size_t bytes = cpu::depthwise_bytes(5, 5, c);
  CHECK(bytes == 2 * (25 + 1) * 16 * sizeof(float));  // 2 blocks of 16 channels: 25 taps and the bias
  std::vector<std::byte> a(bytes, std::byte{0x5a}), b(bytes, std::byte{0xa5});
  const cpu::PackedDepthwise pa = cpu::pack_depthwise_weights(a.data(), w.data(), bias.data(), 5, 5, c);
  cpu::pack_depthwise_weights(b.data(), w.data(), bias.data(), 5, 5, c);
  CHECK(a == b);  // every byte written, the padding lanes included
  // Channel 18 (block 1, lane 2), tap (1, 3), and its bias.
  CHECK(pa.data[(26 + 1 * 5 + 3) * 16 + 2] == w[18 * 25 + 8]);
  CHECK(pa.data[(26 + 25) * 16 + 2] == bias[18]);
  CHECK(pa.data[(26 + 25) * 16 + 5] == 0.0f);  // channel 21: past the last
}

}  // namespace mt::test
