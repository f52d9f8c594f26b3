// Window pooling (max_pool2d, avg_pool2d) and global pooling on packed NCHW tensors, float32 and
// int8 (the shaders' int8 variants, for nodes of the int8 table).
#include "kernels/vulkan/ops/conv_grid.h"
#include "kernels/vulkan/ops/ops.h"
#include "lib/ops/conv_geometry.h"
#include "lib/ops/registry.h"

namespace mt::vulkan {
namespace {

constexpr int64_t kSmallPlane = 1024;  // positions global_pool reduces in one invocation

}  // namespace

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
  const bool int8 = is_int8_node(ctx.graph(), node);
  Params params;
  params.i(planes)
      .i(xs[2])
      .i(xs[3])
      .i(ys[2])
      .i(ys[3])
      .i(window.pad_begin[0])
      .i(window.pad_begin[1])
      .i(window.pad_end[0])
      .i(window.pad_end[1])
      .i(average ? attr_int(node, "count_include_pad") : 0);
  if (int8) {
    const Int8Params xq = int8_params(ctx.input_info(0)), yq = int8_params(ctx.output_info(0));
    params.i(xq.zero_point).i(yq.zero_point);
    if (average) params.f(xq.scale).f(yq.scale);
    else params.i(xq == yq ? 1 : 0).f(xq.scale / yq.scale);
    params.i((xs[1] + 3) / 4).i(xs[1]);
  }
  const uint32_t op = (average ? 1u : 0u) + (int8 ? 2u : 0u);
  ctx.dispatch("pool2d", {8, 8, 1},
               {op, u32(window.kernel[0]), u32(window.kernel[1]), u32(window.stride[0]), u32(window.stride[1]),
                u32(window.dilation[0]), u32(window.dilation[1])},
               {NodeContext::fetch(x), NodeContext::write(y)}, params,
               {ceil_div(ys[3], 8), ceil_div(ys[2], 8), u32(planes)});
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
  const bool int8 = is_int8_node(ctx.graph(), ctx.node());
  Params params;
  params.i(planes).i(spatial);
  if (int8) {  // requantize(sum of x - x_zero, x_scale / (count y_scale)), the multiplier formed as the reference does
    const Int8Params xq = int8_params(ctx.input_info(0)), yq = int8_params(ctx.output_info(0));
    params.i(xq.zero_point)
        .i(yq.zero_point)
        .f(xq.scale / (static_cast<float>(spatial) * yq.scale))
        .i((xs[1] + 3) / 4)
        .i(xs[1]);
  }
  const uint32_t op = int8 ? 2u : ctx.node().op == "global_max_pool" ? 1u : 0u;
  // Planes of up to 1024 positions are reduced by one invocation each (measured on lavapipe, where a
  // workgroup's barriers cost more than such a plane's sum), larger ones by a workgroup.
  const bool per_invocation = spatial <= kSmallPlane;
  ctx.dispatch("global_pool", {64, 1, 1}, {op, per_invocation ? 1u : 0u},
               {NodeContext::fetch(x), NodeContext::write(y)}, params,
               per_invocation ? linear_groups(planes) : linear_groups(planes, 1));
}

}  // namespace mt::vulkan
