// int8 add and mul (XNNPACK qs8 with numpy broadcasting, both operands read in the output's
// layout as binary.cpp does; mul on the VNNI kernel where it fits), sigmoid (XNNPACK qs8, which
// fixes the output parameters at scale 1/256, zero point -128), hardswish, silu and hardsigmoid
// (XNNPACK has no int8 ones: a 256-entry table built at planning from the float function, so each
// value is rounded once), concat (copies, or a table per input whose parameters differ from the
// output's), and the ops that move int8 bytes unchanged, which run their float planners when input
// and output parameters agree.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "kernels/cpu/engines/int8_vnni.h"
#include "kernels/cpu/plan/op_util.h"
#include "kernels/cpu/ops/ops.h"
#include "kernels/cpu/ops/ops_int8.h"
#include "kernels/cpu/plan/parallel.h"
#include "lib/ops/int8_arithmetic.h"
#include "lib/ops/int8_limits.h"

namespace mt::cpu {
namespace {

std::optional<std::string> check_all_int8(const Graph& graph, const Node& node) {
  for (const auto* names : {&node.inputs, &node.outputs})
    for (const auto& name : *names)
      if (!name.empty())
        if (auto reason = check_int8_activation(graph, name)) return reason;
  return std::nullopt;
}

using QS8Setup = xnn_status (*)(xnn_operator_t, size_t, const size_t*, size_t, const size_t*, const int8_t*,
                                const int8_t*, int8_t*, pthreadpool_t);

void plan_qs8_binary(NodeContext& c, xnn_operator_t op, QS8Setup setup) {
  const Shape& out_shape = c.output_info(0).shape;
  const size_t rank = out_shape.size();
  const Layout layout = binary_output_layout(c);
  std::array<size_t, XNN_MAX_TENSOR_DIMS> shapes[2]{};
  for (size_t i = 0; i < 2; ++i) {
    const Shape& shape = c.input_info(i).shape;
    Shape padded(rank - shape.size(), 1);
    padded.insert(padded.end(), shape.begin(), shape.end());
    const Shape physical = physical_shape(padded, layout);
    for (size_t k = 0; k < rank; ++k) shapes[i][k] = static_cast<size_t>(physical[k]);
  }
  const size_t dims = std::max<size_t>(rank, 1);  // a scalar is [1]
  if (rank == 0) shapes[0][0] = shapes[1][0] = 1;
  const Value a = c.xnn_input(0, trailing_layout(layout, c.input_info(0).shape.size()));
  const Value b = c.xnn_input(1, trailing_layout(layout, c.input_info(1).shape.size()));
  const Value y = c.output(0, layout);
  const auto shape_a = shapes[0], shape_b = shapes[1];
  c.add_xnn(op, {a, b, y}, [setup, shape_a, shape_b, dims](xnn_operator_t o, Pointers p, pthreadpool_t pool) {
    return setup(o, dims, shape_a.data(), dims, shape_b.data(), static_cast<const int8_t*>(p[0]),
                 static_cast<const int8_t*>(p[1]), static_cast<int8_t*>(p[2]), pool);
  });
}

std::optional<std::string> check_binary_int8(const Graph& graph, const Node& node, int8_limits::RatioRange limits, bool product) {
  if (auto reason = check_all_int8(graph, node)) return reason;
  if (graph.tensor(node.outputs[0]).shape.size() > XNN_MAX_TENSOR_DIMS) return std::string("rank above 6 not supported");
  const Int8Params a = int8_params(graph.tensor(node.inputs[0])), b = int8_params(graph.tensor(node.inputs[1]));
  const Int8Params y = int8_params(graph.tensor(node.outputs[0]));
  // XNNPACK's limits on the requantization multipliers.
  const std::vector<double> ratios = product ? std::vector<double>{static_cast<double>(a.scale) * b.scale / y.scale}
                                             : std::vector<double>{a.scale / y.scale, b.scale / y.scale};
  for (double r : ratios)
    if (!limits.contains(r)) return fmt::format("scale ratio {} not supported", r);
  return std::nullopt;
}

}  // namespace

std::optional<std::string> check_add_int8(const Graph& graph, const Node& node) {
  return check_binary_int8(graph, node, int8_limits::kAddInput, false);
}

void plan_add_int8(NodeContext& c) {
  const Int8Params a = int8_params(c.input_info(0)), b = int8_params(c.input_info(1)), y = int8_params(c.output_info(0));
  const auto [lo, hi] = int8_output_bounds(c.node(), y);
  xnn_operator_t op =
      c.create_xnn("xnn_create_add_nd_qs8", xnn_create_add_nd_qs8, static_cast<int8_t>(a.zero_point), a.scale,
                   static_cast<int8_t>(b.zero_point), b.scale, static_cast<int8_t>(y.zero_point), y.scale, lo, hi, 0);
  plan_qs8_binary(c, op, xnn_setup_add_nd_qs8);
}

std::optional<std::string> check_mul_int8(const Graph& graph, const Node& node) {
  return check_binary_int8(graph, node, int8_limits::kMulProduct, true);
}

void plan_mul_int8(NodeContext& c) {
  if (c.int8_vnni() && plan_mul_int8_vnni(c)) return;
  const Int8Params a = int8_params(c.input_info(0)), b = int8_params(c.input_info(1)), y = int8_params(c.output_info(0));
  xnn_operator_t op = c.create_xnn("xnn_create_multiply_nd_qs8", xnn_create_multiply_nd_qs8,
                                   static_cast<int8_t>(a.zero_point), a.scale, static_cast<int8_t>(b.zero_point),
                                   b.scale, static_cast<int8_t>(y.zero_point), y.scale, -128, 127, 0);
  plan_qs8_binary(c, op, xnn_setup_multiply_nd_qs8);
}

std::optional<std::string> check_sigmoid_int8(const Graph& graph, const Node& node) {
  if (auto reason = check_all_int8(graph, node)) return reason;
  if (int8_params(graph.tensor(node.outputs[0])) != Int8Params{1.0f / 256.0f, -128})
    return std::string("output parameters must be scale 1/256, zero point -128");
  return std::nullopt;
}

// Elementwise, so any layout: the whole tensor is one row of single-channel pixels.
void plan_sigmoid_int8(NodeContext& c) {
  const Int8Params x = int8_params(c.input_info(0)), y = int8_params(c.output_info(0));
  xnn_operator_t op =
      c.create_xnn("xnn_create_sigmoid_nc_qs8", xnn_create_sigmoid_nc_qs8, 1, 1, 1, static_cast<int8_t>(x.zero_point),
                   x.scale, static_cast<int8_t>(y.zero_point), y.scale, -128, 127, 0);
  const Value xv = c.input(0);
  const Value in = c.xnn_input(0, xv.layout);
  const Value out = c.output(0, xv.layout);
  const size_t n = count_of(in);
  c.add_xnn(op, {in, out}, [n](xnn_operator_t o, Pointers p, pthreadpool_t pool) {
    return xnn_setup_sigmoid_nc_qs8(o, n, static_cast<const int8_t*>(p[0]), static_cast<int8_t*>(p[1]), pool);
  });
}

namespace {

// y = table[x] (int8_activation_table), or no step where the only reader, a depthwise conv, looks
// its input rows up itself (MobileNetV3's hardswish and EfficientNet's SiLU between the expanding
// 1x1 conv and the depthwise conv: a pass over the tensor and a parallel region each).
void plan_table(NodeContext& c) {
  const std::array<int8_t, 256> table = *int8_activation_table(c.graph(), c.node());
  if (const std::optional<size_t> consumer = c.sole_consumer(0);
      consumer && depthwise_takes_input_lookup(c, *consumer)) {
    auto* kept = static_cast<int8_t*>(c.keep(table.size()));
    std::copy(table.begin(), table.end(), kept);
    c.defer_lookup(c.node().inputs[0], kept);
    return;
  }
  const Value in = c.input(0);
  const Value out = c.output(0, in.layout);
  const size_t n = count_of(in);
  const bool vbmi = c.int8_vnni();  // int8_vnni.h's int8_lookup: 64 bytes per step
  c.add_kernel({in, out}, [table, n, vbmi](Pointers p, ThreadPool* pool) {
    const auto* src = static_cast<const int8_t*>(p[0]);
    auto* dst = static_cast<int8_t*>(p[1]);
    const int8_t* entries = table.data();
    // 32 KiB per thread at least: a table costs about 6 instructions per 64 bytes.
    parallel_chunks(pool, n, 32768, [src, dst, entries, vbmi](size_t begin, size_t end) {
      if (vbmi) return int8_lookup(entries, src + begin, dst + begin, end - begin);
      for (size_t i = begin; i < end; ++i) dst[i] = entries[static_cast<size_t>(src[i] + 128)];
    });
  });
}

}  // namespace

std::optional<std::string> check_hardswish_int8(const Graph& graph, const Node& node) {
  return check_all_int8(graph, node);
}

void plan_hardswish_int8(NodeContext& c) { plan_table(c); }

std::optional<std::string> check_silu_int8(const Graph& graph, const Node& node) { return check_all_int8(graph, node); }

void plan_silu_int8(NodeContext& c) { plan_table(c); }

std::optional<std::string> check_hardsigmoid_int8(const Graph& graph, const Node& node) {
  return check_all_int8(graph, node);
}

void plan_hardsigmoid_int8(NodeContext& c) { plan_table(c); }

std::optional<std::array<int8_t, 256>> int8_activation_table(const Graph& graph, const Node& node) {
  if (node.inputs.empty() || node.outputs.empty() || check_all_int8(graph, node)) return std::nullopt;
  const Int8Params x = int8_params(graph.tensor(node.inputs[0])), y = int8_params(graph.tensor(node.outputs[0]));
  if (node.op == "hardswish") return int8_table(x, y, int8_hardswish_function);
  if (node.op == "silu") return int8_table(x, y, int8_silu_function);
  if (node.op == "hardsigmoid") {
    const auto alpha = static_cast<float>(attr_float(node, "alpha")),
               beta = static_cast<float>(attr_float(node, "beta"));
    return int8_table(x, y, [alpha, beta](float v) { return std::max(0.0f, std::min(1.0f, alpha * v + beta)); });
  }
  return std::nullopt;
}

std::optional<std::string> check_data_movement_int8(const Graph& graph, const Node& node) {
  const std::string& op = node.op;
  const bool moves = op == "reshape" || op == "flatten" || op == "squeeze" || op == "unsqueeze" || op == "identity" ||
                     op == "transpose" || op == "concat" || op == "split" || op == "slice";
  if (!moves) return std::string("no int8 kernel");
  if (op == "concat") {  // requantizes the inputs whose parameters differ from its output's
    if (auto reason = check_all_int8(graph, node)) return reason;
    return check_concat(graph, node);
  }
  const size_t data_inputs = 1;
  if (auto reason = check_int8_activation(graph, node.inputs[0])) return reason;
  const Int8Params reference = int8_params(graph.tensor(node.inputs[0]));
  auto same = [&](const std::string& name) -> std::optional<std::string> {
    if (auto reason = check_int8_activation(graph, name)) return reason;
    if (int8_params(graph.tensor(name)) != reference)
      return fmt::format("tensor '{}' has other quantization parameters than '{}'", name, node.inputs[0]);
    return std::nullopt;
  };
  for (size_t i = 1; i < data_inputs; ++i)
    if (auto reason = same(node.inputs[i])) return reason;
  for (const auto& output : node.outputs)
    if (auto reason = same(output)) return reason;
  if (op == "split") return check_split(graph, node);
  if (op == "slice") return check_slice(graph, node);
  return std::nullopt;
}

namespace {

// concat: an input with the output's parameters is copied; another goes through a byte table,
// y = quantize(dequantize(x)) as the reference concat computes it, built at planning (VBMI lookups
// where int8_vnni(), else a load per byte).
void plan_concat_int8(NodeContext& c) {
  const Int8Params y = int8_params(c.output_info(0));
  std::vector<std::optional<std::array<int8_t, 256>>> tables(c.num_inputs());
  bool any = false;
  for (size_t i = 0; i < c.num_inputs(); ++i) {
    const Int8Params x = int8_params(c.input_info(i));
    if (x == y) continue;
    tables[i] = int8_requantize_table(x, y);
    any = true;
  }
  if (!any) return plan_concat(c);
  const bool vbmi = c.int8_vnni();
  plan_concat_blocks(c, [tables, vbmi](size_t i, std::byte* dst, const std::byte* src, size_t bytes) {
    auto* to = reinterpret_cast<int8_t*>(dst);
    const auto* from = reinterpret_cast<const int8_t*>(src);
    if (!tables[i]) return static_cast<void>(std::memcpy(dst, src, bytes));
    const int8_t* entries = tables[i]->data();
    if (vbmi) return int8_lookup(entries, from, to, bytes);
    for (size_t k = 0; k < bytes; ++k) to[k] = entries[static_cast<size_t>(from[k] + 128)];
  });
}

}  // namespace

void plan_data_movement_int8(NodeContext& c) {
  const std::string& op = c.node().op;
  if (op == "transpose") return plan_transpose(c);
  if (op == "concat") return plan_concat_int8(c);
  if (op == "split") return plan_split(c);
  if (op == "slice") return plan_slice(c);
  plan_reshape(c);
}

}  // namespace mt::cpu
