// Reference kernels of the activation family. Functions are evaluated in double and rounded
// once to float, so the oracle is as close to the exact value as float allows.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <type_traits>

#include "lib/core/float16.h"
#include "lib/ops/broadcast.h"
#include "lib/ops/eval/kernel_util.h"
#include "lib/ops/eval/reference.h"
#include "lib/ops/registry.h"
#include "lib/ops/saturating_cast.h"

namespace mt::reference {
namespace {

// Runs y = fn(x) over a float32 tensor.
template <typename Fn>
void map_f32(const Node& node, std::span<const ConstView> inputs, std::span<const MutView> outputs, Fn fn) {
  require_dtype(node, *inputs[0].info, DType::f32);
  const float* x = inputs[0].as<float>();
  float* y = outputs[0].as<float>();
  const int64_t count = inputs[0].info->numel();
  for (int64_t i = 0; i < count; ++i) y[i] = static_cast<float>(fn(static_cast<double>(x[i])));
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// Kernel of an attribute-free function of one value.
template <double (*Fn)(double)>
void unary_kernel(const Node& node, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  map_f32(node, inputs, outputs, Fn);
}

// -x of int32/int64 too (wrapping, as two's complement does): shape computations negate axes
// (ONNX's expanded LayerNormalization), and constant folding evaluates them here.
template <typename T>
void negate_integers(std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  using U = std::make_unsigned_t<T>;
  const T* x = inputs[0].as<T>();
  T* y = outputs[0].as<T>();
  for (int64_t i = 0; i < inputs[0].info->numel(); ++i) y[i] = static_cast<T>(U{0} - static_cast<U>(x[i]));
}

void neg_kernel(const Node& node, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  switch (inputs[0].info->dtype) {
    case DType::i32: return negate_integers<int32_t>(inputs, outputs);
    case DType::i64: return negate_integers<int64_t>(inputs, outputs);
    default: return map_f32(node, inputs, outputs, [](double x) { return -x; });
  }
}

// `x < 0 ? 0 : x` rather than max(x, 0) so that NaN stays NaN, as in PyTorch.
double relu(double x) { return x < 0 ? 0.0 : x; }
double tanh_fn(double x) { return std::tanh(x); }
double hardswish(double x) { return x * std::min(std::max(x + 3.0, 0.0), 6.0) / 6.0; }
double silu(double x) { return x * sigmoid(x); }
double erf_fn(double x) { return std::erf(x); }
double exp_fn(double x) { return std::exp(x); }
double log_fn(double x) { return std::log(x); }
double sqrt_fn(double x) { return std::sqrt(x); }
double abs_fn(double x) { return std::abs(x); }
double reciprocal(double x) { return 1.0 / x; }
double floor_fn(double x) { return std::floor(x); }
double ceil_fn(double x) { return std::ceil(x); }
// log(1 + e^x) without overflow for large x.
double softplus(double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }
double cos_fn(double x) { return std::cos(x); }
double sin_fn(double x) { return std::sin(x); }
double tan_fn(double x) { return std::tan(x); }
double acos_fn(double x) { return std::acos(x); }
double asin_fn(double x) { return std::asin(x); }
double atan_fn(double x) { return std::atan(x); }
double cosh_fn(double x) { return std::cosh(x); }
double sinh_fn(double x) { return std::sinh(x); }
double asinh_fn(double x) { return std::asinh(x); }
double acosh_fn(double x) { return std::acosh(x); }
double atanh_fn(double x) { return std::atanh(x); }
double softsign(double x) { return x / (1.0 + std::abs(x)); }
// Zero stays zero (keeping its sign bit) and NaN stays NaN.
double sign(double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : x); }
// nearbyint in the default rounding mode rounds halves to even (ONNX Round, numpy.round); a float
// is exact in double, so rounding it there first changes nothing.
double round_fn(double x) { return std::nearbyint(x); }

void gelu(const Node& node, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  const std::string& approximate = attr_string(node, "approximate");
  if (approximate == "none") {
    map_f32(node, inputs, outputs, [](double x) { return 0.5 * x * (1.0 + std::erf(x / std::numbers::sqrt2)); });
  } else if (approximate == "tanh") {
    const double k = std::sqrt(2.0 / std::numbers::pi);
    map_f32(node, inputs, outputs,
            [k](double x) { return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x))); });
  } else {
    unsupported("node '{}' (gelu): approximate \"{}\" is not supported", node.name, approximate);
  }
}

