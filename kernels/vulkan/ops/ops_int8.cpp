// The int8 nodes of quantized models (docs/ARCHITECTURE.md, Quantization): int8 tensors live on the
// device as floats holding their integer values (fp16 holds them exactly too), so the float shape
// ops move them unchanged; conv2d and linear (shaders/conv2d_int8*.comp, depthwise_int8.comp,
// linear_int8*.comp) read int8 weights and sum exactly in int32, on the device's int8 dot products
// where the plan may use them; the other int8 ops have int8 variants in the float shaders (binary,
// pool2d, global_pool) or a 256-entry table (int8_lookup.comp). Every result is the reference
// kernel's (lib/ops/eval/quantized*.cpp): the same integer sums and fp32 requantization.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "kernels/vulkan/ops/conv_grid.h"
#include "kernels/vulkan/ops/ops.h"
#include "kernels/vulkan/plan/prepack.h"
#include "kernels/vulkan/plan/weight_layout.h"
#include "lib/ops/conv_geometry.h"
#include "lib/ops/eval/evaluate.h"
#include "lib/ops/int8_arithmetic.h"
#include "lib/ops/int8_arithmetic.h"
#include "lib/ops/registry.h"

namespace mt::vulkan {
namespace {

constexpr uint32_t kTile = 4;  // output pixels per invocation of depthwise_int8
// conv2d_int8 takes 8: each weight texel it unpacks then feeds twice the pixels (lavapipe, CPU time
// per inference: ResNet18 0.89x of 4; MobileNetV2, whose int8 convs are 1x1, and its depthwise
// shader with 8, unchanged).
constexpr uint32_t kDenseTile = 8;
// Output blocks per invocation of conv2d_int8 with one group: 4 for kernels above 1x1, so that each
// input texel feeds 16 channels (ResNet18 0.88x, ResNet50 0.93x of 2), 2 for 1x1 (4 there: MobileNetV2
// 1.64x slower).
uint32_t int8_conv_blocks(int64_t kernel_taps) { return kernel_taps > 1 ? 4 : 2; }

// The requantization multipliers x_scale w_scale[c] / y_scale per block of 4 output channels, formed
// in float32 as the reference kernel forms them.
int multipliers(NodeContext& ctx, int64_t channels) {
  const Int8Params x = int8_params(ctx.input_info(0)), y = int8_params(ctx.output_info(0));
  const std::vector<float> scales = int8_weight_scales(ctx.input_info(1));
  std::vector<float> m(static_cast<size_t>(channels));
  for (size_t c = 0; c < m.size(); ++c) m[c] = x.scale * scales[c] / y.scale;
  return ctx.weights_fp32(pack_channels(m.data(), channels));
}

// The int32 bias per block of 4 output channels, minus x_zero times each channel's weight sum
// when `weight_sums` is given (the shaders that read x_zero at padding and multiply stored values).
int int8_bias(NodeContext& ctx, int64_t channels, const std::vector<int32_t>* weight_sums) {
  const int32_t x_zero = int8_params(ctx.input_info(0)).zero_point;
  std::vector<int32_t> bias(static_cast<size_t>((channels + 3) / 4 * 4), 0);
  for (int64_t c = 0; c < channels; ++c) {
    const auto k = static_cast<size_t>(c);
    bias[k] = ctx.has_input(2) ? ctx.constant_int32(2)[c] : 0;
    if (weight_sums != nullptr) bias[k] -= x_zero * (*weight_sums)[k];
  }
  return ctx.weights_words(bias);
}

// The stored bytes of a prepacked int8 weight.
std::vector<int8_t> prepacked_int8(const NodeContext& ctx, size_t i) {
  const auto values = ctx.input_info(i).data.as<int8_t>();
  return {values.begin(), values.end()};
}

std::vector<int64_t> block_starts(const std::vector<int32_t>& ranges) {
  std::vector<int64_t> first;
  for (size_t ob = 0; ob < ranges.size() / 3; ++ob) first.push_back(ranges[3 * ob]);
  return first;
}

// The int8 clamp bounds of the node's output (its fused act_min / act_max).
std::pair<int32_t, int32_t> output_bounds(const NodeContext& ctx) {
  const Int8Params y = int8_params(ctx.output_info(0));
  return int8_clamp_bounds(attr_float(ctx.node(), "act_min"), attr_float(ctx.node(), "act_max"), y.scale, y.zero_point);
}

std::optional<std::string> check_weights(const Graph& graph, const Node& node, size_t rank) {
  if (auto reason = require_constant(graph, node, 1, "weight")) return reason;
  if (auto reason = require_constant(graph, node, 2, "bias")) return reason;
  const TensorInfo& w = graph.tensor(node.inputs.at(1));
  if (w.dtype != DType::i8 || !w.quant) return fmt::format("weights '{}' must be int8 with parameters", w.name);
  if (w.shape.size() != rank) return fmt::format("weights '{}' must have rank {}", w.name, rank);
  const QuantParams& q = *w.quant;
  const bool per_channel = q.axis == 0 && q.scales.size() == static_cast<size_t>(w.shape[0]);
  const bool per_tensor = q.axis < 0 && q.scales.size() == 1;
  if (!per_channel && !per_tensor)
    return fmt::format("weights '{}' need per-channel (axis 0) or per-tensor scales", w.name);
  for (int32_t zero : q.zero_points)
    if (zero != 0) return fmt::format("weights '{}' must be symmetric (zero point 0)", w.name);
  for (float scale : q.scales)
    if (!(scale > 0.0f) || !std::isfinite(scale)) return fmt::format("weights '{}' have scale {}", w.name, scale);
  if (node.inputs.size() > 2 && !node.inputs[2].empty() && graph.tensor(node.inputs[2]).dtype != DType::i32)
    return std::string("bias must be int32");
  return std::nullopt;
}

// Every input (the first `data_inputs`) and output is an int8 activation.
std::optional<std::string> check_activations(const Graph& graph, const Node& node, size_t data_inputs) {
  for (size_t i = 0; i < std::min(data_inputs, node.inputs.size()); ++i)
    if (auto reason = check_int8_activation(graph, node.inputs[i])) return reason;
  for (const auto& output : node.outputs)
    if (auto reason = check_int8_activation(graph, output)) return reason;
  return std::nullopt;
}

}  // namespace

bool is_int8_node(const Graph& graph, const Node& node) {
  if (node.op == "dequantize" || node.inputs.empty() || node.inputs[0].empty()) return false;
  const TensorInfo& input = graph.tensor(node.inputs[0]);
  return input.dtype == DType::i8 && input.quant.has_value();
}

// ---- conv2d and linear ----------------------------------------------------------------------------

std::optional<std::string> check_conv2d_int8(const Graph& graph, const Node& node) {
  if (auto reason = check_activations(graph, node, 1)) return reason;
  return check_weights(graph, node, 4);
}

void plan_conv2d_int8(NodeContext& ctx) {
  const Node& node = ctx.node();
  const Shape& xs = ctx.input_info(0).shape;
  const Shape& ys = ctx.output_info(0).shape;
  const int64_t n = xs[0], c = xs[1], h = xs[2], w = xs[3], m = ys[1], oh = ys[2], ow = ys[3];
  const Window2d window = conv_window(node, ctx.input_info(1).shape);
  const int64_t group = attr_int(node, "group");
  const int64_t in_blocks = (c + 3) / 4, out_blocks = (m + 3) / 4;
  const Int8Params xq = int8_params(ctx.input_info(0)), yq = int8_params(ctx.output_info(0));
  const auto [lo, hi] = output_bounds(ctx);
  const Tensor& x = ctx.input(0);
  const Tensor y = ctx.output(0);
  const int scale = multipliers(ctx, m);
  std::vector<uint32_t> spec = {u32(window.kernel[0]),
                                u32(window.kernel[1]),
                                u32(window.stride[0]),
                                u32(window.stride[1]),
                                u32(window.dilation[0]),
                                u32(window.dilation[1]),
                                kTile};

  if (is_depthwise(ctx.graph(), node)) {
    const int weights = ctx.prepacked(1) ? ctx.prepacked_weights(1)
                                         : ctx.weights_int8(pack_depthwise_weights_int8(
                                               ctx.constant_int8(1), c, window.kernel[0], window.kernel[1]));
    ctx.dispatch("depthwise_int8", {64, 1, 1}, spec,
                 {NodeContext::fetch(x), NodeContext::write(y), NodeContext::fetch_int1(weights),
                  NodeContext::read(int8_bias(ctx, m, nullptr)), NodeContext::read(scale)},
                 Params()
                     .i(n)
                     .i(in_blocks)
                     .i(h)
                     .i(w)
                     .i(oh)
                     .i(ow)
                     .i(window.pad_begin[0])
                     .i(window.pad_begin[1])
                     .i(c)
                     .i(xq.zero_point)
                     .i(yq.zero_point)
                     .i(lo)
                     .i(hi),
                 linear_groups(ceil_div(ow, kTile) * oh * n * in_blocks));
    return;
  }
  const int64_t kh = window.kernel[0], kw = window.kernel[1];
  const std::vector<int32_t> ranges = conv_weight_ranges(m, c, group, kh * kw);
  const std::vector<int8_t> packed = ctx.prepacked(1)
                                         ? prepacked_int8(ctx, 1)
                                         : pack_conv_weights_int8(ctx.constant_int8(1), m, c, group, kh, kw).weights;
  const std::vector<int32_t> sums = packed_int8_weight_sums(packed, block_starts(ranges), m);
  const int weights = ctx.prepacked(1) ? ctx.prepacked_weights(1) : ctx.weights_int8(packed);
  spec.back() = kDenseTile;
  const ConvGrid grid =
      conv_grid(ceil_div(ow, kDenseTile) * oh, n, out_blocks, group == 1, 1, int8_conv_blocks(kh * kw));
  spec.push_back(grid.blocks_per_invocation);
  ctx.dispatch(ctx.int8_dot() ? "conv2d_int8_dot" : "conv2d_int8", grid.local, spec,
               {NodeContext::fetch(x), NodeContext::write(y), NodeContext::fetch_int4(weights),
                NodeContext::read(int8_bias(ctx, m, &sums)), NodeContext::read(scale),
                NodeContext::read(ctx.weights_words(ranges))},
               Params()
                   .i(n)
                   .i(in_blocks)
                   .i(h)
                   .i(w)
                   .i(out_blocks)
                   .i(oh)
                   .i(ow)
                   .i(window.pad_begin[0])
                   .i(window.pad_begin[1])
                   .i(m)
                   .i(xq.zero_point)
                   .i(yq.zero_point)
                   .i(lo)
                   .i(hi),
               grid.groups);
}

std::optional<std::string> check_linear_int8(const Graph& graph, const Node& node) {
  if (auto reason = check_activations(graph, node, 1)) return reason;
  return check_weights(graph, node, 2);
}

void plan_linear_int8(NodeContext& ctx) {
  const Shape& ws = ctx.input_info(1).shape;
  const int64_t n = ws[0], k = ws[1];
  const int64_t rows = numel(ctx.input_info(0).shape) / std::max<int64_t>(k, 1);
  const int64_t blocks = (n + 3) / 4, k_blocks = (k + 3) / 4;
  const Int8Params xq = int8_params(ctx.input_info(0)), yq = int8_params(ctx.output_info(0));
  const auto [lo, hi] = output_bounds(ctx);
  const std::vector<int8_t> packed =
      ctx.prepacked(1) ? prepacked_int8(ctx, 1) : pack_linear_weights_int8(ctx.constant_int8(1), n, k);
  std::vector<int64_t> first;
  for (int64_t nb = 0; nb < blocks; ++nb) first.push_back(nb * k_blocks);
  const std::vector<int32_t> sums = packed_int8_weight_sums(packed, first, n);
  const int weights = ctx.prepacked(1) ? ctx.prepacked_weights(1) : ctx.weights_int8(packed);
  const Tensor& x = ctx.input(0);
  const Tensor y = ctx.output(0);
  const bool k_packed = x.layout.dims.size() <= 2, n_packed = y.layout.dims.size() <= 2;
  const uint32_t split = linear_split(k_blocks);
  ctx.dispatch(ctx.int8_dot() ? "linear_int8_dot" : "linear_int8", {split, 64 / split, 1}, {split},
               {NodeContext::fetch(x), NodeContext::write(y), NodeContext::fetch_int4(weights),
                NodeContext::read(int8_bias(ctx, n, &sums)), NodeContext::read(multipliers(ctx, n))},
               Params()
                   .i(rows)
                   .i(k)
                   .i(n)
                   .i(blocks)
                   .i(k_packed)
                   .i(n_packed)
                   .i(xq.zero_point)
                   .i(yq.zero_point)
                   .i(lo)
                   .i(hi)
                   .view(x.view())
                   .view(y.view()),
               linear_groups(ceil_div(rows * blocks, 64 / split), 1));
}

// ---- element-wise ---------------------------------------------------------------------------------

std::optional<std::string> check_binary_int8(const Graph& graph, const Node& node) {
  return check_activations(graph, node, 2);
}

std::optional<std::string> check_lookup_int8(const Graph& graph, const Node& node) {
  return check_activations(graph, node, 1);
}

namespace {

// One int8_lookup dispatch: out = table[in], element by element, both with `layout`.
void lookup_dispatch(NodeContext& ctx, const Tensor& in, const Tensor& out, const std::array<int8_t, 256>& table) {
  const PackedLayout& layout = out.layout;
  const auto p = static_cast<size_t>(layout.packed_axis);
  ctx.dispatch("int8_lookup", {64, 1, 1}, {},
               {NodeContext::fetch(in), NodeContext::write(out),
                NodeContext::read(ctx.weights_words(std::vector<int32_t>(table.begin(), table.end())))},
               Params().i(layout.texels).i(layout.strides[p]).i(layout.blocks()).i(layout.dims[p]),
               linear_groups(layout.texels));
}

}  // namespace

void plan_lookup_int8(NodeContext& ctx) {
  // The reference kernel evaluates the node on the 256 int8 values, with the node's parameters.
  TensorInfo x = ctx.input_info(0), y = ctx.output_info(0);
  x.shape = y.shape = {256};
  std::array<int8_t, 256> values{};
  for (int q = -128; q < 128; ++q) values[static_cast<size_t>(q + 128)] = static_cast<int8_t>(q);
  x.data = ConstData::copy_of(values.data(), values.size());
  y.data = ConstData{};
  const std::array<const TensorInfo*, 1> inputs{&x}, outputs{&y};
  const auto results = evaluate_node(ctx.node(), inputs, outputs);
  if (!results)
    fail(ExitCode::failure, "vulkan: node '{}': the reference kernel cannot tabulate {}", ctx.node().name,
         ctx.node().op);
  const auto table = (*results)[0].as<int8_t>();
  std::array<int8_t, 256> entries{};
  std::copy(table.begin(), table.end(), entries.begin());
  lookup_dispatch(ctx, ctx.input(0), ctx.output(0), entries);
}

Tensor int8_input_with_output_parameters(NodeContext& ctx, size_t i) {
  const Int8Params x = int8_params(ctx.input_info(i)), y = int8_params(ctx.output_info(0));
  if (x == y) return ctx.input(i);
  Tensor requantized;
  requantized.layout = ctx.input(i).layout;
  requantized.buffer = ctx.scratch(requantized.layout.texels);
  lookup_dispatch(ctx, ctx.input(i), requantized, int8_requantize_table(x, y));
  return requantized;
}

// ---- pooling ----------------------------------------------------------------------------------------

std::optional<std::string> check_pool2d_int8(const Graph& graph, const Node& node) {
  return check_activations(graph, node, 1);
}

std::optional<std::string> check_global_pool_int8(const Graph& graph, const Node& node) {
  if (auto reason = check_activations(graph, node, 1)) return reason;
  if (auto reason = check_global_pool(graph, node)) return reason;
  const Shape& xs = graph.tensor(node.inputs[0]).shape;
  // The shader's fp32 sums of x - x_zero (at most 255 each) are exact up to 2^16 positions.
  if (numel(Shape(xs.begin() + 2, xs.end())) > 65536) return std::string("int8 average over more than 65536 positions");
  return std::nullopt;
}

// ---- data movement ----------------------------------------------------------------------------------

std::optional<std::string> check_data_movement_int8(const Graph& graph, const Node& node) {
  // concat requantizes the inputs whose parameters differ from its output's (int8_input_with_output_parameters).
  const bool concat = node.op == "concat";
  if (auto reason = check_activations(graph, node, concat ? node.inputs.size() : 1)) return reason;
  if (!concat) {
    const Int8Params first = int8_params(graph.tensor(node.inputs[0]));
    for (const auto& output : node.outputs)
      if (int8_params(graph.tensor(output)) != first)
        return fmt::format("tensor '{}' has other quantization parameters than '{}'", output, node.inputs[0]);
  }
  const VulkanKernel* kernel = find_vulkan_kernel(node.op);
  return kernel->check != nullptr ? kernel->check(graph, node) : std::nullopt;
}

}  // namespace mt::vulkan
