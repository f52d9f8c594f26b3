// The activation ops XNNPACK (2022) lacks, as vectorisable loops over vec_math.h.
#include "kernels/cpu/ops/unary_portable.h"

#include <cmath>

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
void plan_silu(NodeContext& c) { plan_unary_map(c, [](float x) { return x / (1.0f + vm::exp(-x)); }); }
void plan_erf(NodeContext& c) { plan_unary_map(c, [](float x) { return vm::erf(x); }); }
void plan_exp(NodeContext& c) { plan_unary_map(c, [](float x) { return vm::exp(x); }); }
void plan_log(NodeContext& c) { plan_unary_map(c, [](float x) { return std::log(x); }); }
void plan_reciprocal(NodeContext& c) { plan_unary_map(c, [](float x) { return 1.0f / x; }); }

void plan_softplus(NodeContext& c) {
  // log(1 + e^x) = max(x, 0) + log1p(e^-|x|): no overflow for large x, no cancellation for small.
  plan_unary_map(c, [](float x) { return std::max(x, 0.0f) + std::log1p(vm::exp(-std::fabs(x))); });
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