// Integer clamp: bounds rounded inward to whole numbers, then limited to T's range (Clip on
// integer tensors, whose bounds are integers of T).
template <typename T>
void clamp_integers(double lo, double hi, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  const T low = saturating_cast<T>(std::ceil(lo));
  const T high = saturating_cast<T>(std::floor(hi));
  const T* x = inputs[0].as<T>();
  T* y = outputs[0].as<T>();
  const int64_t count = inputs[0].info->numel();
  for (int64_t i = 0; i < count; ++i) y[i] = std::min(std::max(x[i], low), high);
}

void clamp(const Node& node, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  const double lo = attr_float(node, "min");
  const double hi = attr_float(node, "max");
  // max then min, as ONNX Clip: with lo > hi every element becomes hi. NaN stays NaN.
  switch (inputs[0].info->dtype) {
    case DType::i8:
      if (inputs[0].info->quant) break;  // quantized int8 is not integers
      clamp_integers<int8_t>(lo, hi, inputs, outputs);
      return;
    case DType::u8: clamp_integers<uint8_t>(lo, hi, inputs, outputs); return;
    case DType::i32: clamp_integers<int32_t>(lo, hi, inputs, outputs); return;
    case DType::i64: clamp_integers<int64_t>(lo, hi, inputs, outputs); return;
    default: break;
  }
  map_f32(node, inputs, outputs, [lo, hi](double x) { return std::isnan(x) ? x : std::min(std::max(x, lo), hi); });
}

void hardsigmoid(const Node& node, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  const double alpha = attr_float(node, "alpha");
  const double beta = attr_float(node, "beta");
  map_f32(node, inputs, outputs, [alpha, beta](double x) { return std::max(0.0, std::min(1.0, alpha * x + beta)); });
}

void leaky_relu(const Node& node, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  const double alpha = attr_float(node, "alpha");
  map_f32(node, inputs, outputs, [alpha](double x) { return x < 0 ? alpha * x : x; });
}

void elu(const Node& node, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  const double alpha = attr_float(node, "alpha");
  map_f32(node, inputs, outputs, [alpha](double x) { return x > 0 ? x : alpha * std::expm1(x); });
}

void selu(const Node& node, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  const double alpha = attr_float(node, "alpha");
  const double gamma = attr_float(node, "gamma");
  map_f32(node, inputs, outputs, [alpha, gamma](double x) { return gamma * (x > 0 ? x : alpha * std::expm1(x)); });
}

void celu(const Node& node, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  const double alpha = attr_float(node, "alpha");
  map_f32(node, inputs, outputs,
          [alpha](double x) { return std::max(0.0, x) + std::min(0.0, alpha * std::expm1(x / alpha)); });
}

void thresholded_relu(const Node& node, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  const double alpha = attr_float(node, "alpha");
  map_f32(node, inputs, outputs, [alpha](double x) { return x > alpha ? x : 0.0; });
}

// The -lambd test first, as ONNX's reference, so that a negative lambd (both tests true) agrees.
void shrink(const Node& node, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  const double lambd = attr_float(node, "lambd");
  const double bias = attr_float(node, "bias");
  map_f32(node, inputs, outputs,
          [lambd, bias](double x) { return x < -lambd ? x + bias : (x > lambd ? x - bias : 0.0); });
}

void prelu(const Node& node, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  require_dtype(node, *inputs[0].info, DType::f32);
  require_dtype(node, *inputs[1].info, DType::f32);
  const Shape& shape = inputs[0].info->shape;
  const float* x = inputs[0].as<float>();
  const float* slope = inputs[1].as<float>();
  float* y = outputs[0].as<float>();
  const std::array<std::vector<int64_t>, 1> strides{broadcast_strides(inputs[1].info->shape, shape)};
  for_each_broadcast(shape, strides, [&](int64_t i, const std::array<int64_t, 1>& offsets) {
    y[i] = x[i] < 0 ? slope[offsets[0]] * x[i] : x[i];
  });
}

// One element in transit through cast: integers (and bool) travel as int64, floats as double,
// so that no value is rounded before the rules of the target dtype apply.
struct Element {
  bool floating = false;
  int64_t integer = 0;
  double real = 0;
};

