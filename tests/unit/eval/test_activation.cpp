// Reference kernels of the activation family against hand-computed values (closed forms
// evaluated with <cmath> in double), cast against the ONNX conversion rules, and the float16
// conversions against known bit patterns.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <numbers>

#include "lib/core/float16.h"
#include "tests/unit/eval/kernel_test_util.h"

using namespace mt;
using namespace mt::test;

namespace {

constexpr double kTol = 1e-6;

std::vector<float> run_unary(const std::string& op, const std::vector<float>& x, const Attributes& attrs = {}) {
  HostTensor out = run_op(op, {f32({static_cast<int64_t>(x.size())}, x)}, attrs);
  CHECK(out.shape == Shape{static_cast<int64_t>(x.size())});
  return out.floats();
}

}  // namespace

TEST_CASE("reference activation: simple functions at known points") {
  check_close(run_unary("relu", {-1.5f, 0.0f, 2.0f}), {0.0f, 0.0f, 2.0f}, 0);
  check_close(run_unary("sigmoid", {0.0f, 1.0f, -1.0f}), {0.5f, 0.7310585786f, 0.2689414214f}, kTol);
  check_close(run_unary("tanh", {0.5f, -0.5f}), {0.4621171573f, -0.4621171573f}, kTol);
  check_close(run_unary("hardswish", {-4.0f, -1.0f, 1.0f, 4.0f}), {0.0f, -1.0f / 3.0f, 2.0f / 3.0f, 4.0f}, kTol);
  check_close(run_unary("silu", {1.0f, -1.0f, 0.0f}), {0.7310585786f, -0.2689414214f, 0.0f}, kTol);
  check_close(run_unary("erf", {0.5f, -0.5f, 0.0f}), {0.5204998778f, -0.5204998778f, 0.0f}, kTol);
  check_close(run_unary("exp", {0.0f, 1.0f, -1.0f}), {1.0f, 2.718281828f, 0.3678794412f}, kTol);
  check_close(run_unary("log", {1.0f, 2.0f, 0.0f}), {0.0f, 0.6931471806f, -std::numeric_limits<float>::infinity()},
              kTol);
  check_close(run_unary("sqrt", {4.0f, 2.0f}), {2.0f, 1.414213562f}, kTol);
  CHECK(std::isnan(run_unary("sqrt", {-1.0f})[0]));
  check_close(run_unary("neg", {1.5f, -2.0f}), {-1.5f, 2.0f}, 0);
  check_close(run_unary("abs", {-1.5f, 2.0f}), {1.5f, 2.0f}, 0);
  check_close(run_unary("reciprocal", {4.0f, -0.5f}), {0.25f, -2.0f}, 0);
  check_close(run_unary("floor", {-1.5f, 1.5f, 2.0f}), {-2.0f, 1.0f, 2.0f}, 0);
  check_close(run_unary("ceil", {-1.5f, 1.5f, 2.0f}), {-1.0f, 2.0f, 2.0f}, 0);
  // softplus must not overflow for large x, nor lose tiny values for very negative x.
  check_close(run_unary("softplus", {0.0f, -2.0f, 100.0f, 1000.0f}), {0.6931471806f, 0.1269280110f, 100.0f, 1000.0f},
              kTol);
  CHECK(run_unary("softplus", {-50.0f})[0] == doctest::Approx(std::exp(-50.0)).epsilon(1e-6));
}

TEST_CASE("reference activation: relu and clamp keep NaN") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(std::isnan(run_unary("relu", {nan})[0]));
  CHECK(std::isnan(run_unary("clamp", {nan}, {{"min", 0.0}, {"max", 6.0}})[0]));
}

TEST_CASE("reference activation: gelu exact and tanh approximation") {
  const std::vector<float> x = {-3.0f, -1.0f, 0.5f, 1.0f, 2.0f};
  std::vector<float> exact, approx;
  for (float v : x) {
    const double d = v;
    exact.push_back(static_cast<float>(0.5 * d * (1 + std::erf(d / std::sqrt(2.0)))));
    approx.push_back(static_cast<float>(0.5 * d * (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (d + 0.044715 * d * d * d)))));
  }
  check_close(run_unary("gelu", x), exact, kTol);
  check_close(run_unary("gelu", x, {{"approximate", std::string("none")}}), exact, kTol);
  check_close(run_unary("gelu", x, {{"approximate", std::string("tanh")}}), approx, kTol);
  // Known values: gelu(1) = 0.5 (1 + erf(1/sqrt 2)); the two forms differ in the 4th digit.
  CHECK(run_unary("gelu", {1.0f})[0] == doctest::Approx(0.8413447461).epsilon(1e-7));
  CHECK(run_unary("gelu", {1.0f}, {{"approximate", std::string("tanh")}})[0] ==
        doctest::Approx(0.8411919906).epsilon(1e-7));
}

