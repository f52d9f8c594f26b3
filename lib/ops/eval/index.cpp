// Reference kernels of the index family: adapters from a node to lib/ops/index_loops.h (and
// non_max_suppression.h), the loops the cpu backend runs too. They move elements of any dtype (the scatter reductions:
// float32, int32 and int64).
#include <optional>
#include <vector>

#include "lib/ops/eval/reference.h"
#include "lib/ops/index_loops.h"
#include "lib/ops/non_max_suppression.h"
#include "lib/ops/registry.h"

namespace mt::reference {
namespace {

size_t node_axis(const Node& node, size_t rank) {
  const int64_t axis = attr_int(node, "axis");
  return static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(rank) : axis);
}

IndexData index_data(const ConstView& view) { return {view.data, view.info->dtype == DType::i64}; }

ScatterReduction node_reduction(const Node& node) { return *scatter_reduction(attr_string(node, "reduction")); }

void trilu_kernel(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  const TriluParams params = trilu_params(in[0].info->shape, in[0].info->dtype, attr_int(node, "upper") != 0);
  const int64_t k = in.size() > 1 && in[1].info != nullptr ? in[1].as<int64_t>()[0] : 0;
  trilu(params, k, in[0].data, out[0].data);
}

void tile_kernel(const Node&, std::span<const ConstView> in, std::span<const MutView> out) {
  tile({in[0].info->shape, out[0].info->shape, dtype_size(in[0].info->dtype)}, in[0].data, out[0].data);
}

void gather_elements_kernel(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  const Shape& data = in[0].info->shape;
  gather_elements({data, in[1].info->shape, node_axis(node, data.size()), dtype_size(in[0].info->dtype)}, node.name,
                  in[0].data, index_data(in[1]), out[0].data);
}

void scatter_elements_kernel(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  const Shape& data = in[0].info->shape;
  scatter_elements({data, in[1].info->shape, node_axis(node, data.size()), in[0].info->dtype, node_reduction(node)},
                   node.name, in[0].data, index_data(in[1]), in[2].data, out[0].data);
}

void gather_nd_kernel(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  const NdParams params = gather_nd_params(in[0].info->shape, in[1].info->shape,
                                           static_cast<size_t>(attr_int(node, "batch_dims")), in[0].info->dtype);
  gather_nd(params, node.name, in[0].data, index_data(in[1]), out[0].data);
}

void scatter_nd_kernel(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  const NdParams params =
      scatter_nd_params(in[0].info->shape, in[1].info->shape, in[0].info->dtype, node_reduction(node));
  scatter_nd(params, node.name, in[0].data, index_data(in[1]), in[2].data, out[0].data);
}

NmsParams nms_params(const Node& node, const Shape& boxes, const Shape& scores) {
  return {.batches = boxes[0],
          .classes = scores[1],
          .boxes = boxes[1],
          .max_per_class = attr_int(node, "max_output_boxes_per_class"),
          .center_point_box = attr_int(node, "center_point_box") != 0};
}

void non_max_suppression_kernel(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  const NmsParams params = nms_params(node, in[0].info->shape, in[1].info->shape);
  std::vector<int64_t> scratch((nms_scratch_bytes(params) + sizeof(int64_t) - 1) / sizeof(int64_t));
  const float iou = in.size() > 2 && in[2].info != nullptr ? *in[2].as<float>() : 0.0f;
  const std::optional<float> score =
      in.size() > 3 && in[3].info != nullptr ? std::optional<float>(*in[3].as<float>()) : std::nullopt;
  *out[1].as<int64_t>() = non_max_suppression(params, in[0].as<float>(), in[1].as<float>(), iou, score,
                                              out[0].as<int64_t>(), scratch.data());
}

void one_hot_kernel(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  const Shape& indices = in[0].info->shape;
  int64_t axis = attr_int(node, "axis");
  if (axis < 0) axis += static_cast<int64_t>(indices.size()) + 1;
  const OneHotParams params =
      one_hot_params(indices, in[0].info->dtype, attr_int(node, "depth"), static_cast<size_t>(axis), in[1].info->dtype);
  one_hot(params, in[0].data, in[1].data, out[0].data);
}

}  // namespace

void register_index_kernels(KernelTable& table) {
  table.add("trilu", trilu_kernel);
  table.add("tile", tile_kernel);
  table.add("gather_elements", gather_elements_kernel);
  table.add("gather_nd", gather_nd_kernel);
  table.add("scatter_elements", scatter_elements_kernel);
  table.add("scatter_nd", scatter_nd_kernel);
  table.add("one_hot", one_hot_kernel);
  table.add("non_max_suppression", non_max_suppression_kernel);
}

}  // namespace mt::reference
