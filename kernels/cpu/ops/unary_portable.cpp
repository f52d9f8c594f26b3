// The activation ops XNNPACK (2022) lacks, and hardswish (on the plan's own threads), as vectorisable
// loops over vec_math.h; silu on AVX-512F CPUs as the float32 convs' output stage computes it
// (epilogue_avx512.h), 3x the AVX2 loop's speed.
#include "kernels/cpu/ops/unary_portable.h"

#include <cmath>

#if defined(__x86_64__)
#include <immintrin.h>

#include "kernels/cpu/engines/epilogue_avx512.h"
#endif

#include "kernels/cpu/engines/cpu_features.h"
#include "kernels/cpu/ops/ops.h"

namespace mt::cpu {

#define MT_FLOAT_CHECK(name) \
  std::optional<std::string> check_##name(const Graph& graph, const Node& node) { return check_float(graph, node); }

MT_FLOAT_CHECK(tanh)
MT_FLOAT_CHECK(silu)
MT_FLOAT_CHECK(erf)
MT_FLOAT_CHECK(exp)
MT_FLOAT_CHECK(log)
MT_FLOAT_CHECK(reciprocal)
MT_FLOAT_CHECK(softplus)
MT_FLOAT_CHECK(hardsigmoid)
#undef MT_FLOAT_CHECK

std::optional<std::string> check_gelu(const Graph& graph, const Node& node) {
  if (auto reason = check_float(graph, node)) return reason;
  const std::string& approximate = attr_string(node, "approximate");
  if (approximate != "none" && approximate != "tanh") return "approximate \"" + approximate + "\" not supported";
  return std::nullopt;
}

void plan_tanh(NodeContext& c) { plan_unary_map(c, [](float x) { return vm::tanh(x); }); }
#if defined(__x86_64__)
namespace {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"  // AVX-512 intrinsics' pass-through operands (epilogue_avx512.h)
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
__attribute__((target("avx512f"))) void silu_avx512(const float* in, float* out, size_t begin, size_t end) {
  size_t i = begin;
  for (; i + 16 <= end; i += 16) _mm512_storeu_ps(out + i, avx512::silu(_mm512_loadu_ps(in + i)));
  if (i < end) {
    const __mmask16 rest = static_cast<__mmask16>((1u << (end - i)) - 1);
    _mm512_mask_storeu_ps(out + i, rest, avx512::silu(_mm512_maskz_loadu_ps(rest, in + i)));
  }
}
#pragma GCC diagnostic pop
}  // namespace
#endif

void plan_silu(NodeContext& c) {
#if defined(__x86_64__)
  if (cpu_has_avx512f()) {
    const Value x = c.input(0);
    const Value y = c.output(0, x.layout);
    const size_t n = count_of(x);
    c.add_kernel({x, y}, [n](Pointers p, ThreadPool* pool) {
      parallel_chunks(pool, n, 16384, [&](size_t begin, size_t end) {
        silu_avx512(static_cast<const float*>(p[0]), static_cast<float*>(p[1]), begin, end);
      });
    });
    return;
  }
#endif
  plan_unary_map(c, [](float x) { return x / (1.0f + vm::exp(-x)); });
}
void plan_erf(NodeContext& c) { plan_unary_map(c, [](float x) { return vm::erf(x); }); }
void plan_exp(NodeContext& c) { plan_unary_map(c, [](float x) { return vm::exp(x); }); }
void plan_log(NodeContext& c) { plan_unary_map(c, [](float x) { return std::log(x); }); }
void plan_reciprocal(NodeContext& c) { plan_unary_map(c, [](float x) { return 1.0f / x; }); }

void plan_softplus(NodeContext& c) {
  // log(1 + e^x) = max(x, 0) + log1p(e^-|x|): no overflow for large x, no cancellation for small.
  plan_unary_map(c, [](float x) { return std::max(x, 0.0f) + std::log1p(vm::exp(-std::fabs(x))); });
}

// x * clamp(x + 3, 0, 6) / 6 as the convs' output stage computes it (epilogue_avx512.h), on the plan's
// own threads (XNNPACK's, on a large tensor, would park ours: MobileNetV3's after its SE blocks).
void plan_hardswish(NodeContext& c) {
  plan_unary_map(c, [](float x) { return x * std::min(std::max(x + 3.0f, 0.0f), 6.0f) * (1.0f / 6.0f); });
}

void plan_hardsigmoid(NodeContext& c) {
  const float alpha = attr_f32(c.node(), "alpha");
  const float beta = attr_f32(c.node(), "beta");
  plan_unary_map(c, [alpha, beta](float x) {
    const float y = alpha * x + beta;
    return y < 0.0f ? 0.0f : (y > 1.0f ? 1.0f : y);
  });
}

void plan_gelu(NodeContext& c) {
  if (attr_string(c.node(), "approximate") == "tanh") {
    plan_unary_map(c, [](float x) {
      const float inner = 0.7978845608f * (x + 0.044715f * x * x * x);  // sqrt(2/pi) (x + 0.044715 x^3)
      return 0.5f * x * (1.0f + vm::tanh(inner));
    });
  } else {
    plan_unary_map(c, [](float x) { return 0.5f * x * (1.0f + vm::erf(x * 0.70710678f)); });
  }
}

}  // namespace mt::cpu

