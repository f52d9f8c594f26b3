// Rules for ONNX's integer ops with int32 results, ConvInteger and MatMulInteger (what ONNX
// Runtime's quantize_dynamic writes, followed by a Cast to float and a Mul by the scales). mt has
// no int8 op with an int32 result, so each becomes the float32 op on its integer operands minus
// their zero points, cast to int32: the operands are exact in float32 (8-bit integers), and so is
// the accumulation while its partial sums stay below 2^24 (beyond, float32 rounds them as it
// rounds the int32 result's Cast to float). An operand is
// - a constant: the float32 constant q - zero point (per tensor or per output channel / column);
// - a quantized int8 tensor (QuantizeLinear's output, uint8 held shifted): mt's dequantize, over its
//   scale and rounded, which recovers q - z exactly (then less the op's zero point, if another);
// - another int8 or uint8 tensor (a graph input): a cast to float32 minus the zero point.
// The Cast and Mul that follow run float32: the scales they apply reach mt only there, and in
// quantize_dynamic's output they come from DynamicQuantizeLinear, computed at run time (below).
#include <algorithm>
#include <cmath>

#include "lib/import/constant_values.h"
#include "lib/import/translators.h"

namespace mt::onnx_import {
namespace {

// The ONNX type of the node's input `i`, an 8-bit integer tensor (uint8 where mt holds it shifted).
DType integer_type(ImportContext& ctx, const OnnxNode& node, size_t i) {
  const std::string name = ctx.input(node, i);
  const TensorInfo& info = ctx.graph().tensor(name);
  if (info.dtype == DType::i8 && ctx.is_shifted_uint8(name)) return DType::u8;
  if (info.dtype != DType::i8 && info.dtype != DType::u8)
    node.unsupported("input '{}' is {}; the operands of {} are int8 or uint8", node.input(i), dtype_name(info.dtype),
                     node.op_type());
  return info.dtype;
}

// round(v) half to even, for |v| < 2^22: (v + 1.5 * 2^23) - 1.5 * 2^23, which float32 addition computes
// exactly (one unit per float32 step at that magnitude). mt has no round op.
std::string round_half_even(ImportContext& ctx, const OnnxNode& node, const std::string& v, const std::string& hint) {
  const std::string magic = ctx.scalar(node, 12582912.0);
  const std::string up = ctx.emit1(node, "add", {v, magic}, {}, ctx.fresh_name(hint));
  return ctx.emit1(node, "sub", {up, magic}, {}, ctx.fresh_name(hint));
}

}  // namespace

std::string integer_operand(ImportContext& ctx, const OnnxNode& node, size_t value_i, size_t zero_i, int64_t axis,
                            const std::string& hint) {
  const DType type = integer_type(ctx, node, value_i);
  const std::string value = ctx.input(node, value_i);
  const TensorInfo info = ctx.graph().tensor(value);
  const int64_t shift = ctx.is_shifted_uint8(value) ? 128 : 0;  // what mt subtracted from the ONNX integers
  int64_t zeros_from = 0;  // what the float32 integers below already have subtracted

  // The zero point: one value, or one per index of `axis`; constant, or computed at run time.
  std::vector<int64_t> zeros{0};
  std::string runtime_zero;
  bool runtime_per_axis = false;
  if (node.has_input(zero_i)) {
    const TensorInfo& z = ctx.input_info(node, zero_i);
    if (z.dtype != type && !(z.dtype == DType::i8 && type == DType::u8 && ctx.is_shifted_uint8(ctx.input(node, zero_i))))
      node.invalid("zero point '{}' is {}, its operand '{}' {}", node.input(zero_i), dtype_name(z.dtype),
                   node.input(value_i), dtype_name(type));
    if (z.is_constant()) {
      zeros = read_ints(z);
      if (ctx.is_shifted_uint8(ctx.input(node, zero_i)))
        for (auto& v : zeros) v += 128;
    } else if (z.numel() == 1) {
      runtime_zero = ctx.input(node, zero_i);
    } else if (axis >= 0 && z.shape.size() == 1 && static_cast<size_t>(axis) < info.shape.size() &&
               info.shape[static_cast<size_t>(axis)] == z.shape[0]) {
      runtime_zero = ctx.input(node, zero_i);
      runtime_per_axis = true;
    } else {
      node.invalid("zero point '{}' of shape {} does not match '{}' of shape {} along axis {}", node.input(zero_i),
                   shape_str(z.shape), node.input(value_i), shape_str(info.shape), axis);
    }
  }
  const bool per_axis = zeros.size() != 1;
  if (per_axis) {
    if (axis < 0)
      node.unsupported("zero point '{}' has {} values; mt takes one zero point for '{}'", node.input(zero_i),
                       zeros.size(), node.input(value_i));
    if (info.shape.size() <= static_cast<size_t>(axis) ||
        info.shape[static_cast<size_t>(axis)] != static_cast<int64_t>(zeros.size()))
      node.invalid("zero point '{}' has {} values for '{}' of shape {}", node.input(zero_i), zeros.size(),
                   node.input(value_i), shape_str(info.shape));
  }
  // The zero points as a float32 constant that broadcasts against the value: [n, 1, ...] along axis.
  auto zero_constant = [&] {
    Shape shape;
    if (per_axis) {
      shape.assign(info.shape.size() - static_cast<size_t>(axis), 1);
      shape[0] = static_cast<int64_t>(zeros.size());
    }
    std::vector<float> real(zeros.begin(), zeros.end());
    TensorInfo t{.name = ctx.fresh_name(hint + "/zero_point"), .dtype = DType::f32, .shape = shape};
    t.data = ConstData::copy_of(real.data(), real.size() * sizeof(float));
    return ctx.add_constant(std::move(t));
  };

  if (info.is_constant()) {
    if (!runtime_zero.empty())
      node.unsupported("zero point '{}' of the constant '{}' is computed at run time", node.input(zero_i),
                       node.input(value_i));
    const std::vector<int64_t> q = read_ints(info);
    size_t inner = 1;
    for (size_t d = static_cast<size_t>(std::max<int64_t>(axis, 0)) + 1; d < info.shape.size(); ++d)
      inner *= static_cast<size_t>(info.shape[d]);
    std::vector<float> real(q.size());
    for (size_t i = 0; i < q.size(); ++i)
      real[i] = static_cast<float>(q[i] + shift - zeros[per_axis ? (i / inner) % zeros.size() : 0]);
    TensorInfo t{.name = ctx.fresh_name(hint), .dtype = DType::f32, .shape = info.shape};
    t.data = ConstData::copy_of(real.data(), real.size() * sizeof(float));
    return ctx.add_constant(std::move(t));
  }

  std::string real;  // the ONNX integers (uint8 ones unshifted) as float32
  if (info.quant) {
    // mt's int8 ops read a quantized tensor as the real value it represents, (q - z) * s: divided
    // by s it is within 255 * 2^-23 of the integer q - z, which rounding recovers exactly.
    const QuantParams& p = *info.quant;
    const std::string deq = ctx.emit1(node, "dequantize", {value}, {}, ctx.fresh_name(hint + "/real"));
    real = round_half_even(ctx, node, ctx.emit1(node, "div", {deq, ctx.scalar(node, p.scales[0])}, {},
                                                ctx.fresh_name(hint + "/steps")), hint + "/integers");
    zeros_from = p.zero_points[0] + shift;  // real holds q - z: the zero point still to subtract is less z
  } else {
    real = ctx.emit1(node, "cast", {value}, {{"to", std::string("float32")}}, ctx.fresh_name(hint + "/real"));
  }
  if (!runtime_zero.empty()) {
    const std::string z = ctx.input(node, zero_i);
    if (ctx.graph().tensor(z).quant)
      node.unsupported("zero point '{}' is a quantized tensor computed at run time", node.input(zero_i));
    std::string z_real =
        ctx.emit1(node, "cast", {z}, {{"to", std::string("float32")}}, ctx.fresh_name(hint + "/zero_real"));
    if (runtime_per_axis) z_real = along_axis(ctx, node, z_real, axis, info.shape.size(), hint + "/zero_real");
    if (zeros_from != 0) real = ctx.emit1(node, "add", {real, ctx.scalar(node, static_cast<double>(zeros_from))}, {},
                                          ctx.fresh_name(hint + "/integers"));
    return ctx.emit1(node, "sub", {real, z_real}, {}, ctx.fresh_name(hint));
  }
  for (auto& v : zeros) v -= zeros_from;
  const bool all_zero = std::all_of(zeros.begin(), zeros.end(), [](int64_t v) { return v == 0; });
  if (all_zero) return real;
  return ctx.emit1(node, "sub", {real, zero_constant()}, {}, ctx.fresh_name(hint));
}

std::string along_axis(ImportContext& ctx, const OnnxNode& node, const std::string& values, int64_t axis, size_t rank,
                       const std::string& hint) {
  const TensorInfo& info = ctx.graph().tensor(values);
  if (info.numel() == 1 || axis < 0) return values;
  std::vector<int64_t> shape(rank - static_cast<size_t>(axis), 1);
  shape[0] = info.numel();
  return ctx.emit1(node, "reshape", {values}, {{"shape", shape}}, ctx.fresh_name(hint));
}

namespace {

// The float32 result `real` (integers) as the node's int32 output.
void int32_output(ImportContext& ctx, const OnnxNode& node, const std::string& real) {
  ctx.emit1(node, "cast", {real}, {{"to", std::string("int32")}}, node.output(0));
}

// ConvInteger(x, w, x_zero_point, w_zero_point): x's zero point per tensor, w's per tensor or per
// output channel (axis 0); Conv's attributes.
void conv_integer(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  const std::string& out = node.output(0);
  const std::string x = integer_operand(ctx, node, 0, 2, -1, ctx.fresh_name(out + "/x"));
  const std::string w = integer_operand(ctx, node, 1, 3, 0, ctx.fresh_name(out + "/w"));
  const std::string y = ctx.fresh_name(out + "/conv");
  translate_as(ctx, node, "Conv", {x, w}, y);
  int32_output(ctx, node, y);
}

// MatMulInteger(a, b, a_zero_point, b_zero_point): a's zero point per tensor (ONNX's per-row form
// is refused, as ONNX Runtime refuses it), b's per tensor or per column (its last axis).
void matmul_integer(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  const std::string& out = node.output(0);
  const std::string a = integer_operand(ctx, node, 0, 2, -1, ctx.fresh_name(out + "/a"));
  const int64_t b_columns = static_cast<int64_t>(ctx.input_info(node, 1).shape.size()) - 1;
  const std::string b = integer_operand(ctx, node, 1, 3, b_columns, ctx.fresh_name(out + "/b"));
  const std::string y = ctx.fresh_name(out + "/matmul");
  translate_as(ctx, node, "MatMul", {a, b}, y);
  int32_output(ctx, node, y);
}

// DynamicQuantizeLinear(x) -> y (uint8), y_scale, y_zero_point, computed per run from x's range as
// ONNX defines it (and ONNX Runtime computes it), in float32 ops that are exact:
//   lo = min(min(x), 0), hi = max(max(x), 0), scale = (hi - lo) / 255 (1 where hi = lo),
//   zero = round(clamp(-lo / scale, 0, 255)), y = clamp(round(x / scale) + zero, 0, 255),
// rounding half to even by round_half_even (here |v| <= 255 + 255). mt has no int8 form of it: its int8 tensors carry fixed
// scales, so the ConvInteger / MatMulInteger that read y run float32 on its integers.
void dynamic_quantize_linear(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  const std::string x = ctx.input(node, 0);
  if (ctx.graph().tensor(x).dtype != DType::f32)
    node.unsupported("input '{}' is {}; mt quantizes float32", node.input(0), dtype_name(ctx.graph().tensor(x).dtype));
  const std::string& out = node.output(0);
  auto name = [&](const char* hint) { return ctx.fresh_name(out + "/" + hint); };
  auto binary = [&](const char* op, const std::string& a, const std::string& b, const char* hint) {
    return ctx.emit1(node, op, {a, b}, {}, name(hint));
  };
  auto constant = [&](double v) { return ctx.scalar(node, v); };
  auto round = [&](const std::string& v, const char* hint) { return round_half_even(ctx, node, v, name(hint)); };
  auto clamp_byte = [&](const std::string& v, const char* hint) {
    return ctx.emit1(node, "clamp", {v}, {{"min", 0.0}, {"max", 255.0}}, name(hint));
  };
  const Attributes all_axes{{"axes", std::vector<int64_t>{}}, {"keepdims", int64_t{0}}};
  const std::string lo = binary("min", ctx.emit1(node, "reduce_min", {x}, all_axes, name("min")), constant(0.0), "lo");
  const std::string hi = binary("max", ctx.emit1(node, "reduce_max", {x}, all_axes, name("max")), constant(0.0), "hi");
  const std::string range = binary("sub", hi, lo, "range");
  // 1 where the range is 0, else 0: range * 2^149 (in two exact steps) is >= 1 for every positive float.
  const std::string positive = binary(
      "min", binary("mul", binary("mul", range, constant(std::ldexp(1.0, 127)), "positive"), constant(std::ldexp(1.0, 22)),
                    "positive"),
      constant(1.0), "positive");
  const std::string empty = binary("sub", constant(1.0), positive, "empty");
  const std::string scale = binary("add", binary("div", range, constant(255.0), "scale"), empty, "scale");
  const std::string zero =
      round(clamp_byte(ctx.emit1(node, "neg", {binary("div", lo, scale, "zero")}, {}, name("zero")), "zero"), "zero");
  const std::string y = clamp_byte(binary("add", round(binary("div", x, scale, "y"), "y"), zero, "y"), "y");
  const Attributes to_uint8{{"to", std::string("uint8")}};
  ctx.emit1(node, "cast", {y}, to_uint8, out);
  if (node.num_outputs() > 1 && !node.output(1).empty()) ctx.alias(node.output(1), scale);
  if (node.num_outputs() > 2 && !node.output(2).empty()) ctx.emit1(node, "cast", {zero}, to_uint8, node.output(2));
}

}  // namespace

void add_integer_translators(TranslatorTable& table) {
  table.add("ConvInteger", conv_integer);
  table.add("MatMulInteger", matmul_integer);
  table.add("DynamicQuantizeLinear", dynamic_quantize_linear);
}

}  // namespace mt::onnx_import
