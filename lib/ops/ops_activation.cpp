// Op schemas of the activation family: element-wise unary functions (activations, trigonometric
// and hyperbolic functions, rounding), prelu and cast.
#include <limits>

#include "lib/ops/infer_helpers.h"
#include "lib/ops/registry.h"

namespace mt {
namespace {

constexpr double kFloatMax = std::numeric_limits<float>::max();

OpSchema unary(std::string name, std::string summary, std::vector<AttrSpec> attrs = {}, ShapeFn infer = same_as_input0) {
  return OpSchema{std::move(name), std::move(summary), {"X"}, false, 1, std::move(attrs), infer};
}

std::vector<TensorType> infer_gelu(const InferContext& context) {
  const std::string& approximate = context.attr_string("approximate");
  if (approximate != "none" && approximate != "tanh")
    context.fail("attribute 'approximate' must be \"none\" or \"tanh\", got \"{}\"", approximate);
  return same_as_input0(context);
}

std::vector<TensorType> infer_prelu(const InferContext& context) {
  require_same_dtype(context, 1, 0);
  require_broadcasts_to(context, 1, context.input(0).shape, "slope");
  return same_as_input0(context);
}

std::vector<TensorType> infer_cast(const InferContext& context) {
  const std::string& to = context.attr_string("to");
  auto dtype = dtype_from_name(to);
  if (!dtype) context.fail("attribute 'to' = \"{}\" is not a dtype (float32, float16, int64, int32, int8, uint8, bool)", to);
  return {TensorType{*dtype, context.input(0).shape}};
}

std::vector<TensorType> infer_celu(const InferContext& context) {
  if (context.attr_float("alpha") == 0) context.fail("attribute 'alpha' must not be 0 (it divides x)");
  return same_as_input0(context);
}

}  // namespace

void register_activation_ops(OpRegistry& registry) {
  registry.add(unary("relu", "max(x, 0)"));
  registry.add(unary("sigmoid", "1 / (1 + exp(-x))"));
  registry.add(unary("tanh", "hyperbolic tangent"));
  registry.add(unary("hardswish", "x * relu6(x + 3) / 6"));
  registry.add(unary("silu", "x * sigmoid(x) (swish)"));
  registry.add(unary("erf", "Gauss error function"));
  registry.add(unary("exp", "e^x"));
  registry.add(unary("log", "natural logarithm"));
  registry.add(unary("sqrt", "square root"));
  registry.add(unary("neg", "-x"));
  registry.add(unary("abs", "|x|"));
  registry.add(unary("reciprocal", "1 / x"));
  registry.add(unary("floor", "round toward -infinity"));
  registry.add(unary("ceil", "round toward +infinity"));
  registry.add(unary("softplus", "log(1 + exp(x))"));
  registry.add(unary("gelu", "Gaussian error linear unit, exact (erf) or tanh approximation",
                     {{"approximate", AttrType::string, Attribute{std::string("none")}}}, infer_gelu));
  registry.add(unary("clamp", "min(max(x, min), max) (relu6, Clip, hardtanh)",
                     {{"min", AttrType::real, Attribute{-kFloatMax}}, {"max", AttrType::real, Attribute{kFloatMax}}}));
  registry.add(unary("hardsigmoid", "max(0, min(1, alpha * x + beta))",
                     {{"alpha", AttrType::real, Attribute{0.2}}, {"beta", AttrType::real, Attribute{0.5}}}));
  registry.add(unary("leaky_relu", "x if x >= 0 else alpha * x", {{"alpha", AttrType::real, Attribute{0.01}}}));
  registry.add(unary("elu", "x if x > 0 else alpha * (exp(x) - 1)", {{"alpha", AttrType::real, Attribute{1.0}}}));
  registry.add(OpSchema{"prelu", "x if x >= 0 else slope * x, slope broadcast to x", {"X", "slope"}, false, 1, {},
                        infer_prelu});
  registry.add(unary("cast", "converts elements to dtype 'to' (float to integer truncates toward zero)",
                     {{"to", AttrType::string, std::nullopt}}, infer_cast));
  registry.add(unary("cos", "cosine"));
  registry.add(unary("sin", "sine"));
  registry.add(unary("tan", "tangent"));
  registry.add(unary("acos", "arccosine (NaN outside [-1, 1])"));
  registry.add(unary("asin", "arcsine (NaN outside [-1, 1])"));
  registry.add(unary("atan", "arctangent"));
  registry.add(unary("cosh", "hyperbolic cosine"));
  registry.add(unary("sinh", "hyperbolic sine"));
  registry.add(unary("asinh", "inverse hyperbolic sine"));
  registry.add(unary("acosh", "inverse hyperbolic cosine (NaN below 1)"));
  registry.add(unary("atanh", "inverse hyperbolic tangent (NaN outside [-1, 1])"));
  registry.add(unary("softsign", "x / (1 + |x|)"));
  registry.add(unary("sign", "-1, 0 or 1 by the sign of x (NaN stays NaN)"));
  registry.add(unary("round", "nearest integer, halves to even"));
  // ONNX's defaults: the constants of self-normalising networks (Klambauer et al. 2017).
  registry.add(unary("selu", "gamma * (x if x > 0 else alpha * (exp(x) - 1))",
                     {{"alpha", AttrType::real, Attribute{1.67326319217681884765625}},
                      {"gamma", AttrType::real, Attribute{1.05070102214813232421875}}}));
  registry.add(unary("celu", "max(0, x) + min(0, alpha * (exp(x / alpha) - 1))",
                     {{"alpha", AttrType::real, Attribute{1.0}}}, infer_celu));
  registry.add(unary("thresholded_relu", "x if x > alpha else 0", {{"alpha", AttrType::real, Attribute{1.0}}}));
  registry.add(unary("shrink", "x + bias if x < -lambd, else x - bias if x > lambd, else 0",
                     {{"lambd", AttrType::real, Attribute{0.5}}, {"bias", AttrType::real, Attribute{0.0}}}));
}

}  // namespace mt