namespace mt::cpu {

// The activation family's trigonometric, hyperbolic and rounding functions and the activations
// with scalar attributes, in float (libm, accurate to about an ulp).
std::optional<std::string> check_unary_math(const Graph& graph, const Node& node) { return check_float(graph, node); }

void plan_unary_math(NodeContext& c) {
  const Node& node = c.node();
  const std::string& op = node.op;
  if (op == "cos") return plan_unary_map(c, [](float x) { return std::cos(x); });
  if (op == "sin") return plan_unary_map(c, [](float x) { return std::sin(x); });
  if (op == "tan") return plan_unary_map(c, [](float x) { return std::tan(x); });
  if (op == "acos") return plan_unary_map(c, [](float x) { return std::acos(x); });
  if (op == "asin") return plan_unary_map(c, [](float x) { return std::asin(x); });
  if (op == "atan") return plan_unary_map(c, [](float x) { return std::atan(x); });
  if (op == "cosh") return plan_unary_map(c, [](float x) { return std::cosh(x); });
  if (op == "sinh") return plan_unary_map(c, [](float x) { return std::sinh(x); });
  if (op == "asinh") return plan_unary_map(c, [](float x) { return std::asinh(x); });
  if (op == "acosh") return plan_unary_map(c, [](float x) { return std::acosh(x); });
  if (op == "atanh") return plan_unary_map(c, [](float x) { return std::atanh(x); });
  if (op == "softsign") return plan_unary_map(c, [](float x) { return x / (1.0f + std::fabs(x)); });
  if (op == "sign") return plan_unary_map(c, [](float x) { return x > 0 ? 1.0f : (x < 0 ? -1.0f : x); });
  // The default rounding mode rounds halves to even (ONNX Round).
  if (op == "round") return plan_unary_map(c, [](float x) { return std::nearbyint(x); });
  if (op == "selu") {
    const float alpha = attr_f32(node, "alpha"), gamma = attr_f32(node, "gamma");
    return plan_unary_map(c, [alpha, gamma](float x) { return gamma * (x > 0 ? x : alpha * std::expm1(x)); });
  }
  if (op == "celu") {
    const float alpha = attr_f32(node, "alpha");
    return plan_unary_map(
        c, [alpha](float x) { return std::max(0.0f, x) + std::min(0.0f, alpha * std::expm1(x / alpha)); });
  }
  if (op == "thresholded_relu") {
    const float alpha = attr_f32(node, "alpha");
    return plan_unary_map(c, [alpha](float x) { return x > alpha ? x : 0.0f; });
  }
  if (op == "shrink") {
    const float lambd = attr_f32(node, "lambd"), bias = attr_f32(node, "bias");
    return plan_unary_map(c, [lambd, bias](float x) { return x < -lambd ? x + bias : (x > lambd ? x - bias : 0.0f); });
  }
  unsupported("node '{}': op {} is not one of unary_math's", node.name, op);
}

}  // namespace mt::cpu
