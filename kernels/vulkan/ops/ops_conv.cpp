// conv2d (general, depthwise and pointwise paths) and conv_transpose2d on packed NCHW tensors, with
// their weights packed at planning (weight_layout.h) or by mt-prepack (prepack.h).
#include <utility>
#include <vector>

#include "kernels/vulkan/ops/conv_grid.h"
#include "kernels/vulkan/ops/conv_winograd.h"
#include "kernels/vulkan/ops/ops.h"
#include "kernels/vulkan/plan/prepack.h"
#include "kernels/vulkan/plan/weight_layout.h"
#include "lib/ops/conv_geometry.h"
#include "lib/ops/registry.h"

namespace mt::vulkan {
namespace {

constexpr uint32_t kTile = 4;  // output pixels per invocation of conv2d, depthwise and pointwise
// Pointwise convs over planes of at least 56x56 pixels take 8 per invocation: each weight texel
// then feeds twice the pixels (lavapipe, CPU time: 0.83x on 64 -> 256 at 56x56, 0.89x on 16 -> 96 at
// 112x112; the same at 14x14, where fewer invocations would be left).
constexpr int64_t kWidePlane = 56 * 56;


struct ConvShapes {
  int64_t n, c, h, w, m, oh, ow;
};

ConvShapes shapes(NodeContext& ctx) {
  const Shape& x = ctx.input_info(0).shape;
  const Shape& y = ctx.output_info(0).shape;
  return {x[0], x[1], x[2], x[3], y[1], y[2], y[3]};
}

// The packed weights and their ranges (weight_layout.h), from the model when prepacked.
std::pair<int, int> conv_weights(NodeContext& ctx, const ConvShapes& s, int64_t group, const Window2d& window,
                                 bool transposed) {
  const int64_t kh = window.kernel[0], kw = window.kernel[1];
  if (ctx.prepacked(1)) return {ctx.prepacked_weights(1), ctx.weights_words(conv_weight_ranges(s.m, s.c, group, kh * kw))};
  const ConvWeights packed = pack_conv_weights(ctx.constant(1), s.m, s.c, group, kh, kw, transposed);
  return {ctx.weights(packed.weights), ctx.weights_words(packed.ranges)};
}

std::optional<std::string> check_constant_weights(const Graph& graph, const Node& node) {
  if (auto reason = require_constant(graph, node, 1, "weight")) return reason;
  return require_constant(graph, node, 2, "bias");
}

}  // namespace

std::optional<std::string> check_conv2d(const Graph& graph, const Node& node) { return check_constant_weights(graph, node); }

void plan_conv2d(NodeContext& ctx) {
  const Node& node = ctx.node();
  const ConvShapes s = shapes(ctx);
  const Shape& wshape = ctx.input_info(1).shape;
  const Window2d window = conv_window(node, wshape);
  const int64_t group = attr_int(node, "group");
  const auto [lo, hi] = activation_bounds(node);
  const Tensor& x = ctx.input(0);
  const Tensor y = ctx.output(0);
  const int bias = bias_weights(ctx, s.m);
  const int64_t in_blocks = (s.c + 3) / 4, out_blocks = (s.m + 3) / 4;
  const std::vector<uint32_t> geometry = {u32(window.kernel[0]), u32(window.kernel[1]), u32(window.stride[0]),
                                          u32(window.stride[1]), u32(window.dilation[0]), u32(window.dilation[1]), kTile};

  if (is_depthwise(ctx.graph(), node)) {
    const int weights = ctx.prepacked(1)
                            ? ctx.prepacked_weights(1)
                            : ctx.weights(pack_depthwise_weights(ctx.constant(1), s.c, window.kernel[0], window.kernel[1]));
    ctx.dispatch("depthwise", {64, 1, 1}, geometry,
                 {NodeContext::fetch(x), NodeContext::write(y), NodeContext::fetch(weights), NodeContext::read(bias)},
                 Params().i(s.n).i(in_blocks).i(s.h).i(s.w).i(s.oh).i(s.ow).i(window.pad_begin[0]).i(window.pad_begin[1])
                     .i(s.c).f(lo).f(hi),
                 linear_groups(ceil_div(s.ow, kTile) * s.oh * s.n * in_blocks));
    return;
  }
  if (use_winograd(ctx.graph(), node)) {
    plan_conv2d_winograd(ctx);
    return;
  }
  const auto [weights, ranges] = conv_weights(ctx, s, group, window, false);
  const bool pointwise = window.kernel == std::array<int64_t, 2>{1, 1} && window.stride == std::array<int64_t, 2>{1, 1} &&
                         window.pad_begin == std::array<int64_t, 2>{0, 0} && window.pad_end == std::array<int64_t, 2>{0, 0};
  const uint32_t pw_tile = s.h * s.w >= kWidePlane ? 2 * kTile : kTile;
  const int64_t pixel_tiles = pointwise ? ceil_div(s.h * s.w, pw_tile) : ceil_div(s.ow, kTile) * s.oh;
  const ConvGrid grid = conv_grid(pixel_tiles, s.n, out_blocks, group == 1);
  if (pointwise) {
    ctx.dispatch("pointwise", grid.local, {pw_tile, grid.blocks_per_invocation},
                 {NodeContext::fetch(x), NodeContext::write(y), NodeContext::fetch(weights), NodeContext::read(bias),
                  NodeContext::read(ranges)},
                 Params().i(s.n).i(in_blocks).i(s.h * s.w).i(out_blocks).i(s.m).f(lo).f(hi), grid.groups);
    return;
  }
  std::vector<uint32_t> spec = geometry;
  spec.push_back(grid.blocks_per_invocation);
  ctx.dispatch("conv2d", grid.local, spec,
               {NodeContext::fetch(x), NodeContext::write(y), NodeContext::fetch(weights), NodeContext::read(bias),
                NodeContext::read(ranges)},
               Params().i(s.n).i(in_blocks).i(s.h).i(s.w).i(out_blocks).i(s.oh).i(s.ow).i(window.pad_begin[0])
                   .i(window.pad_begin[1]).i(s.m).f(lo).f(hi),
               grid.groups);
}

std::optional<std::string> check_conv_transpose2d(const Graph& graph, const Node& node) {
  return check_constant_weights(graph, node);
}

void plan_conv_transpose2d(NodeContext& ctx) {
  const Node& node = ctx.node();
  const ConvShapes s = shapes(ctx);
  const Window2d window = conv_window(node, ctx.input_info(1).shape);
  const int64_t group = attr_int(node, "group");
  const auto [lo, hi] = activation_bounds(node);
  const Tensor& x = ctx.input(0);
  const Tensor y = ctx.output(0);
  const auto [weights, ranges] = conv_weights(ctx, s, group, window, true);
  const int bias = bias_weights(ctx, s.m);
  const int64_t in_blocks = (s.c + 3) / 4, out_blocks = (s.m + 3) / 4;
  ctx.dispatch("conv_transpose2d", {8, 8, 1},
               {u32(window.kernel[0]), u32(window.kernel[1]), u32(window.stride[0]), u32(window.stride[1]),
                u32(window.dilation[0]), u32(window.dilation[1])},
               {NodeContext::read(x), NodeContext::write(y), NodeContext::read(weights), NodeContext::read(bias),
                NodeContext::read(ranges)},
               Params().i(s.n).i(in_blocks).i(s.h).i(s.w).i(out_blocks).i(s.oh).i(s.ow).i(window.pad_begin[0])
                   .i(window.pad_begin[1]).i(s.m).f(lo).f(hi),
               {ceil_div(s.ow, 8), ceil_div(s.oh, 8), u32(s.n * out_blocks)});
}

}  // namespace mt::vulkan
