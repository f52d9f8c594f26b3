// Rules for element-wise ONNX ops: activations, trigonometric, hyperbolic and rounding functions,
// arithmetic (including the variadic forms), boolean ops, IsNaN/IsInf, Clip, Cast and CastLike,
// and the ops that vanish on import (Identity, Dropout, Constant).
#include <algorithm>
#include <cmath>
#include <limits>

#include "lib/import/constant_values.h"
#include "lib/import/translators.h"

namespace mt::onnx_import {
namespace {

constexpr double kFloatMax = std::numeric_limits<float>::max();

void unary(ImportContext& ctx, const OnnxNode& node, const std::string& mt_op) {
  ctx.emit1(node, mt_op, {ctx.input(node, 0)}, {}, node.output(0));
}

void leaky_relu(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  ctx.emit1(node, "leaky_relu", {ctx.input(node, 0)}, {{"alpha", node.attr_float("alpha", 0.01)}}, node.output(0));
}

void elu(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  ctx.emit1(node, "elu", {ctx.input(node, 0)}, {{"alpha", node.attr_float("alpha", 1.0)}}, node.output(0));
}

void hard_sigmoid(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  ctx.emit1(node, "hardsigmoid", {ctx.input(node, 0)},
            {{"alpha", node.attr_float("alpha", 0.2)}, {"beta", node.attr_float("beta", 0.5)}}, node.output(0));
}

void gelu(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  const std::string approximate = node.attr_string("approximate", "none");
  if (approximate != "none" && approximate != "tanh")
    node.invalid("approximate must be 'none' or 'tanh', got '{}'", approximate);
  ctx.emit1(node, "gelu", {ctx.input(node, 0)}, {{"approximate", approximate}}, node.output(0));
}

void selu(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  ctx.emit1(node, "selu", {ctx.input(node, 0)},
            {{"alpha", node.attr_float("alpha", 1.67326319217681884765625)},
             {"gamma", node.attr_float("gamma", 1.05070102214813232421875)}},
            node.output(0));
}

void celu(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  ctx.emit1(node, "celu", {ctx.input(node, 0)}, {{"alpha", node.attr_float("alpha", 1.0)}}, node.output(0));
}

void thresholded_relu(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  ctx.emit1(node, "thresholded_relu", {ctx.input(node, 0)}, {{"alpha", node.attr_float("alpha", 1.0)}}, node.output(0));
}

void shrink(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  ctx.emit1(node, "shrink", {ctx.input(node, 0)},
            {{"lambd", node.attr_float("lambd", 0.5)}, {"bias", node.attr_float("bias", 0.0)}}, node.output(0));
}

void is_inf(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  ctx.emit1(node, "is_inf", {ctx.input(node, 0)},
            {{"detect_positive", node.attr_int("detect_positive", 1)},
             {"detect_negative", node.attr_int("detect_negative", 1)}},
            node.output(0));
}

void prelu(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  ctx.emit1(node, "prelu", {ctx.input(node, 0), ctx.input(node, 1)}, {}, node.output(0));
}

// The second operand in the first's element type: ONNX lets Pow mix them, mt does not.
std::string operand_like(ImportContext& ctx, const OnnxNode& node, const std::string& operand, DType dtype) {
  if (ctx.graph().tensor(operand).dtype == dtype) return operand;
  return ctx.emit1(node, "cast", {operand}, {{"to", std::string(dtype_name(dtype))}},
                   ctx.fresh_name(operand + "/cast"));
}

void binary(ImportContext& ctx, const OnnxNode& node, const std::string& mt_op) {
  const std::string a = ctx.input(node, 0);
  const std::string b = operand_like(ctx, node, ctx.input(node, 1), ctx.graph().tensor(a).dtype);
  ctx.emit1(node, mt_op, {a, b}, {}, node.output(0));
}

// Pow: a float exponent of an integer base is applied in float32 and the result truncated back to
// the base's type, as ONNX's reference casts numpy's float power; other exponents take the base's type.
void power(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  const std::string base = ctx.input(node, 0);
  const std::string exponent = ctx.input(node, 1);
  const DType base_type = ctx.graph().tensor(base).dtype;
  if (is_float(base_type) || !is_float(ctx.graph().tensor(exponent).dtype)) {
    binary(ctx, node, "pow");
    return;
  }
  const std::string real_base = operand_like(ctx, node, base, DType::f32);
  const std::string raised = ctx.emit1(node, "pow", {real_base, operand_like(ctx, node, exponent, DType::f32)}, {},
                                       ctx.fresh_name(node.output(0) + "/pow"));
  ctx.emit1(node, "cast", {raised}, {{"to", std::string(dtype_name(base_type))}}, node.output(0));
}

void mod(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  ctx.emit1(node, "mod", {ctx.input(node, 0), ctx.input(node, 1)}, {{"fmod", node.attr_int("fmod", 0)}},
            node.output(0));
}

void bit_shift(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  const std::string direction = node.attr_string("direction", "");
  if (direction != "LEFT" && direction != "RIGHT")
    node.invalid("direction must be 'LEFT' or 'RIGHT', got '{}'", direction);
  ctx.emit1(node, "bit_shift", {ctx.input(node, 0), ctx.input(node, 1)},
            {{"direction", std::string(direction == "LEFT" ? "left" : "right")}}, node.output(0));
}

// Max, Min, Sum take one or more inputs: a chain of binary ops.
void variadic(ImportContext& ctx, const OnnxNode& node, const std::string& mt_op) {
  if (node.num_inputs() == 0) node.invalid("needs at least one input");
  std::string acc = ctx.input(node, 0);
  if (node.num_inputs() == 1) {
    ctx.alias(node.output(0), acc);
    return;
  }
  for (size_t i = 1; i < node.num_inputs(); ++i) {
    const bool last = i + 1 == node.num_inputs();
    acc = ctx.emit1(node, mt_op, {acc, ctx.input(node, i)}, {},
                    last ? node.output(0) : ctx.fresh_name(node.output(0) + "/" + mt_op));
  }
}

// Mean = (x1 + ... + xn) / n.
void mean(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  if (node.num_inputs() == 0) node.invalid("needs at least one input");
  std::string acc = ctx.input(node, 0);
  if (node.num_inputs() == 1) {
    ctx.alias(node.output(0), acc);
    return;
  }
  for (size_t i = 1; i < node.num_inputs(); ++i)
    acc = ctx.emit1(node, "add", {acc, ctx.input(node, i)}, {}, ctx.fresh_name(node.output(0) + "/sum"));
  const DType dtype = ctx.graph().tensor(acc).dtype;
  ctx.emit1(node, "div", {acc, ctx.scalar(node, static_cast<double>(node.num_inputs()), dtype)}, {}, node.output(0));
}

// Clip bounds: attributes before opset 11, optional constant scalar inputs from 11 on.
// Infinite bounds become FLT_MAX (the model file's JSON has no infinity).
// Clip with a bound computed at run time (opset 11 on): max(x, min), then min(.., max), which is
// ONNX's definition (so min > max gives max everywhere), as run-time element-wise ops.
void clip_runtime_bounds(ImportContext& ctx, const OnnxNode& node) {
  std::string value = ctx.input(node, 0);
  for (size_t i : {1, 2}) {
    if (!node.has_input(i)) continue;
    const TensorInfo& bound = ctx.input_info(node, i);
    if (numel(bound.shape) != 1) node.invalid("{} must be a scalar, got shape {}", i == 1 ? "min" : "max", shape_str(bound.shape));
    const bool last = i == 2 || !node.has_input(2);
    value = ctx.emit1(node, i == 1 ? "max" : "min", {value, ctx.input(node, i)}, {},
                      last ? node.output(0) : ctx.fresh_name(node.output(0) + "/min"));
  }
}

void clip(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  double low = -kFloatMax;
  double high = kFloatMax;
  if (node.opset() >= 11 && ((node.has_input(1) && !ctx.input_info(node, 1).is_constant()) ||
                             (node.has_input(2) && !ctx.input_info(node, 2).is_constant()))) {
    clip_runtime_bounds(ctx, node);
    return;
  }
  if (node.opset() < 11) {
    low = node.attr_float("min", low);
    high = node.attr_float("max", high);
  } else {
    auto bound = [&](size_t i, const char* what, double fallback) {
      if (!node.has_input(i)) return fallback;
      auto values = ctx.const_floats(node, i, what);
      if (values.size() != 1) node.invalid("{} must be a scalar, got {} values", what, values.size());
      return values[0];
    };
    low = bound(1, "min", low);
    high = bound(2, "max", high);
  }
  low = std::isnan(low) ? -kFloatMax : std::clamp(low, -kFloatMax, kFloatMax);
  high = std::isnan(high) ? kFloatMax : std::clamp(high, -kFloatMax, kFloatMax);
  ctx.emit1(node, "clamp", {ctx.input(node, 0)}, {{"min", low}, {"max", high}}, node.output(0));
}

// `input` converted to `to` for ONNX node `node` (Cast, CastLike).
void cast_to(ImportContext& ctx, const OnnxNode& node, const std::string& input, DType to) {
  if (ctx.is_shifted_uint8(input)) {  // QuantizeLinear's uint8 output, held as int8 (translate_quant.cpp)
    if (to != DType::u8) node.unsupported("casts a quantized uint8 tensor to {}", dtype_name(to));
    ctx.alias(node.output(0), input);
    return;
  }
  if (ctx.graph().tensor(input).dtype == to) {
    ctx.alias(node.output(0), input);
    return;
  }
  ctx.emit1(node, "cast", {input}, {{"to", std::string(dtype_name(to))}}, node.output(0));
}

void cast(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  if (!node.has_attr("to")) node.invalid("attribute 'to' is required");
  const auto onnx_type = static_cast<int32_t>(node.attr_int("to", 0));
  auto to = dtype_from_onnx(onnx_type);
  if (!to) node.unsupported("casts to {}, which mt does not support", onnx_type_name(onnx_type));
  cast_to(ctx, node, ctx.input(node, 0), *to);
}

// CastLike: Cast to the element type of its second input, whose values are not read.
void cast_like(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  cast_to(ctx, node, ctx.input(node, 0), ctx.input_info(node, 1).dtype);
}

void identity(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  ctx.alias(node.output(0), ctx.input(node, 0));
}

// Inference-time Dropout is the identity, and its mask (output 1) is all true: a bool constant of
// X's shape, within the size mt makes constants of at import.
void dropout(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  if (node.has_input(2)) {
    const TensorInfo& training = ctx.input_info(node, 2);
    if (!training.is_constant() || read_ints(training) != std::vector<int64_t>{0})
      node.unsupported("training_mode must be a constant false");
  }
  ctx.alias(node.output(0), ctx.input(node, 0));
  if (node.num_outputs() < 2 || node.output(1).empty() || !ctx.is_used(node.output(1))) return;
  const Shape& shape = ctx.input_info(node, 0).shape;
  const std::optional<int64_t> count = checked_numel(shape);
  if (!count || *count > kMaxShapeOpElements)
    node.unsupported("output 1 (the dropout mask) would be a constant of shape {}, larger than mt makes at import",
                     shape_str(shape));
  const std::vector<int64_t> ones(static_cast<size_t>(*count), 1);
  ctx.alias(node.output(1), ctx.add_constant(make_constant(ctx.fresh_name(node.output(1)), DType::boolean, shape, ones)));
}

void constant(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  const std::string& name = node.output(0);
  if (node.proto().attribute_size() != 1) node.invalid("needs exactly one value attribute");
  const auto& attr = node.proto().attribute(0);
  if (attr.name() == "value") {
    ctx.add_constant(tensor_from_onnx(*node.attr_tensor("value"), name, ctx.external_files()));
  } else if (attr.name() == "value_float") {
    const double v[] = {node.attr_float("value_float", 0)};
    ctx.add_constant(make_constant(name, DType::f32, {}, v));
  } else if (attr.name() == "value_floats") {
    auto v = node.attr_floats("value_floats");
    ctx.add_constant(make_constant(name, DType::f32, {static_cast<int64_t>(v.size())}, v));
  } else if (attr.name() == "value_int") {
    const int64_t v[] = {node.attr_int("value_int", 0)};
    ctx.add_constant(make_constant(name, DType::i64, {}, v));
  } else if (attr.name() == "value_ints") {
    auto v = node.attr_ints("value_ints");
    ctx.add_constant(make_constant(name, DType::i64, {static_cast<int64_t>(v.size())}, v));
  } else if (attr.name() == "value_string" || attr.name() == "value_strings") {
    node.unsupported("string constants are not supported");
  } else if (attr.name() == "sparse_value") {
    node.unsupported("sparse constants are not supported");
  } else {
    node.invalid("unknown attribute '{}'", attr.name());
  }
}

}  // namespace

void add_elementwise_translators(TranslatorTable& table) {
  table.add("Relu", unary, "relu");
  table.add("Sigmoid", unary, "sigmoid");
  table.add("Tanh", unary, "tanh");
  table.add("HardSwish", unary, "hardswish");
  table.add("Erf", unary, "erf");
  table.add("Exp", unary, "exp");
  table.add("Log", unary, "log");
  table.add("Sqrt", unary, "sqrt");
  table.add("Neg", unary, "neg");
  table.add("Abs", unary, "abs");
  table.add("Reciprocal", unary, "reciprocal");
  table.add("Floor", unary, "floor");
  table.add("Ceil", unary, "ceil");
  table.add("Softplus", unary, "softplus");
  table.add("LeakyRelu", leaky_relu);
  table.add("Elu", elu);
  table.add("HardSigmoid", hard_sigmoid);
  table.add("Gelu", gelu);
  table.add("PRelu", prelu);
  table.add("Add", binary, "add");
  table.add("Sub", binary, "sub");
  table.add("Mul", binary, "mul");
  table.add("Div", binary, "div");
  table.add("Pow", power);
  table.add("Max", variadic, "max");
  table.add("Min", variadic, "min");
  table.add("Sum", variadic, "add");
  table.add("Mean", mean);
  table.add("Clip", clip);
  table.add("Cast", cast);
  table.add("CastLike", cast_like);
  table.add("Cos", unary, "cos");
  table.add("Sin", unary, "sin");
  table.add("Tan", unary, "tan");
  table.add("Acos", unary, "acos");
  table.add("Asin", unary, "asin");
  table.add("Atan", unary, "atan");
  table.add("Cosh", unary, "cosh");
  table.add("Sinh", unary, "sinh");
  table.add("Asinh", unary, "asinh");
  table.add("Acosh", unary, "acosh");
  table.add("Atanh", unary, "atanh");
  table.add("Softsign", unary, "softsign");
  table.add("Sign", unary, "sign");
  table.add("Round", unary, "round");
  table.add("Selu", selu);
  table.add("Celu", celu);
  table.add("ThresholdedRelu", thresholded_relu);
  table.add("Shrink", shrink);
  table.add("Mod", mod);
  table.add("BitShift", bit_shift);
  table.add("And", binary, "logical_and");
  table.add("Or", binary, "logical_or");
  table.add("Xor", binary, "logical_xor");
  table.add("Not", unary, "logical_not");
  table.add("IsNaN", unary, "is_nan");
  table.add("IsInf", is_inf);
  table.add("Identity", identity);
  table.add("Dropout", dropout);
  table.add("Constant", constant);
}

}  // namespace mt::onnx_import