TEST_CASE("reference activation: attributes of clamp, hardsigmoid, leaky_relu, elu") {
  const std::vector<float> x = {-8.0f, -1.0f, 0.0f, 2.0f, 7.0f};
  check_close(run_unary("clamp", x, {{"min", 0.0}, {"max", 6.0}}), {0.0f, 0.0f, 0.0f, 2.0f, 6.0f}, 0);
  check_close(run_unary("clamp", x), x, 0);  // defaults: no clamping
  check_close(run_unary("clamp", x, {{"min", -1.5}}), {-1.5f, -1.0f, 0.0f, 2.0f, 7.0f}, 0);
  // min > max: every element becomes max (ONNX Clip applies max after min).
  check_close(run_unary("clamp", x, {{"min", 3.0}, {"max", 1.0}}), {1.0f, 1.0f, 1.0f, 1.0f, 1.0f}, 0);
  check_close(run_unary("hardsigmoid", x), {0.0f, 0.3f, 0.5f, 0.9f, 1.0f}, kTol);
  check_close(run_unary("hardsigmoid", x, {{"alpha", 1.0 / 6}, {"beta", 0.5}}),
              {0.0f, 1.0f / 3.0f, 0.5f, 5.0f / 6.0f, 1.0f}, kTol);
  check_close(run_unary("leaky_relu", x), {-0.08f, -0.01f, 0.0f, 2.0f, 7.0f}, kTol);
  check_close(run_unary("leaky_relu", x, {{"alpha", 0.2}}), {-1.6f, -0.2f, 0.0f, 2.0f, 7.0f}, kTol);
  check_close(run_unary("elu", x), {static_cast<float>(std::expm1(-8.0)), -0.6321205588f, 0.0f, 2.0f, 7.0f}, kTol);
  check_close(run_unary("elu", x, {{"alpha", 2.0}}),
              {static_cast<float>(2 * std::expm1(-8.0)), -1.2642411177f, 0.0f, 2.0f, 7.0f}, kTol);
}

TEST_CASE("reference activation: unary kernels keep the shape of any rank") {
  HostTensor out = run_op("neg", {f32({2, 1, 3}, {1, 2, 3, 4, 5, 6})});
  CHECK(out.shape == Shape{2, 1, 3});
  check_close(out.floats(), {-1, -2, -3, -4, -5, -6}, 0);
  HostTensor scalar = run_op("exp", {f32({}, {0.0f})});
  CHECK(scalar.shape == Shape{});
  check_close(scalar.floats(), {1.0f}, 0);
}

TEST_CASE("reference activation: prelu with per-channel slope") {
  // X [1, 2, 2, 2], slope [2, 1, 1]: channel 0 uses 0.1, channel 1 uses 2.
  HostTensor x = f32({1, 2, 2, 2}, {-1, 2, -3, 4, -1, 2, -3, 4});
  HostTensor slope = f32({2, 1, 1}, {0.1f, 2.0f});
  check_close(run_op("prelu", {x, slope}).floats(), {-0.1f, 2, -0.3f, 4, -2, 2, -6, 4}, kTol);
  // A single slope for everything.
  check_close(run_op("prelu", {x, f32({1}, {0.5f})}).floats(), {-0.5f, 2, -1.5f, 4, -0.5f, 2, -1.5f, 4}, kTol);
  // Slope along the last axis.
  check_close(run_op("prelu", {f32({2, 2}, {-1, -1, -1, 1}), f32({2}, {0.25f, 3.0f})}).floats(),
              {-0.25f, -3.0f, -0.25f, 1.0f}, kTol);
}

TEST_CASE("reference activation: kernels reject dtypes they do not implement") {
  try {
    run_op("relu", {i64({2}, {1, -1})});
    FAIL("expected an error");
  } catch (const Error& error) {
    CHECK(error.code() == ExitCode::unsupported);
    CHECK(std::string(error.what()).find("float32 only") != std::string::npos);
  }
}

TEST_CASE("reference cast: float to integer truncates toward zero and saturates") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  HostTensor x = f32({7}, {-2.7f, -0.5f, 0.5f, 2.9f, 1e20f, -1e20f, nan});
  HostTensor as_i64 = run_op("cast", {x}, {{"to", std::string("int64")}});
  CHECK(as_i64.dtype == DType::i64);
  CHECK(as_i64.values<int64_t>() == std::vector<int64_t>{-2, 0, 0, 2, std::numeric_limits<int64_t>::max(),
                                                         std::numeric_limits<int64_t>::min(), 0});
  CHECK(run_op("cast", {x}, {{"to", std::string("int32")}}).values<int32_t>() ==
        std::vector<int32_t>{-2, 0, 0, 2, std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min(), 0});
  CHECK(run_op("cast", {f32({4}, {127.9f, 128.0f, -129.0f, -1.5f})}, {{"to", std::string("int8")}}).values<int8_t>() ==
        std::vector<int8_t>{127, 127, -128, -1});
  CHECK(run_op("cast", {f32({3}, {-1.0f, 255.5f, 3.99f})}, {{"to", std::string("uint8")}}).values<uint8_t>() ==
        std::vector<uint8_t>{0, 255, 3});
}

