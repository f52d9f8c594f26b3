// The AVX512-VNNI int8 kernels (kernels/cpu/engines/int8_vnni.h) against plain loops with the reference's
// requantization (lib/ops/int8_arithmetic.h): the GEMM at row counts around its 8-row blocks,
// column counts around its 32-column panels and 16-lane halves (masked stores), k not a multiple
// of 4 (zero-padded weights, over-read input), row strides wider than the matrices (nothing outside
// them is written), input zero points at both ends (the folded bias), clamps, one and two threads,
// input flipped beforehand (int8_flip) and by the kernel;
// the indirect conv (gathered under 16 channels) and the depthwise conv with padding, strides and
// dilation. The kernels compute
// the reference's float32 operations in the same order, so results must be equal (tolerance 0).
// On a CPU without AVX512-VNNI there is nothing to test.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/engines/int8_vnni.h"
#include "kernels/cpu/plan/plan_builder.h"
#include "kernels/cpu/plan/thread_pool.h"
#include "lib/core/error.h"
#include "lib/ops/int8_arithmetic.h"
#include "tests/unit/cpu/cpu_test_util.h"

namespace mt::test {
namespace {

std::vector<int8_t> random_int8(size_t count, uint32_t seed, int low = -128, int high = 127) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(low, high);
  std::vector<int8_t> v(count);
  for (int8_t& x : v) x = static_cast<int8_t>(dist(rng));
  return v;
}

// Per-column multipliers that keep most outputs inside the int8 range for k terms.
std::vector<float> multipliers_for(size_t n, size_t k) {
  std::vector<float> m(n);
  for (size_t j = 0; j < n; ++j) m[j] = (0.5f + 0.25f * static_cast<float>(j % 5)) / (64.0f * static_cast<float>(k + 4));
  return m;
}

std::vector<int32_t> random_bias(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> dist(-3000, 3000);
  std::vector<int32_t> b(n);
  for (int32_t& v : b) v = dist(rng);
  return b;
}

// Returns how many outputs fell strictly inside the clamp (not saturated).
size_t check_gemm(size_t m, size_t n, size_t k, int32_t x_zero, bool with_bias, cpu::Int8Output out,
                  mt::cpu::ThreadPool* pool) {
  const size_t lda = k + 3, ldc = n + 5;
  const uint32_t seed = static_cast<uint32_t>(m * 131 + n * 7 + k);
  // One more row than needed: the kernel may read up to 3 bytes past the last row's k values.
  const std::vector<int8_t> a = random_int8((m + 1) * lda, seed), w = random_int8(n * k, seed + 1, -127, 127);
  const std::vector<int32_t> bias = random_bias(n, seed + 2);
  const std::vector<float> multipliers = multipliers_for(n, k);
  const int8_t sentinel = 77;
  std::vector<int8_t> c(m * ldc, sentinel);
  const cpu::OwnedBlock memory(cpu::int8_gemm_bytes(1, k, n));
  const cpu::PackedInt8Gemm packed = cpu::pack_int8_gemm(memory.data(), w.data(), with_bias ? bias.data() : nullptr,
                                                         multipliers.data(), 1, k, n, x_zero, out);
  // Every other shape reads flipped input (int8_flip), the rest int8 input flipped by the kernel.
  const bool per_layer = (m + n + k) % 2 == 0;
  std::vector<uint8_t> flipped(a.size());
  cpu::int8_flip(a.data(), flipped.data(), a.size(), pool);
  const cpu::Int8GemmInput input =
      per_layer ? cpu::Int8GemmInput{flipped.data(), true} : cpu::Int8GemmInput{a.data(), false};
  cpu::int8_gemm(packed, m, input, lda, c.data(), ldc, pool);
  const std::string shape = "m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k) +
                            " x_zero=" + std::to_string(x_zero) + (per_layer ? " flipped" : "");
  size_t inside_range = 0;
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < ldc; ++j) {
      const int8_t got = c[i * ldc + j];
      if (j >= n) {
        if (got != sentinel) FAIL_CHECK(shape << ": wrote past column n at " << i << "," << j);
        continue;
      }
      int32_t acc = with_bias ? bias[j] : 0;
      for (size_t p = 0; p < k; ++p) acc += (a[i * lda + p] - x_zero) * w[j * k + p];
      const int8_t want = requantize(acc, multipliers[j], out.zero_point, out.low, out.high);
      inside_range += want > out.low && want < out.high;
      if (got != want) FAIL_CHECK(shape << " at " << i << "," << j << ": got " << int{got} << ", want " << int{want});
    }
  return inside_range;
}

}  // namespace

