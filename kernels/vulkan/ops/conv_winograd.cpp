#include "kernels/vulkan/ops/conv_winograd.h"

#include <vector>

#include "kernels/vulkan/ops/conv_grid.h"
#include "kernels/vulkan/ops/ops.h"
#include "kernels/vulkan/plan/weight_layout.h"
#include "lib/ops/conv_geometry.h"
#include "lib/ops/registry.h"

namespace mt::vulkan {
namespace {

constexpr int64_t kWinogradMinChannels = 16;
constexpr uint32_t kTile = 4;  // tiles per invocation of winograd_gemm

}  // namespace

bool use_winograd(const Graph& graph, const Node& node) {
  const Shape& w = graph.tensor(node.inputs.at(1)).shape;
  if (w.size() != 4 || w[2] != 3 || w[3] != 3 || attr_int(node, "group") != 1) return false;
  const Window2d window = conv_window(node, w);
  if (window.stride != std::array<int64_t, 2>{1, 1} || window.dilation != std::array<int64_t, 2>{1, 1}) return false;
  return w[0] >= kWinogradMinChannels && w[1] >= kWinogradMinChannels;
}

void plan_conv2d_winograd(NodeContext& ctx) {
  const Node& node = ctx.node();
  const Shape& xs = ctx.input_info(0).shape;
  const Shape& ys = ctx.output_info(0).shape;
  const int64_t n = xs[0], c = xs[1], h = xs[2], w = xs[3], m = ys[1], oh = ys[2], ow = ys[3];
  const Window2d window = conv_window(node, ctx.input_info(1).shape);
  const auto [lo, hi] = activation_bounds(node);
  const int64_t in_blocks = (c + 3) / 4, out_blocks = (m + 3) / 4;
  const int64_t tiles_down = (oh + 1) / 2, tiles_across = (ow + 1) / 2, tiles = tiles_down * tiles_across;

  // The transformed weights, from the row-major constant or from a model prepacked for the direct
  // shader (its packed weights unpacked first).
  const std::vector<float> row_major =
      ctx.prepacked(1) ? unpack_conv_weights(ctx.prepacked_values(1).data(), m, c, 3, 3)
                       : std::vector<float>(ctx.constant(1), ctx.constant(1) + m * c * 9);
  const int u = ctx.weights(pack_winograd_weights(row_major.data(), m, c));
  const int bias = bias_weights(ctx, m);
  const Tensor& x = ctx.input(0);
  const Tensor y = ctx.output(0);
  const int v = ctx.scratch(16 * n * in_blocks * tiles);
  const int products = ctx.scratch(16 * n * out_blocks * tiles);

  ctx.dispatch("winograd_input", {64, 1, 1}, {}, {NodeContext::fetch(x), NodeContext::write(v)},
               Params().i(n).i(in_blocks).i(h).i(w).i(tiles_down).i(tiles_across).i(window.pad_begin[0])
                   .i(window.pad_begin[1]),
               {ceil_div(tiles, 64), u32(n * in_blocks), 1});

  const ConvGrid grid = conv_grid(ceil_div(tiles, kTile), n, out_blocks, true, 16);  // z: the 16 positions
  ctx.dispatch("winograd_gemm", grid.local, {kTile, grid.blocks_per_invocation},
               {NodeContext::fetch(v), NodeContext::write(products), NodeContext::fetch(u)},
               Params().i(n).i(in_blocks).i(tiles).i(out_blocks), grid.groups);

  ctx.dispatch("winograd_output", {64, 1, 1}, {},
               {NodeContext::fetch(products), NodeContext::write(y), NodeContext::read(bias)},
               Params().i(n).i(out_blocks).i(tiles_down).i(tiles_across).i(oh).i(ow).i(m).f(lo).f(hi),
               {ceil_div(tiles, 64), u32(n * out_blocks), 1});
}

}  // namespace mt::vulkan