TEST_CASE("reference cast: integers wrap when narrowed, convert exactly when widened") {
  HostTensor big = i64({3}, {(int64_t{1} << 32) + 5, -1, 300});
  CHECK(run_op("cast", {big}, {{"to", std::string("int32")}}).values<int32_t>() == std::vector<int32_t>{5, -1, 300});
  CHECK(run_op("cast", {big}, {{"to", std::string("uint8")}}).values<uint8_t>() == std::vector<uint8_t>{5, 255, 44});
  CHECK(run_op("cast", {i32({2}, {-7, 40000})}, {{"to", std::string("int64")}}).values<int64_t>() ==
        std::vector<int64_t>{-7, 40000});
  // int64 to float rounds to nearest: 2^53 + 1 is not representable in float.
  HostTensor as_float = run_op("cast", {i64({3}, {3, -7, (int64_t{1} << 53) + 1})}, {{"to", std::string("float32")}});
  check_close(as_float.floats(), {3.0f, -7.0f, 9007199254740992.0f}, 0);
  HostTensor from_u8 =
      run_op("cast", {HostTensor::of<uint8_t>(DType::u8, {2}, {200, 7})}, {{"to", std::string("int8")}});
  CHECK(from_u8.values<int8_t>() == std::vector<int8_t>{-56, 7});
}

TEST_CASE("reference cast: bool") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  HostTensor as_bool = run_op("cast", {f32({4}, {0.0f, -0.0f, 0.1f, nan})}, {{"to", std::string("bool")}});
  CHECK(as_bool.dtype == DType::boolean);
  CHECK(as_bool.values<uint8_t>() == std::vector<uint8_t>{0, 0, 1, 1});
  CHECK(run_op("cast", {i64({3}, {0, -3, 2})}, {{"to", std::string("bool")}}).values<uint8_t>() ==
        std::vector<uint8_t>{0, 1, 1});
  HostTensor from_bool = HostTensor::of<uint8_t>(DType::boolean, {2}, {1, 0});
  check_close(run_op("cast", {from_bool}, {{"to", std::string("float32")}}).floats(), {1.0f, 0.0f}, 0);
  CHECK(run_op("cast", {from_bool}, {{"to", std::string("int32")}}).values<int32_t>() == std::vector<int32_t>{1, 0});
}

TEST_CASE("reference cast: float16 round to nearest even, overflow and subnormals") {
  // Bit patterns checked with numpy's float32 -> float16 conversion.
  HostTensor x = f32({12}, {1.0f, 65504.0f, 65520.0f, 1e-8f, 5.9604644775390625e-08f, 0.1f, -2.0f, 1.00048828125f,
                            1.00146484375f, 3e-8f, 6.1e-5f, 1e-5f});
  HostTensor half = run_op("cast", {x}, {{"to", std::string("float16")}});
  CHECK(half.dtype == DType::f16);
  CHECK(half.values<uint16_t>() == std::vector<uint16_t>{0x3c00, 0x7bff, 0x7c00, 0x0000, 0x0001, 0x2e66, 0xc000,
                                                         0x3c00, 0x3c02, 0x0001, 0x03ff, 0x00a8});
  HostTensor back = run_op("cast", {HostTensor::of<uint16_t>(DType::f16, {3}, {0x3555, 0x0001, 0xfc00})},
                           {{"to", std::string("float32")}});
  check_close(back.floats(), {0.333251953125f, 5.9604644775390625e-08f, -std::numeric_limits<float>::infinity()}, 0);
  CHECK(run_op("cast", {HostTensor::of<uint16_t>(DType::f16, {1}, {0xc0e0})}, {{"to", std::string("int64")}})
            .values<int64_t>() == std::vector<int64_t>{-2});  // -2.4375 truncates to -2
}

TEST_CASE("float16: every half survives a round trip through float") {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const auto half = static_cast<uint16_t>(bits);
    const float value = half_to_float(half);
    if (std::isnan(value)) {
      CHECK((half & 0x7c00) == 0x7c00);
      CHECK(std::isnan(half_to_float(float_to_half(value))));
      continue;
    }
    if (float_to_half(value) != half) FAIL_CHECK("half 0x" << std::hex << bits << " does not round-trip");
  }
}