TEST_CASE("cpu int8 vnni gemm: equals a plain loop with the reference requantization") {
  if (!cpu::int8_vnni_supported()) {
    MESSAGE("skipped: this CPU has no AVX512-VNNI, so the cpu backend uses XNNPACK's int8 operators");
    return;
  }
  mt::cpu::ThreadPool two_threads(2);
  mt::cpu::ThreadPool* two = &two_threads;
  size_t outputs = 0, inside = 0;
  for (size_t m : {1, 7, 8, 9, 23})
    for (size_t n : {1, 15, 16, 17, 32, 33, 70})
      for (size_t k : {1, 3, 4, 5, 64, 147}) {
        inside += check_gemm(m, n, k, 3, true, {.zero_point = -5}, nullptr);
        inside += check_gemm(m, n, k, -128, false, {.zero_point = -20, .low = -128, .high = 100}, two);
        inside += check_gemm(m, n, k, 127, true, {.zero_point = 10, .low = -20, .high = 127}, two);
        outputs += 3 * m * n;
      }
  // Mostly saturated outputs would test little of the arithmetic.
  CHECK_MESSAGE(inside * 2 >= outputs, inside << " of " << outputs << " outputs inside the clamp");
}

namespace {

cpu::PackedConvShape conv_shape(size_t n, size_t h, size_t w, size_t channels, size_t kernel, size_t stride,
                                size_t dilation, int64_t pad) {
  const size_t extent = dilation * (kernel - 1) + 1;
  const size_t out_h = (h + 2 * static_cast<size_t>(pad) - extent) / stride + 1;
  const size_t out_w = (w + 2 * static_cast<size_t>(pad) - extent) / stride + 1;
  return {.n = n, .h = h, .w = w, .channels = channels, .out_h = out_h, .out_w = out_w, .kernel_h = kernel,
          .kernel_w = kernel, .stride_h = stride, .stride_w = stride, .dilation_h = dilation, .dilation_w = dilation,
          .pad_top = pad, .pad_left = pad};
}

// Plain NHWC conv with `groups` equal to 1 or to the channel count (depthwise), OHWI weights.
std::vector<int8_t> plain_conv(const cpu::PackedConvShape& s, size_t out_channels, bool depthwise,
                               const std::vector<int8_t>& x, const std::vector<int8_t>& w,
                               const std::vector<int32_t>& bias, const std::vector<float>& multipliers,
                               int32_t x_zero, cpu::Int8Output out) {
  const size_t group_in = depthwise ? 1 : s.channels;
  std::vector<int8_t> y(s.n * s.out_h * s.out_w * out_channels);
  for (size_t n = 0; n < s.n; ++n)
    for (size_t oy = 0; oy < s.out_h; ++oy)
      for (size_t ox = 0; ox < s.out_w; ++ox)
        for (size_t o = 0; o < out_channels; ++o) {
          int32_t acc = bias[o];
          for (size_t ky = 0; ky < s.kernel_h; ++ky)
            for (size_t kx = 0; kx < s.kernel_w; ++kx) {
              const int64_t iy = static_cast<int64_t>(oy * s.stride_h + ky * s.dilation_h) - s.pad_top;
              const int64_t ix = static_cast<int64_t>(ox * s.stride_w + kx * s.dilation_w) - s.pad_left;
              if (iy < 0 || ix < 0 || iy >= static_cast<int64_t>(s.h) || ix >= static_cast<int64_t>(s.w)) continue;
              for (size_t i = 0; i < group_in; ++i) {
                const size_t channel = depthwise ? o : i;
                const int32_t xv =
                    x[((n * s.h + static_cast<size_t>(iy)) * s.w + static_cast<size_t>(ix)) * s.channels + channel];
                acc += (xv - x_zero) * w[((o * s.kernel_h + ky) * s.kernel_w + kx) * group_in + i];
              }
            }
          y[((n * s.out_h + oy) * s.out_w + ox) * out_channels + o] =
              requantize(acc, multipliers[o], out.zero_point, out.low, out.high);
        }
  return y;
}

// The reference int8 add (lib/ops/eval/quantized.cpp) of conv output c (zero point c_zero) and r.
std::vector<int8_t> plain_add(const std::vector<int8_t>& c, int32_t c_zero, const std::vector<int8_t>& r,
                              const cpu::Int8ResidualAdd& add) {
  std::vector<int8_t> y(c.size());
  const float lo = static_cast<float>(add.out.low - add.out.zero_point);
  const float hi = static_cast<float>(add.out.high - add.out.zero_point);
  for (size_t i = 0; i < c.size(); ++i) {
    float v = add.c_multiplier * static_cast<float>(c[i] - c_zero) + add.r_multiplier * static_cast<float>(r[i] - add.r_zero);
    v = std::clamp(v, lo, hi);
    y[i] = static_cast<int8_t>(static_cast<int32_t>(std::nearbyint(v)) + add.out.zero_point);
  }
  return y;
}

// With fused_add (GEMM convs only), the conv's output goes through an int8 add with a residual
// tensor inside the kernel (Int8ResidualAdd) and must equal the plain conv followed by the
// reference add.
void check_conv(const cpu::PackedConvShape& s, size_t out_channels, bool depthwise, mt::cpu::ThreadPool* pool,
                bool fused_add = false) {
  const uint32_t seed = static_cast<uint32_t>(s.channels * 31 + s.kernel_h * 7 + s.stride_h);
  const size_t taps = s.kernel_h * s.kernel_w, group_in = depthwise ? 1 : s.channels;
  const int32_t x_zero = -7;
  const cpu::Int8Output out{.zero_point = 4, .low = -100, .high = 127};
  const std::vector<int8_t> x = random_int8(s.n * s.h * s.w * s.channels + 4, seed);
  const std::vector<int8_t> w = random_int8(out_channels * taps * group_in, seed + 1, -127, 127);
  const std::vector<int32_t> bias = random_bias(out_channels, seed + 2);
  const std::vector<float> multipliers = multipliers_for(out_channels, taps * group_in);
  std::vector<int8_t> want = plain_conv(s, out_channels, depthwise, x, w, bias, multipliers, x_zero, out);
  // The add: conv scale 0.3, residual 0.2 (zero point -9), output 0.4 (zero point 3), clamped from 0
  // up (a fused relu).
  const cpu::Int8ResidualAdd add{.c_multiplier = 0.3f / 0.4f, .r_multiplier = 0.2f / 0.4f, .r_zero = -9,
                                 .out = {.zero_point = 3, .low = 3, .high = 127}};
  const std::vector<int8_t> residual = random_int8(want.size(), seed + 3);
  if (fused_add) want = plain_add(want, out.zero_point, residual, add);
  const cpu::Int8Residual fused = fused_add ? cpu::Int8Residual{&add, residual.data()} : cpu::Int8Residual{};
  std::vector<int8_t> got(want.size(), 0);
  const std::vector<int8_t> padding((s.channels + 3) / 4 * 4, static_cast<int8_t>(x_zero));
  if (depthwise) {
    const cpu::OwnedBlock memory(cpu::int8_depthwise_bytes(s.kernel_h, s.channels));
    const cpu::PackedInt8Depthwise packed = cpu::pack_int8_depthwise(
        memory.data(), w.data(), bias.data(), multipliers.data(), s.kernel_h, s.channels, x_zero, out);
    const size_t threads = pool == nullptr ? 1 : 2;
    const cpu::OwnedBlock scratch(cpu::int8_depthwise_scratch_bytes(s, threads));
    cpu::int8_depthwise(packed, s, x.data(), padding.data(), got.data(), scratch.data(), threads, pool);
  } else {
    // Packed as ops_int8_vnni.cpp packs it: gathered convs as one run of taps x channels.
    const bool gathered = cpu::int8_conv_gathers(s.kernel_h, s.kernel_w, s.channels);
    const size_t runs = gathered ? 1 : taps, run = gathered ? taps * s.channels : s.channels;
    const cpu::OwnedBlock memory(cpu::int8_gemm_bytes(runs, run, out_channels));
    const cpu::PackedInt8Gemm packed = cpu::pack_int8_gemm(memory.data(), w.data(), bias.data(), multipliers.data(),
                                                           runs, run, out_channels, x_zero, out);
    std::vector<uint8_t> flipped(x.size()), flipped_padding(padding.size());
    cpu::int8_flip(x.data(), flipped.data(), x.size(), pool);
    cpu::int8_flip(padding.data(), flipped_padding.data(), padding.size(), nullptr);
    cpu::int8_conv(packed, s, {flipped.data(), true}, flipped_padding.data(), got.data(), pool, fused);
    // The same conv reading the int8 input, flipped by the kernel.
    std::vector<int8_t> in_place(want.size(), 0);
    cpu::int8_conv(packed, s, {x.data(), false}, padding.data(), in_place.data(), pool, fused);
    size_t differ = 0;
    for (size_t i = 0; i < want.size(); ++i) differ += in_place[i] != want[i];
    CHECK_MESSAGE(differ == 0, "conv reading int8 input: " << differ << " of " << want.size() << " outputs differ");
  }
  const std::string what = std::string(depthwise ? "depthwise" : fused_add ? "conv + add" : "conv") + " " + std::to_string(s.kernel_h) + "x" +
                           std::to_string(s.kernel_w) + " channels " + std::to_string(s.channels) + " stride " +
                           std::to_string(s.stride_h) + " dilation " + std::to_string(s.dilation_h);
  size_t mismatches = 0;
  for (size_t i = 0; i < want.size(); ++i) mismatches += got[i] != want[i];
  CHECK_MESSAGE(mismatches == 0, what << ": " << mismatches << " of " << want.size() << " outputs differ");
}

}  // namespace

