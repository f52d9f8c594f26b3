// Element-wise ops: activations, logical_not and quantize / dequantize (shaders/unary.comp), binary
// arithmetic with broadcasting, prelu, comparisons and boolean ops (binary.comp, also int8 add and
// mul), where (select.comp), and unfused batch_norm as a per-channel affine map (channel_affine.comp).
// Bool tensors are 0.0 / 1.0 here.
#include <cmath>
#include <limits>
#include <map>

#include "kernels/vulkan/ops/ops.h"
#include "kernels/vulkan/plan/weight_layout.h"
#include "lib/ops/int8_arithmetic.h"
#include "lib/ops/registry.h"

namespace mt::vulkan {
namespace {

// Operation codes of shaders/unary.comp and binary.comp, from the list the shaders read too.
#define MT_UNARY_OP(op, CODE, value) {#op, value},
const std::map<std::string_view, uint32_t> kUnaryOps = {
#include "shaders/op_codes.h"
};
#define MT_BINARY_OP(op, CODE, value) {#op, value},
const std::map<std::string_view, uint32_t> kBinaryOps = {
#include "shaders/op_codes.h"
};

}  // namespace

std::optional<std::string> check_unary(const Graph& graph, const Node& node) {
  if (node.op == "quantize") return check_int8_activation(graph, node.outputs.at(0));
  if (node.op == "dequantize") return check_int8_activation(graph, node.inputs.at(0));
  if (node.op == "gelu") {
    const std::string& approximate = attr_string(node, "approximate");
    if (approximate != "none" && approximate != "tanh") return fmt::format("gelu approximate \"{}\" not supported", approximate);
  }
  return std::nullopt;
}

void plan_unary(NodeContext& ctx) {
  const Node& node = ctx.node();
  uint32_t op = kUnaryOps.at(node.op);
  double alpha = 0, beta = 0;
  if (node.op == "clamp") {
    alpha = attr_float(node, "min");
    beta = attr_float(node, "max");
  } else if (node.op == "hardsigmoid" || node.op == "leaky_relu" || node.op == "elu") {
    alpha = attr_float(node, "alpha");
    if (node.op == "hardsigmoid") beta = attr_float(node, "beta");
  } else if (node.op == "gelu" && attr_string(node, "approximate") == "tanh") {
    op = kUnaryOps.at("gelu_tanh");
  } else if (node.op == "quantize" || node.op == "dequantize") {
    const Int8Params q = int8_params(node.op == "quantize" ? ctx.output_info(0) : ctx.input_info(0));
    alpha = q.scale;
    beta = q.zero_point;
  }
  if (const int staging = ctx.graph_input_staging(0); node.op == "quantize" && staging >= 0) {
    // A graph input quantized as it is packed, from its float32 values (not rounded to fp16 first).
    const Tensor y = ctx.output(0);
    ctx.dispatch("pack", {64, 1, 1}, {2}, {NodeContext::read(staging), NodeContext::write(y)},
                 Params().i(y.layout.texels).view(y.view()).f(alpha).i(static_cast<int64_t>(beta)),
                 linear_groups(y.layout.texels));
    return;
  }
  const Tensor& x = ctx.input(0);
  const Tensor y = ctx.output(0);
  const PackedLayout& layout = y.layout;
  const auto p = static_cast<size_t>(layout.packed_axis);
  ctx.dispatch("unary", {64, 1, 1}, {op}, {NodeContext::fetch(x), NodeContext::write(y)},
               Params().i(layout.texels).i(layout.strides[p]).i(layout.blocks()).i(layout.dims[p]).f(alpha).f(beta),
               linear_groups(layout.texels));
}

std::optional<std::string> check_binary(const Graph&, const Node&) { return std::nullopt; }

void plan_binary(NodeContext& ctx) {
  const Node& node = ctx.node();
  const Tensor y = ctx.output(0);
  const View out = y.view();
  // A constant operand of lower rank is stored at the output's rank, so that the texel path applies.
  auto operand = [&](size_t i) -> Tensor {
    const TensorInfo& info = ctx.input_info(i);
    if (ctx.is_constant(i) && static_cast<int>(std::max<size_t>(info.shape.size(), 1)) < out.rank) {
      Shape shape = info.shape;
      shape.insert(shape.begin(), static_cast<size_t>(out.rank) - shape.size(), 1);
      Tensor t;
      t.layout = packed_layout(shape);
      t.buffer = ctx.weights(pack_tensor(ctx.constant_values(i).data(), shape));
      return t;
    }
    return ctx.input(i);
  };
  const Tensor a = operand(0), b = operand(1);
  const View va = aligned(a.view(), out.rank), vb = aligned(b.view(), out.rank);
  const bool texels = va.packed == out.packed && vb.packed == out.packed;
  const bool int8 = is_int8_node(ctx.graph(), node);
  double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
  if (node.op == "add") std::tie(lo, hi) = activation_bounds(node);
  Params params;
  if (int8) {  // int8 clamp bounds, and binary.comp's int8 parameters after the views
    const Int8Params qa = int8_params(ctx.input_info(0)), qb = int8_params(ctx.input_info(1)),
                     qy = int8_params(ctx.output_info(0));
    std::tie(lo, hi) = std::pair{-128.0, 127.0};
    if (node.op == "add")
      std::tie(lo, hi) =
          int8_clamp_bounds(attr_float(node, "act_min"), attr_float(node, "act_max"), qy.scale, qy.zero_point);
    const float a_multiplier = node.op == "mul" ? qa.scale * qb.scale / qy.scale : qa.scale / qy.scale;
    params.i(qa.zero_point).i(qb.zero_point).f(a_multiplier).f(qb.scale / qy.scale).i(qy.zero_point);
  }
  const int64_t count = texels ? y.layout.texels : numel(y.layout.dims);
  // binary.comp's A_KIND / B_KIND: how an operand's texel follows from the output's index.
  auto kind = [&](const View& v) -> uint32_t {
    if (v.dims == out.dims) return 1;  // same shape: same texel
    bool channel = v.dims[static_cast<size_t>(out.packed)] == out.dims[static_cast<size_t>(out.packed)];
    for (int a = 0; a < out.rank; ++a)
      if (a != out.packed && v.dims[static_cast<size_t>(a)] != 1) channel = false;
    bool leading_ones = true;  // the output's axes before the packed one are all 1 (one image)
    for (int a = 0; a < out.packed; ++a) leading_ones = leading_ones && out.dims[static_cast<size_t>(a)] == 1;
    return channel && leading_ones ? 2 : 0;
  };
  const uint32_t code = kBinaryOps.at(int8 ? node.op + "_int8" : node.op);
  ctx.dispatch("binary", {64, 1, 1}, {code, texels ? 0u : 1u, texels ? kind(va) : 0u, texels ? kind(vb) : 0u},
               {NodeContext::fetch(a), NodeContext::fetch(b), NodeContext::write(y)},
               Params().i(count).f(lo).f(hi).view(out).view(va).view(vb).append(params), linear_groups(count));
}

std::optional<std::string> check_where(const Graph&, const Node&) { return std::nullopt; }

void plan_where(NodeContext& ctx) {
  const Tensor y = ctx.output(0);
  const View out = y.view();
  const Tensor& condition = ctx.input(0);
  const Tensor& x = ctx.input(1);
  const Tensor& z = ctx.input(2);
  const int64_t count = numel(y.layout.dims);
  ctx.dispatch("select", {64, 1, 1}, {},
               {NodeContext::read(condition), NodeContext::read(x), NodeContext::read(z), NodeContext::write(y)},
               Params()
                   .i(count)
                   .view(out)
                   .view(aligned(condition.view(), out.rank))
                   .view(aligned(x.view(), out.rank))
                   .view(aligned(z.view(), out.rank)),
               linear_groups(count));
}

std::optional<std::string> check_batch_norm(const Graph& graph, const Node& node) {
  if (graph.tensor(node.inputs.at(0)).shape.size() < 2) return "batch_norm of a rank-1 input not supported";
  for (size_t i = 1; i < 5; ++i)
    if (auto reason = require_constant(graph, node, i, "batch_norm statistic")) return reason;
  return std::nullopt;
}

void plan_batch_norm(NodeContext& ctx) {
  const Node& node = ctx.node();
  const double epsilon = attr_float(node, "epsilon");
  const Tensor& x = ctx.input(0);
  const int64_t channels = ctx.input_info(0).shape.at(1);
  const float *scale = ctx.constant(1), *bias = ctx.constant(2), *mean = ctx.constant(3), *var = ctx.constant(4);
  std::vector<float> a(static_cast<size_t>(channels)), b(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) {
    const double s = scale[c] / std::sqrt(static_cast<double>(var[c]) + epsilon);
    a[static_cast<size_t>(c)] = static_cast<float>(s);
    b[static_cast<size_t>(c)] = static_cast<float>(bias[c] - mean[c] * s);
  }
  const Tensor y = ctx.output(0);
  const PackedLayout& layout = y.layout;
  ctx.dispatch("channel_affine", {64, 1, 1}, {},
               {NodeContext::read(x), NodeContext::write(y), NodeContext::read(ctx.weights(pack_channels(a.data(), channels))),
                NodeContext::read(ctx.weights(pack_channels(b.data(), channels)))},
               Params().i(layout.texels).i(layout.strides[1]).i(layout.blocks()), linear_groups(layout.texels));
}

}  // namespace mt::vulkan