Element load(DType dtype, const void* data, int64_t i) {
  switch (dtype) {
    case DType::f32: return {true, 0, static_cast<const float*>(data)[i]};
    case DType::f16: return {true, 0, half_to_float(static_cast<const uint16_t*>(data)[i])};
    case DType::i8: return {false, static_cast<const int8_t*>(data)[i], 0};
    case DType::u8: return {false, static_cast<const uint8_t*>(data)[i], 0};
    case DType::i32: return {false, static_cast<const int32_t*>(data)[i], 0};
    case DType::i64: return {false, static_cast<const int64_t*>(data)[i], 0};
    case DType::boolean: return {false, static_cast<const uint8_t*>(data)[i] != 0 ? 1 : 0, 0};
  }
  return {};
}

// Integer to narrower integer wraps modulo 2^bits (two's complement), as numpy and ONNX do.
template <typename T>
T convert_to(const Element& e) {
  return e.floating ? saturating_cast<T>(e.real) : static_cast<T>(e.integer);
}

void store(DType dtype, void* data, int64_t i, const Element& e) {
  const float as_float = e.floating ? static_cast<float>(e.real) : static_cast<float>(e.integer);
  switch (dtype) {
    case DType::f32: static_cast<float*>(data)[i] = as_float; return;
    case DType::f16: static_cast<uint16_t*>(data)[i] = float_to_half(as_float); return;
    case DType::i8: static_cast<int8_t*>(data)[i] = convert_to<int8_t>(e); return;
    case DType::u8: static_cast<uint8_t*>(data)[i] = convert_to<uint8_t>(e); return;
    case DType::i32: static_cast<int32_t*>(data)[i] = convert_to<int32_t>(e); return;
    case DType::i64: static_cast<int64_t*>(data)[i] = convert_to<int64_t>(e); return;
    case DType::boolean: static_cast<uint8_t*>(data)[i] = (e.floating ? e.real != 0 : e.integer != 0) ? 1 : 0; return;
  }
}

void cast(const Node& /*node*/, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  const DType from = inputs[0].info->dtype;
  const DType to = outputs[0].info->dtype;
  const int64_t count = inputs[0].info->numel();
  for (int64_t i = 0; i < count; ++i) store(to, outputs[0].data, i, load(from, inputs[0].data, i));
}

}  // namespace

void register_activation_kernels(KernelTable& table) {
  table.add("relu", unary_kernel<relu>);
  table.add("sigmoid", unary_kernel<sigmoid>);
  table.add("tanh", unary_kernel<tanh_fn>);
  table.add("hardswish", unary_kernel<hardswish>);
  table.add("silu", unary_kernel<silu>);
  table.add("erf", unary_kernel<erf_fn>);
  table.add("exp", unary_kernel<exp_fn>);
  table.add("log", unary_kernel<log_fn>);
  table.add("sqrt", unary_kernel<sqrt_fn>);
  table.add("neg", neg_kernel);
  table.add("abs", unary_kernel<abs_fn>);
  table.add("reciprocal", unary_kernel<reciprocal>);
  table.add("floor", unary_kernel<floor_fn>);
  table.add("ceil", unary_kernel<ceil_fn>);
  table.add("softplus", unary_kernel<softplus>);
  table.add("gelu", gelu);
  table.add("clamp", clamp);
  table.add("hardsigmoid", hardsigmoid);
  table.add("leaky_relu", leaky_relu);
  table.add("elu", elu);
  table.add("prelu", prelu);
  table.add("cast", cast);
  table.add("cos", unary_kernel<cos_fn>);
  table.add("sin", unary_kernel<sin_fn>);
  table.add("tan", unary_kernel<tan_fn>);
  table.add("acos", unary_kernel<acos_fn>);
  table.add("asin", unary_kernel<asin_fn>);
  table.add("atan", unary_kernel<atan_fn>);
  table.add("cosh", unary_kernel<cosh_fn>);
  table.add("sinh", unary_kernel<sinh_fn>);
  table.add("asinh", unary_kernel<asinh_fn>);
  table.add("acosh", unary_kernel<acosh_fn>);
  table.add("atanh", unary_kernel<atanh_fn>);
  table.add("softsign", unary_kernel<softsign>);
  table.add("sign", unary_kernel<sign>);
  table.add("round", unary_kernel<round_fn>);
  table.add("selu", selu);
  table.add("celu", celu);
  table.add("thresholded_relu", thresholded_relu);
  table.add("shrink", shrink);
}

}  // namespace mt::reference