TEST_CASE("cpu int8 vnni conv and depthwise: equal a plain loop") {
  if (!cpu::int8_vnni_supported()) {
    MESSAGE("skipped: this CPU has no AVX512-VNNI");
    return;
  }
  mt::cpu::ThreadPool two_threads(2);
  mt::cpu::ThreadPool* two = &two_threads;
  for (size_t channels : {1, 3, 5, 16, 17, 33}) {
    check_conv(conv_shape(2, 7, 6, channels, 3, 1, 1, 1), 19, false, nullptr);
    check_conv(conv_shape(1, 9, 8, channels, 3, 2, 1, 1), 33, false, two);
    check_conv(conv_shape(1, 9, 9, channels, 3, 1, 2, 2), 16, false, two);
    check_conv(conv_shape(1, 5, 5, channels, 1, 2, 1, 0), 17, false, nullptr);
    check_conv(conv_shape(1, 12, 11, channels, 7, 2, 1, 3), 20, false, two);  // a ResNet stem
    // More output pixels than a work unit of gathered rows (8 blocks of 8), across two images,
    // and 49 rows in blocks of 7; the indirect conv's window walk across output rows and images.
    check_conv(conv_shape(2, 23, 21, channels, 3, 2, 1, 1), 24, false, two);
    check_conv(conv_shape(1, 14, 14, channels, 7, 2, 1, 3), 33, false, nullptr);
    // A fused residual add (ResNet's blocks: 3x3, and the 1x1 stride-2 downsample).
    check_conv(conv_shape(2, 7, 6, channels, 3, 1, 1, 1), 19, false, nullptr, true);
    check_conv(conv_shape(1, 9, 8, channels, 3, 1, 1, 1), 40, false, two, true);
    check_conv(conv_shape(1, 9, 9, channels, 1, 2, 1, 0), 33, false, two, true);
    for (size_t kernel : {3, 5}) {
      check_conv(conv_shape(2, 9, 8, channels, kernel, 1, 1, kernel / 2), channels, true, nullptr);
      check_conv(conv_shape(1, 11, 10, channels, kernel, 2, 1, kernel / 2), channels, true, two);
      check_conv(conv_shape(1, 12, 12, channels, kernel, 1, 2, 1), channels, true, two);
    }
  }
  // Depthwise convs split across two threads by channel blocks (when that is more even than by
  // rows): 4 and 6 blocks of 16 channels over 7 rows; 5 blocks split by rows.
  for (size_t channels : {64, 80, 96})
    for (size_t kernel : {3, 5}) {
      check_conv(conv_shape(1, 7, 7, channels, kernel, 1, 1, kernel / 2), channels, true, two);
      check_conv(conv_shape(1, 13, 14, channels, kernel, 2, 1, kernel / 2), channels, true, two);
    }
}

