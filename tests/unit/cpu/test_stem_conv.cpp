// The AVX-512 stem conv (kernels/cpu/engines/stem_conv.h) against a double-precision loop: 1 to 4
// input channels read as NCHW and as NHWC (the input's strides), 24 to 64 output channels (a
// partial vector, 2 to 4 vectors: the kernel takes them all, though planning picks it from 32 on),
// 3x3 and 7x7 kernels, strides 1 and 2, dilation 2, symmetric, asymmetric and no padding, widths
// around its 14-, 8- and 6-pixel groups, two images, each output stage
// (clamp, hardswish, silu in registers and as a second pass, residual add), one and two threads;
// nothing outside the output is written. Tolerance: 1e-5 of the sum of |w x| terms, plus 2e-6 of the
// value for silu. On a CPU without AVX-512F there is nothing to test.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/engines/stem_conv.h"
#include "kernels/cpu/plan/plan_builder.h"
#include "kernels/cpu/plan/thread_pool.h"
#include "tests/unit/cpu/epilogue_reference.h"

namespace mt::test {
namespace {

struct Case {
  size_t n, cin, cout, h, w, kernel, stride, dilation;
  int64_t pad_top, pad_left, pad_bottom, pad_right;
  bool nhwc;  // the input's layout
};

void check_stem(const Case& k, cpu::Epilogue e, bool residual, mt::cpu::ThreadPool* pool) {
  const size_t span = (k.kernel - 1) * k.dilation + 1;
  const size_t out_h = (k.h + static_cast<size_t>(k.pad_top + k.pad_bottom) - span) / k.stride + 1;
  const size_t out_w = (k.w + static_cast<size_t>(k.pad_left + k.pad_right) - span) / k.stride + 1;
  std::mt19937 rng(static_cast<unsigned>(k.cin * 131 + k.cout * 7 + k.kernel + k.stride * 3 + k.h));
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  const size_t taps = k.kernel * k.kernel * k.cin;
  std::vector<float> x(k.n * k.cin * k.h * k.w), w(k.cout * taps), bias(k.cout), r(k.n * out_h * out_w * k.cout);
  for (auto* v : {&x, &w, &bias, &r})
    for (float& f : *v) f = dist(rng);
  const cpu::StemStrides strides = k.nhwc ? cpu::StemStrides{k.h * k.w * k.cin, 1, k.w * k.cin, k.cin}
                                          : cpu::StemStrides{k.cin * k.h * k.w, k.h * k.w, k.w, 1};
  const float sentinel = 12345.0f;
  std::vector<float> y(r.size() + 16, sentinel);
  const cpu::OwnedBlock memory(cpu::stem_bytes(k.cin, k.cout, k.kernel, k.kernel));
  const cpu::PackedStem packed =
      cpu::pack_stem_weights(memory.data(), w.data(), bias.data(), k.cin, k.cout, k.kernel, k.kernel);
  const cpu::PackedConvShape shape{.n = k.n,
                                   .h = k.h,
                                   .w = k.w,
                                   .channels = k.cin,
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
  cpu::stem_conv(packed, shape, x.data(), strides, y.data(), e, pool);

  const std::string what = std::to_string(k.cin) + "->" + std::to_string(k.cout) + " " + std::to_string(k.h) + "x" +
                           std::to_string(k.w) + " k=" + std::to_string(k.kernel) + " s=" + std::to_string(k.stride) +
                           " d=" + std::to_string(k.dilation) + (k.nhwc ? " NHWC" : " NCHW") +
                           " act=" + std::to_string(static_cast<int>(e.activation)) + (residual ? " residual" : "");
  size_t mismatches = 0;
  for (size_t b = 0; b < k.n; ++b)
    for (size_t oy = 0; oy < out_h; ++oy)
      for (size_t ox = 0; ox < out_w; ++ox)
        for (size_t o = 0; o < k.cout; ++o) {
          double sum = bias[o], magnitude = std::fabs(sum);
          for (size_t ky = 0; ky < k.kernel; ++ky)
            for (size_t kx = 0; kx < k.kernel; ++kx)
              for (size_t c = 0; c < k.cin; ++c) {
                const int64_t iy = static_cast<int64_t>(oy * k.stride + ky * k.dilation) - k.pad_top;
                const int64_t ix = static_cast<int64_t>(ox * k.stride + kx * k.dilation) - k.pad_left;
                if (iy < 0 || ix < 0 || iy >= static_cast<int64_t>(k.h) || ix >= static_cast<int64_t>(k.w)) continue;
                const float xv = x[b * strides.image + c * strides.channel + static_cast<size_t>(iy) * strides.row +
                                   static_cast<size_t>(ix) * strides.column];
                const double term = static_cast<double>(w[o * taps + (ky * k.kernel + kx) * k.cin + c]) * xv;
                sum += term;
                magnitude += std::fabs(term);
              }
          const size_t at = ((b * out_h + oy) * out_w + ox) * k.cout + o;
          const auto [want, ok] = check_epilogue_output(y[at], sum, magnitude, e, r[at]);
          if (!ok && mismatches++ < 5)
            FAIL_CHECK(what << " at " << b << "," << oy << "," << ox << "," << o << ": got " << y[at] << ", want "
                            << want);
        }
  for (size_t i = y.size() - 16; i < y.size(); ++i)
    if (y[i] != sentinel) FAIL_CHECK(what << ": wrote past the output");
}

}  // namespace

TEST_CASE("cpu stem conv: matches a double-precision loop") {
  if (!cpu::stem_conv_supported()) {
    MESSAGE("skipped: this CPU has no AVX-512F, so the cpu backend uses the other conv paths instead");
    return;
  }
  mt::cpu::ThreadPool two_threads(2);
  mt::cpu::ThreadPool* two = &two_threads;
  const std::vector<Case> cases = {
      {1, 3, 32, 17, 61, 3, 2, 1, 1, 1, 1, 1, false},  // MobileNetV2's stem, 31 pixels a row: 14 + 14 + 3
      {2, 3, 24, 12, 12, 3, 2, 1, 1, 1, 1, 1, false},  // ShuffleNet's: a partial vector, two images
      {1, 3, 64, 15, 15, 3, 2, 1, 0, 0, 0, 0, false},  // SqueezeNet's: no padding, 6-pixel groups
      {1, 3, 64, 20, 21, 7, 2, 1, 3, 3, 3, 3, false},  // ResNet's 7x7
      {1, 4, 48, 9, 14, 3, 1, 1, 1, 1, 1, 1, true},    // NHWC input, stride 1
      {1, 1, 40, 11, 10, 3, 1, 2, 2, 1, 2, 3, false},  // one channel, dilation 2, asymmetric pads
      {1, 3, 32, 10, 23, 5, 2, 1, 2, 0, 1, 2, true},   // NHWC at stride 2: the run-time column step
  };
  const float inf = std::numeric_limits<float>::infinity();
  for (const Case& k : cases) {
    check_stem(k, cpu::Epilogue{}, false, nullptr);
    check_stem(k, cpu::Epilogue{.low = 0.0f, .high = 6.0f}, false, two);
    check_stem(k, cpu::Epilogue{.activation = cpu::Activation::hardswish}, false, nullptr);
    check_stem(k, cpu::Epilogue{.activation = cpu::Activation::silu}, true, two);
    check_stem(k, cpu::Epilogue{.low = -1.0f, .high = inf, .residual_low = 0.0f, .residual_high = 3.0f}, true, nullptr);
  }
}

TEST_CASE("cpu stem conv: which convs it takes, and packing is a pure function of the weights") {
  CHECK(cpu::stem_conv_fits(3, 48, 3, 3));
  CHECK(cpu::stem_conv_fits(3, 64, 7, 7));
  CHECK(cpu::stem_conv_fits(3, 32, 3, 3));        // MobileNetV2's
  CHECK_FALSE(cpu::stem_conv_fits(3, 24, 3, 3));  // fewer than 32: XNNPACK's
  CHECK_FALSE(cpu::stem_conv_fits(5, 32, 3, 3));
  CHECK_FALSE(cpu::stem_conv_fits(3, 65, 3, 3));
  CHECK_FALSE(cpu::stem_conv_fits(3, 32, 9, 9));
  const size_t bytes = cpu::stem_bytes(3, 24, 3, 3);
  CHECK(bytes == (27 + 1) * 32 * sizeof(float));  // 27 taps and the bias, 24 channels padded to 32
  std::vector<float> w(24 * 27), bias(24);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i) + 1;
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = -static_cast<float>(i);
  std::vector<std::byte> a(bytes, std::byte{0x5a}), b(bytes, std::byte{0xa5});
  const cpu::PackedStem pa = cpu::pack_stem_weights(a.data(), w.data(), bias.data(), 3, 24, 3, 3);
  cpu::pack_stem_weights(b.data(), w.data(), bias.data(), 3, 24, 3, 3);
  CHECK(a == b);
  CHECK(pa.data[5 * 32 + 17] == w[17 * 27 + 5]);  // tap 5 (kernel row 0, column 1, channel 2), output 17
  CHECK(pa.data[27 * 32 + 20] == bias[20]);
  CHECK(pa.data[27 * 32 + 30] == 0.0f);
}

}  // namespace mt::test
