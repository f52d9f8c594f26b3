// Rules for ONNX's quantization ops. QuantizeLinear and DequantizeLinear become mt's quantize and
// dequantize on int8 tensors that carry the file's scales (uint8 is shifted exactly into int8:
// q - 128, zero point - 128); a DequantizeLinear of a constant becomes the float32 constant it
// computes, remembering its integers. QLinearConv and QLinearMatMul become the same
// dequantize -> float op -> quantize pattern. fold_qdq.cpp then turns these patterns into mt's
// int8 ops; what it leaves is exact float32.
// mt's int8 tensors carry fixed per-tensor parameters, so the rest runs as float32 ops that compute
// what ONNX defines, exactly: scales or zero points computed at run time (graph inputs, the
// expanded DynamicQuantizeLinear), per-axis parameters of run-time tensors, plain uint8/int8 graph
// inputs, and a uint8 QuantizeLinear that is a graph output (its bytes are the ONNX uint8 values):
//   DequantizeLinear  (float(q) - float(zero)) * scale
//   QuantizeLinear    cast(clamp(round(x / scale) + float(zero), type's range)), round half to even.
#include <cmath>
#include <cstring>

#include "lib/import/constant_values.h"
#include "lib/import/translators.h"

namespace mt::onnx_import {
namespace {

// The affine parameters of one QuantizeLinear / DequantizeLinear operand, as mt holds them.
struct Affine {
  QuantParams params;     // int8 scheme: zero points already shifted when `uint8`
  bool uint8 = false;     // the ONNX integer tensor is uint8
  bool int32 = false;     // the ONNX integer tensor is int32 (a bias)
};

bool same_params(const QuantParams& a, const QuantParams& b) {
  return a.scales == b.scales && a.zero_points == b.zero_points && (a.axis < 0) == (b.axis < 0) &&
         (a.axis < 0 || a.axis == b.axis);
}

// Reads scale input `scale_i` and zero point input `zero_i` of `node` for integer data of shape
// `data_shape`. `integer_type` is the ONNX integer type when the zero point is absent.
Affine read_affine(ImportContext& ctx, const OnnxNode& node, size_t scale_i, size_t zero_i, const Shape& data_shape,
                   DType integer_type, int64_t axis_attr) {
  if (node.attr_int("block_size", 0) != 0) node.unsupported("blocked quantization (block_size) is not supported");
  Affine affine;
  const TensorInfo& scale_info = ctx.input_info(node, scale_i);
  if (scale_info.dtype != DType::f32) node.unsupported("scale '{}' must be float32", node.input(scale_i));
  const std::vector<double> scales = ctx.const_floats(node, scale_i, "scale");
  std::vector<int64_t> zeros(scales.size(), 0);
  DType type = integer_type;
  if (node.has_input(zero_i)) {
    type = ctx.input_info(node, zero_i).dtype;
    zeros = ctx.const_ints(node, zero_i, "zero point");
    if (zeros.size() != scales.size())
      node.invalid("zero point '{}' has {} values, scale '{}' has {}", node.input(zero_i), zeros.size(),
                   node.input(scale_i), scales.size());
  }
  if (type != DType::i8 && type != DType::u8 && type != DType::i32)
    node.unsupported("{} quantization is not supported (int8, uint8 and int32 are)", dtype_name(type));
  affine.uint8 = type == DType::u8;
  affine.int32 = type == DType::i32;
  if (scales.empty()) node.invalid("scale '{}' is empty", node.input(scale_i));
  if (scales.size() > 1) {
    if (scale_info.shape.size() != 1) node.invalid("scale '{}' must be a scalar or 1-D", node.input(scale_i));
    const int64_t axis = node_axis(node, axis_attr, data_shape.size());
    if (data_shape[static_cast<size_t>(axis)] != static_cast<int64_t>(scales.size()))
      node.invalid("scale '{}' has {} values for axis {} of size {}", node.input(scale_i), scales.size(), axis,
                   data_shape[static_cast<size_t>(axis)]);
    affine.params.axis = static_cast<int>(axis);
  }
  for (size_t i = 0; i < scales.size(); ++i) {
    const auto scale = static_cast<float>(scales[i]);
    if (!(scale > 0.0f) || !std::isfinite(scale))
      node.invalid("scale '{}' holds {}, which is not a positive finite number", node.input(scale_i), scales[i]);
    affine.params.scales.push_back(scale);
    affine.params.zero_points.push_back(static_cast<int32_t>(zeros[i] - (affine.uint8 ? 128 : 0)));
  }
  return affine;
}

// The channel of flat element `i` under per-axis parameters (0 for per-tensor ones).
size_t channel_of(const QuantParams& params, const Shape& shape, size_t i) {
  if (params.axis < 0) return 0;
  size_t inner = 1;
  for (size_t d = static_cast<size_t>(params.axis) + 1; d < shape.size(); ++d) inner *= static_cast<size_t>(shape[d]);
  return (i / inner) % static_cast<size_t>(shape[static_cast<size_t>(params.axis)]);
}

// Whether the node's scale input and zero point input (when present) are constants.
bool constant_params(ImportContext& ctx, const OnnxNode& node, size_t scale_i, size_t zero_i) {
  return ctx.input_info(node, scale_i).is_constant() &&
         (!node.has_input(zero_i) || ctx.input_info(node, zero_i).is_constant());
}

// The scale input as float32, broadcasting along `axis` of data of rank `rank` when it holds one
// value per index there.
std::string scale_operand(ImportContext& ctx, const OnnxNode& node, size_t scale_i, int64_t axis, size_t rank,
                          const std::string& hint) {
  const TensorInfo& scale = ctx.input_info(node, scale_i);
  if (scale.dtype != DType::f32) node.unsupported("scale '{}' must be float32", node.input(scale_i));
  if (scale.numel() < 1) node.invalid("scale '{}' is empty", node.input(scale_i));
  if (scale.numel() > 1 && scale.shape.size() != 1)
    node.invalid("scale '{}' must be a scalar or 1-D", node.input(scale_i));
  return along_axis(ctx, node, ctx.input(node, scale_i), axis, rank, hint);
}

// The per-axis axis of ONNX's attribute for data of rank `rank`, or -1 when the scale holds one value.
int64_t param_axis(ImportContext& ctx, const OnnxNode& node, size_t scale_i, int64_t axis_attr, size_t rank) {
  return ctx.input_info(node, scale_i).numel() > 1 ? node_axis(node, axis_attr, rank) : -1;
}

// DequantizeLinear of inputs (value_i, scale_i, zero_i) in float32 ops.
std::string dequantize_in_float(ImportContext& ctx, const OnnxNode& node, size_t value_i, size_t scale_i, size_t zero_i,
                                int64_t axis_attr, const std::string& output) {
  if (node.attr_int("block_size", 0) != 0) node.unsupported("blocked quantization (block_size) is not supported");
  const size_t rank = ctx.input_info(node, value_i).shape.size();
  const int64_t axis = param_axis(ctx, node, scale_i, axis_attr, rank);
  const std::string integers = integer_operand(ctx, node, value_i, zero_i, axis, output + "/integers");
  const std::string scale = scale_operand(ctx, node, scale_i, axis, rank, output + "/scale");
  return ctx.emit1(node, "mul", {integers, scale}, {}, output);
}

// QuantizeLinear of float32 `x` with inputs (scale_i, zero_i) of `node` into `output` of ONNX type
// `type` (uint8 or int8), in float32 ops.
void quantize_in_float(ImportContext& ctx, const OnnxNode& node, const std::string& x, size_t scale_i, size_t zero_i,
                       DType type, int64_t axis_attr, const std::string& output) {
  const size_t rank = ctx.graph().tensor(x).shape.size();
  const int64_t axis = param_axis(ctx, node, scale_i, axis_attr, rank);
  auto name = [&](const char* hint) { return ctx.fresh_name(output + "/" + hint); };
  const std::string scale = scale_operand(ctx, node, scale_i, axis, rank, name("scale"));
  std::string y = ctx.emit1(node, "round", {ctx.emit1(node, "div", {x, scale}, {}, name("steps"))}, {}, name("steps"));
  if (node.has_input(zero_i)) {
    const std::string zero = ctx.input(node, zero_i);
    const TensorInfo& z = ctx.graph().tensor(zero);
    if (z.quant || ctx.is_shifted_uint8(zero))
      node.unsupported("zero point '{}' is a quantized tensor computed at run time", node.input(zero_i));
    if (z.numel() != ctx.graph().tensor(scale).numel())
      node.invalid("zero point '{}' has {} values, scale '{}' has {}", node.input(zero_i), z.numel(),
                   node.input(scale_i), ctx.graph().tensor(scale).numel());
    const std::string real = ctx.emit1(node, "cast", {zero}, {{"to", std::string("float32")}}, name("zero"));
    y = ctx.emit1(node, "add", {y, along_axis(ctx, node, real, axis, rank, name("zero"))}, {}, name("shifted"));
  }
  const bool u8 = type == DType::u8;
  y = ctx.emit1(node, "clamp", {y}, {{"min", u8 ? 0.0 : -128.0}, {"max", u8 ? 255.0 : 127.0}}, name("saturated"));
  ctx.emit1(node, "cast", {y}, {{"to", std::string(u8 ? "uint8" : "int8")}}, output);
}

// ONNX's QuantizeLinear on a constant: an int8 constant (uint8 shifted), parameters attached.
void quantize_constant(ImportContext& ctx, const TensorInfo& x, const Affine& affine, const std::string& output) {
  const std::vector<double> values = read_doubles(x);
  TensorInfo q{.name = output, .dtype = DType::i8, .shape = x.shape, .quant = affine.params};
  q.data = ConstData::allocate(values.size());
  auto* bytes = reinterpret_cast<int8_t*>(q.data.mutable_data());
  for (size_t i = 0; i < values.size(); ++i) {
    const size_t c = channel_of(affine.params, x.shape, i);
    // Saturate in the file's type, then shift: the same as saturating the shifted value.
    float v = static_cast<float>(values[i]) / affine.params.scales[c];
    if (std::isnan(v)) v = 0.0f;
    const float zero = static_cast<float>(affine.params.zero_points[c]);
    bytes[i] = static_cast<int8_t>(std::clamp(std::nearbyint(v) + zero, -128.0f, 127.0f));
  }
  ctx.add_constant(std::move(q));
}

void quantize_linear(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  if (node.attr_int("saturate", 1) != 1) node.unsupported("saturate=0 applies to float8 only");
  const std::string x = ctx.input(node, 0);
  const TensorInfo x_info = ctx.input_info(node, 0);
  if (x_info.dtype != DType::f32) node.unsupported("input '{}' is {}; mt quantizes float32", node.input(0),
                                                   dtype_name(x_info.dtype));
  // Without a zero point the output is uint8, or output_dtype (opset 21).
  DType integer_type = DType::u8;
  const auto output_dtype = static_cast<int32_t>(node.attr_int("output_dtype", 0));
  if (output_dtype != 0) {
    const auto type = dtype_from_onnx(output_dtype);
    if (!type || (*type != DType::i8 && *type != DType::u8))
      node.unsupported("output_dtype {} is not supported (int8 and uint8 are)", onnx_type_name(output_dtype));
    integer_type = *type;
  }
  if (output_dtype != 0 && node.has_input(2) && ctx.input_info(node, 2).dtype != integer_type)
    node.invalid("output_dtype and the zero point's type differ");
  const std::string& output = node.output(0);
  const DType type = node.has_input(2) ? ctx.input_info(node, 2).dtype : integer_type;
  const int64_t axis_attr = node.attr_int("axis", 1);
  if (type == DType::i32) node.invalid("QuantizeLinear cannot produce int32");
  // Float32 ops where mt's quantize cannot hold the result (see the top of the file).
  const bool per_axis = ctx.input_info(node, 1).numel() > 1;
  if (!x_info.is_constant() &&
      (!constant_params(ctx, node, 1, 2) || per_axis || (type == DType::u8 && ctx.is_graph_output(output)))) {
    if (type != DType::u8 && type != DType::i8)
      node.unsupported("{} quantization is not supported (int8 and uint8 are)", dtype_name(type));
    quantize_in_float(ctx, node, x, 1, 2, type, axis_attr, output);
    return;
  }
  const Affine affine = read_affine(ctx, node, 1, 2, x_info.shape, integer_type, axis_attr);
  if (x_info.is_constant()) {
    quantize_constant(ctx, x_info, affine, output);
  } else {
    ctx.emit1(node, "quantize", {x}, {}, output);
    ctx.graph().tensor(output).quant = affine.params;
  }
  if (affine.uint8) ctx.mark_shifted_uint8(ctx.tensor_name(output));
}

// DequantizeLinear of a constant: the float32 constant it computes, (q - zero) * scale in float
// as ONNX Runtime computes it, which remembers its integers for fold_qdq.
std::string dequantize_constant(ImportContext& ctx, const TensorInfo& q, const Affine& affine,
                                const std::string& output) {
  const std::vector<int64_t> values = read_ints(q);
  std::vector<float> real(values.size());
  TensorInfo integers{.name = q.name, .dtype = affine.int32 ? DType::i32 : DType::i8, .shape = q.shape,
                      .quant = affine.params};
  integers.data = ConstData::allocate(values.size() * (affine.int32 ? 4 : 1));
  for (size_t i = 0; i < values.size(); ++i) {
    const size_t c = channel_of(affine.params, q.shape, i);
    const int64_t stored = values[i] - (affine.uint8 ? 128 : 0);  // in mt's int8 scheme
    real[i] = static_cast<float>(stored - affine.params.zero_points[c]) * affine.params.scales[c];
    if (affine.int32) {
      const auto v = static_cast<int32_t>(stored);
      std::memcpy(integers.data.mutable_data() + i * 4, &v, 4);
    } else {
      reinterpret_cast<int8_t*>(integers.data.mutable_data())[i] = static_cast<int8_t>(stored);
    }
  }
  TensorInfo f{.name = output, .dtype = DType::f32, .shape = q.shape};
  f.data = ConstData::copy_of(real.data(), real.size() * sizeof(float));
  const std::string name = ctx.add_constant(std::move(f));
  ctx.note_dequantized_constant(name, std::move(integers));
  return name;
}

// DequantizeLinear of inputs (value_i, scale_i, zero_i) of `node` into `output`: a float32
// constant for constant integers and parameters; mt's dequantize of an int8 tensor with constant
// per-tensor parameters, which become the tensor's; float32 ops otherwise.
std::string dequantize(ImportContext& ctx, const OnnxNode& node, size_t value_i, size_t scale_i, size_t zero_i,
                       int64_t axis, const std::string& output) {
  const std::string q = ctx.input(node, value_i);
  const TensorInfo& info = ctx.input_info(node, value_i);
  if (info.dtype != DType::i8 && info.dtype != DType::u8 && info.dtype != DType::i32)
    node.unsupported("input '{}' is {}; int8, uint8 and int32 are supported", node.input(value_i),
                     dtype_name(info.dtype));
  // Float32 ops where mt's dequantize cannot read the tensor (see the top of the file).
  const bool constant = info.is_constant() && constant_params(ctx, node, scale_i, zero_i);
  if (!constant && (info.dtype != DType::i8 || !constant_params(ctx, node, scale_i, zero_i) ||
                    ctx.input_info(node, scale_i).numel() > 1))
    return dequantize_in_float(ctx, node, value_i, scale_i, zero_i, axis, output);
  // ONNX types the zero point like the data; an int8 mt tensor of an ONNX uint8 one is shifted.
  const DType onnx_type = info.dtype == DType::i8 && ctx.is_shifted_uint8(q) ? DType::u8 : info.dtype;
  const Affine affine = read_affine(ctx, node, scale_i, zero_i, info.shape, onnx_type, axis);
  if (affine.int32 != (info.dtype == DType::i32) || (onnx_type == DType::u8 && !affine.uint8))
    node.invalid("the zero point's type differs from the input's");
  if (info.is_constant()) return dequantize_constant(ctx, info, affine, output);
  if (info.dtype != DType::i8)
    node.unsupported("dequantizes '{}' ({}), computed at run time; mt runs int8 there", node.input(value_i),
                     dtype_name(info.dtype));
  TensorInfo& tensor = ctx.graph().tensor(q);
  if (tensor.quant && !same_params(*tensor.quant, affine.params))
    node.unsupported("'{}' is dequantized with other parameters than it was quantized with", node.input(value_i));
  tensor.quant = affine.params;
  return ctx.emit1(node, "dequantize", {q}, {}, output);
}

void dequantize_linear(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  if (node.attr_int("output_dtype", onnx::TensorProto::FLOAT) != onnx::TensorProto::FLOAT)
    node.unsupported("only float32 output is supported");
  dequantize(ctx, node, 0, 1, 2, node.attr_int("axis", 1), node.output(0));
}

// QLinearConv(x, x_scale, x_zero, w, w_scale, w_zero, y_scale, y_zero, B): B is int32 with scale
// x_scale * w_scale and zero point 0.
void qlinear_conv(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  const std::string& out = node.output(0);
  const std::string x = dequantize(ctx, node, 0, 1, 2, 1, ctx.fresh_name(out + "/x"));
  const std::string w = dequantize(ctx, node, 3, 4, 5, 0, ctx.fresh_name(out + "/w"));
  std::vector<std::string> inputs{x, w};
  if (node.has_input(8)) {
    const TensorInfo& b = ctx.input_info(node, 8);
    if (b.dtype != DType::i32 || b.shape.size() != 1)
      node.invalid("bias '{}' must be a 1-D int32 tensor", node.input(8));
    const TensorInfo* w_origin = ctx.dequantized_origin(w);
    if (!b.is_constant() || !ctx.input_info(node, 1).is_constant() || w_origin == nullptr) {
      // Float32 ops: B * (x_scale * w_scale), w_scale one value or one per output channel, as B.
      const std::string scale =
          ctx.emit1(node, "mul", {ctx.input(node, 1), ctx.input(node, 4)}, {}, ctx.fresh_name(out + "/b_scale"));
      const std::string real = ctx.emit1(node, "cast", {ctx.input(node, 8)}, {{"to", std::string("float32")}},
                                         ctx.fresh_name(out + "/b_integers"));
      inputs.push_back(ctx.emit1(node, "mul", {real, scale}, {}, ctx.fresh_name(out + "/b")));
      const std::string y = ctx.fresh_name(out + "/conv");
      translate_as(ctx, node, "Conv", inputs, y);
      translate_as(ctx, node, "QuantizeLinear", {y, node.input(6), node.input(7)}, out);
      return;
    }
    const auto x_scale = static_cast<float>(ctx.const_floats(node, 1, "x_scale").at(0));
    const auto& w_scales = w_origin->quant->scales;
    Affine bias{.params = {.axis = 0}, .int32 = true};
    for (int64_t c = 0; c < b.shape[0]; ++c) {
      bias.params.scales.push_back(x_scale * w_scales[w_scales.size() == 1 ? 0 : static_cast<size_t>(c)]);
      bias.params.zero_points.push_back(0);
    }
    if (w_scales.size() != 1 && w_scales.size() != static_cast<size_t>(b.shape[0]))
      node.invalid("bias '{}' has {} values for {} output channels", node.input(8), b.shape[0], w_scales.size());
    inputs.push_back(dequantize_constant(ctx, b, bias, ctx.fresh_name(out + "/b")));
  }
  const std::string y = ctx.fresh_name(out + "/conv");
  translate_as(ctx, node, "Conv", inputs, y);
  translate_as(ctx, node, "QuantizeLinear", {y, node.input(6), node.input(7)}, out);
}

// QLinearMatMul(a, a_scale, a_zero, b, b_scale, b_zero, y_scale, y_zero): b per column when
// constant (axis 1 of [K, N]).
void qlinear_matmul(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  const std::string& out = node.output(0);
  const std::string a = dequantize(ctx, node, 0, 1, 2, 1, ctx.fresh_name(out + "/a"));
  const int64_t b_axis = static_cast<int64_t>(ctx.input_info(node, 3).shape.size()) - 1;
  const std::string b = dequantize(ctx, node, 3, 4, 5, b_axis, ctx.fresh_name(out + "/b"));
  const std::string y = ctx.emit1(node, "matmul", {a, b}, {}, ctx.fresh_name(out + "/matmul"));
  translate_as(ctx, node, "QuantizeLinear", {y, node.input(6), node.input(7)}, out);
}

}  // namespace

void add_quant_translators(TranslatorTable& table) {
  table.add("QuantizeLinear", quantize_linear);
  table.add("DequantizeLinear", dequantize_linear);
  table.add("QLinearConv", qlinear_conv);
  table.add("QLinearMatMul", qlinear_matmul);
}

}  // namespace mt::onnx_import