TEST_CASE("cpu int8 vnni mul and global average pool: equal the reference arithmetic") {
  if (!cpu::int8_vnni_supported()) {
    MESSAGE("skipped: this CPU has no AVX512-VNNI");
    return;
  }
  mt::cpu::ThreadPool two_threads(2);
  mt::cpu::ThreadPool* two = &two_threads;
  // mul: elementwise (repeat 1) and a per-row broadcast, rows around the 16-lane steps.
  struct MulShape {
    size_t outer, repeat, inner;
  };
  const cpu::Int8MulParams params{.a_zero = -7,
                                  .b_zero = 100,
                                  .multiplier = 0.05f * 0.004f / 0.03f,
                                  .out = {.zero_point = -3, .low = -128, .high = 127}};
  for (const MulShape& m :
       {MulShape{1, 1, 1}, MulShape{1, 1, 67}, MulShape{2, 12, 16}, MulShape{1, 9, 33}, MulShape{3, 5, 200}})
    for (mt::cpu::ThreadPool* pool : {static_cast<mt::cpu::ThreadPool*>(nullptr), two}) {
      const uint32_t seed = static_cast<uint32_t>(m.outer * 100 + m.repeat * 10 + m.inner);
      const std::vector<int8_t> a = random_int8(m.outer * m.repeat * m.inner, seed);
      const std::vector<int8_t> b = random_int8(m.outer * m.inner, seed + 1);
      std::vector<int8_t> y(a.size() + 1, 55);
      cpu::int8_mul(a.data(), b.data(), y.data(), m.outer, m.repeat, m.inner, params, pool);
      size_t wrong = 0;
      for (size_t o = 0; o < m.outer; ++o)
        for (size_t r = 0; r < m.repeat; ++r)
          for (size_t i = 0; i < m.inner; ++i) {
            const size_t at = (o * m.repeat + r) * m.inner + i;
            const int32_t product = (a[at] - params.a_zero) * (b[o * m.inner + i] - params.b_zero);
            wrong += y[at] != requantize(product, params.multiplier, params.out.zero_point, -128, 127);
          }
      CHECK_MESSAGE(wrong == 0, "mul " << m.outer << "x" << m.repeat << "x" << m.inner << ": " << wrong << " differ");
      CHECK(y[a.size()] == 55);
    }
  // Global average pool: channel blocks of 64 and their tail, several images; from 16 KiB of input
  // on two threads, each summing half of the pixels. Inputs all -128 or all 127 over 1001 pixels
  // check the int16 runs of the sums (255 pixels each) for overflow.
  for (const int fill : {0, -128, 127})
    for (size_t channels : {1, 16, 64, 70, 144})
      for (size_t pixels : {1, 49, 196, 784, 1001}) {
        if (fill != 0 && pixels != 1001) continue;
        const size_t batch = 2;
        std::vector<int8_t> x = random_int8(batch * pixels * channels, static_cast<uint32_t>(channels + pixels));
        if (fill != 0) std::fill(x.begin(), x.end(), static_cast<int8_t>(fill));
        const int32_t x_zero = -20;
        const float multiplier = 0.05f / (static_cast<float>(pixels) * 0.02f);
        const cpu::Int8Output out{.zero_point = 7, .low = -128, .high = 127};
        std::vector<int8_t> y(batch * channels + 1, 55);
        std::vector<std::byte> scratch(cpu::int8_global_avg_pool_scratch_bytes(batch, channels, 2));
        cpu::int8_global_avg_pool(x.data(), y.data(), batch, pixels, channels, x_zero, multiplier, out, scratch.data(),
                                  2, two);
        size_t wrong = 0;
        for (size_t n = 0; n < batch; ++n)
          for (size_t c = 0; c < channels; ++c) {
            int32_t acc = 0;
            for (size_t p = 0; p < pixels; ++p) acc += x[(n * pixels + p) * channels + c] - x_zero;
            wrong += y[n * channels + c] != requantize(acc, multiplier, out.zero_point, out.low, out.high);
          }
        CHECK_MESSAGE(wrong == 0, "global average pool, " << channels << " channels, " << pixels << " pixels: " << wrong
                                                          << " differ");
        CHECK(y[batch * channels] == 55);
      }
}

