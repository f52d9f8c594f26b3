// Reductions over any axes, softmax / log_softmax along one axis, and layer_norm: one workgroup per
// output element or row, accumulating in fp32 (shaders/reduce.comp, softmax.comp, layer_norm.comp).
#include <map>

#include "kernels/vulkan/ops/ops.h"
#include "lib/ops/broadcast.h"
#include "lib/ops/registry.h"

namespace mt::vulkan {
namespace {

// Axis `axis` (negative counts from the end) of a rank, or -1.
int axis_of(int64_t axis, size_t rank) {
  const auto normalized = normalize_axis(axis, rank);
  return normalized ? *normalized : -1;
}

}  // namespace

std::optional<std::string> check_reduce(const Graph&, const Node&) { return std::nullopt; }

void plan_reduce(NodeContext& ctx) {
  const Node& node = ctx.node();
  const Shape& xs = ctx.input_info(0).shape;
  const Tensor& x = ctx.input(0);
  const Tensor y = ctx.output(0);
  const size_t rank = x.layout.dims.size();  // a scalar is stored as [1]
  std::vector<bool> reduced(rank, xs.empty());
  const auto& axes = attr_ints(node, "axes");
  if (axes.empty()) reduced.assign(rank, true);
  for (int64_t axis : axes)
    if (!xs.empty()) reduced[static_cast<size_t>(axis_of(axis, rank))] = true;
  std::vector<int64_t> kept_axes, reduced_axes;
  int64_t count = 1;
  for (size_t a = 0; a < rank; ++a) {
    (reduced[a] ? reduced_axes : kept_axes).push_back(static_cast<int64_t>(a));
    if (reduced[a]) count *= x.layout.dims[a];
  }
  Params params;
  const int64_t outputs = numel(y.layout.dims);
  params.i(outputs).i(count).i(static_cast<int64_t>(kept_axes.size())).i(static_cast<int64_t>(reduced_axes.size()));
  for (const auto* list : {&kept_axes, &reduced_axes})
    for (size_t k = 0; k < static_cast<size_t>(kMaxRank); ++k) params.i(k < list->size() ? (*list)[k] : 0);
  params.view(x.view()).view(y.view());
  static const std::map<std::string_view, uint32_t> kOps = {{"reduce_mean", 0}, {"reduce_sum", 1}, {"reduce_max", 2}, {"reduce_min", 3}};
  ctx.dispatch("reduce", {64, 1, 1}, {kOps.at(node.op)}, {NodeContext::read(x), NodeContext::write(y)}, params,
               linear_groups(outputs, 1));
}

std::optional<std::string> check_softmax(const Graph& graph, const Node& node) {
  if (graph.tensor(node.inputs.at(0)).shape.empty()) return "softmax of a scalar not supported";
  return std::nullopt;
}

void plan_softmax(NodeContext& ctx) {
  const Node& node = ctx.node();
  const Tensor& x = ctx.input(0);
  const Tensor y = ctx.output(0);
  const int axis = axis_of(attr_int(node, "axis"), x.layout.dims.size());
  const int64_t length = x.layout.dims[static_cast<size_t>(axis)];
  const int64_t rows = numel(x.layout.dims) / std::max<int64_t>(length, 1);
  ctx.dispatch("softmax", {64, 1, 1}, {node.op == "log_softmax" ? 1u : 0u}, {NodeContext::read(x), NodeContext::write(y)},
               Params().i(rows).i(axis).i(length).view(x.view()), linear_groups(rows, 1));
}

std::optional<std::string> check_layer_norm(const Graph& graph, const Node& node) {
  if (graph.tensor(node.inputs.at(0)).shape.empty()) return "layer_norm of a scalar not supported";
  if (auto reason = require_constant(graph, node, 1, "scale")) return reason;
  return require_constant(graph, node, 2, "bias");
}

void plan_layer_norm(NodeContext& ctx) {
  const Node& node = ctx.node();
  const Shape& xs = ctx.input_info(0).shape;
  const int axis = axis_of(attr_int(node, "axis"), xs.size());
  const Shape normalized(xs.begin() + axis, xs.end());
  const int64_t inner = numel(normalized);
  // Scale and bias broadcast to the normalized axes, in fp32: they multiply fp32 statistics.
  auto expanded = [&](size_t i, float fill) {
    std::vector<float> values(static_cast<size_t>(inner), fill);
    if (!ctx.has_input(i)) return values;
    const Shape& shape = ctx.input_info(i).shape;
    const auto strides = broadcast_strides(shape, normalized);
    const float* data = ctx.constant(i);
    for (int64_t e = 0; e < inner; ++e) {
      int64_t rest = e, offset = 0;
      for (size_t a = normalized.size(); a-- > 0;) {
        offset += (rest % normalized[a]) * strides[a];
        rest /= normalized[a];
      }
      values[static_cast<size_t>(e)] = data[offset];
    }
    return values;
  };
  const int scale = ctx.weights_fp32(expanded(1, 1.0f));
  const int bias = ctx.weights_fp32(expanded(2, 0.0f));
  const Tensor& x = ctx.input(0);
  const Tensor y = ctx.output(0);
  const int64_t rows = numel(xs) / std::max<int64_t>(inner, 1);
  ctx.dispatch("layer_norm", {64, 1, 1}, {},
               {NodeContext::read(x), NodeContext::write(y), NodeContext::read(scale), NodeContext::read(bias)},
               Params().i(rows).i(inner).f(attr_float(node, "epsilon")).view(x.view()), linear_groups(rows, 1));
}

}  // namespace mt::vulkan
