// Window pooling (max_pool2d, avg_pool2d) and global pooling on packed NCHW tensors.
#include "kernels/vulkan/ops/ops.h"
#include "lib/ops/conv_geometry.h"
#include "lib/ops/registry.h"

namespace mt::vulkan {

std::optional<std::string> check_pool2d(const Graph&, const Node&) { return std::nullopt; }

void plan_pool2d(NodeContext& ctx) {
  const Node& node = ctx.node();
  const Window2d window = pool_window(node);
  const bool average = node.op == "avg_pool2d";
  const Shape& xs = ctx.input_info(0).shape;
  const Shape& ys = ctx.output_info(0).shape;
  const Tensor& x = ctx.input(0);
  const Tensor y = ctx.output(0);
  const int64_t planes = xs[0] * ((xs[1] + 3) / 4);
  auto u32 = [](int64_t v) { return static_cast<uint32_t>(v); };
  ctx.dispatch("pool2d", {8, 8, 1},
               {average ? 1u : 0u, u32(window.kernel[0]), u32(window.kernel[1]), u32(window.stride[0]),
                u32(window.stride[1]), u32(window.dilation[0]), u32(window.dilation[1])},
               {NodeContext::read(x), NodeContext::write(y)},
               Params().i(planes).i(xs[2]).i(xs[3]).i(ys[2]).i(ys[3]).i(window.pad_begin[0]).i(window.pad_begin[1])
                   .i(window.pad_end[0]).i(window.pad_end[1]).i(average ? attr_int(node, "count_include_pad") : 0),
               {u32((ys[3] + 7) / 8), u32((ys[2] + 7) / 8), u32(planes)});
}

std::optional<std::string> check_global_pool(const Graph& graph, const Node& node) {
  if (graph.tensor(node.inputs.at(0)).shape.size() < 3) return "input of rank below 3 not supported";
  return std::nullopt;
}

void plan_global_pool(NodeContext& ctx) {
  const Shape& xs = ctx.input_info(0).shape;
  const Tensor& x = ctx.input(0);
  const Tensor y = ctx.output(0);
  const int64_t planes = xs[0] * ((xs[1] + 3) / 4);
  const int64_t spatial = numel(Shape(xs.begin() + 2, xs.end()));
  ctx.dispatch("global_pool", {64, 1, 1}, {ctx.node().op == "global_max_pool" ? 1u : 0u},
               {NodeContext::read(x), NodeContext::write(y)}, Params().i(planes).i(spatial), linear_groups(planes, 1));
}

}  // namespace mt::vulkan