TEST_CASE("cpu int8 vnni lookup: equals indexing the table, at lengths around its 64-byte steps") {
  if (!cpu::int8_vnni_supported()) {
    MESSAGE("skipped: this CPU has no AVX512-VBMI");
    return;
  }
  const std::vector<int8_t> table = random_int8(256, 1), src = random_int8(200, 2);
  for (size_t n : {0, 1, 63, 64, 65, 128, 200}) {
    std::vector<int8_t> dst(n + 8, 99);
    cpu::int8_lookup(table.data(), src.data(), dst.data(), n);
    for (size_t i = 0; i < n; ++i)
      if (dst[i] != table[static_cast<size_t>(src[i] + 128)]) FAIL_CHECK("n=" << n << " at " << i);
    for (size_t i = n; i < n + 8; ++i)
      if (dst[i] != 99) FAIL_CHECK("n=" << n << ": wrote past the end at " << i);
  }
}

}  // namespace mt::test

namespace mt::test {

TEST_CASE("cpu int8 vnni: PlanOptions::int8_vnni = false plans XNNPACK's int8 convolution instead") {
  // A 1x1 int8 conv from 16 to 24 channels, per-channel weights.
  GraphBuilder b;
  std::vector<int8_t> input(16 * 25), weights(24 * 16);
  for (size_t i = 0; i < input.size(); ++i) input[i] = static_cast<int8_t>(i * 7 % 41 - 20);
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<int8_t>(i * 5 % 37 - 18);
  const auto x = b.input("x", HostTensor::of(DType::i8, {1, 16, 5, 5}, input));
  b.graph.tensor(x).quant = QuantParams{.scales = {0.05f}, .zero_points = {3}};
  const auto w = b.constant("w", HostTensor::of(DType::i8, {24, 16, 1, 1}, weights));
  b.graph.tensor(w).quant = QuantParams{.scales = std::vector<float>(24, 0.02f), .zero_points = std::vector<int32_t>(24, 0), .axis = 0};
  const auto y = b.op("conv2d", {x, w});
  b.graph.tensor(y).quant = QuantParams{.scales = {0.1f}, .zero_points = {-2}};
  b.output(y);
  PlanOptions off;
  off.int8_vnni = false;
  const auto packed_bytes = [&](const PlanOptions& options) {
    return cpu_backend().plan(b.graph, options)->memory().packed_weight_bytes;
  };
  if (cpu::int8_vnni_supported()) CHECK(packed_bytes(PlanOptions{}) != packed_bytes(off));
  // XNNPACK's requantization may differ from the reference's by one step.
  const auto expected = run_graph(reference_backend(), b.graph, b.feeds);
  const auto actual = run_graph(cpu_backend(), b.graph, b.feeds, off);
  const auto e = expected[0].values<int8_t>(), a = actual[0].values<int8_t>();
  REQUIRE(a.size() == e.size());
  for (size_t i = 0; i < a.size(); ++i)
    if (std::abs(int{a[i]} - int{e[i]}) > 1) FAIL_CHECK("at " << i << ": " << int{a[i]} << " vs " << int{e[i]});
}

}  // namespace mt::test
