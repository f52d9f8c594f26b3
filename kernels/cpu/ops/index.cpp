// The index family (trilu, tile, gather_elements, gather_nd, scatter_elements, scatter_nd,
// one_hot, non_max_suppression): lib/ops/index_loops.h's loops, the reference kernels' own so the backends agree
// exactly, on row-major tensors, with their parameters computed once here. Indices are checked on
// every run (they may be computed), before anything is written.
#include <cstdint>
#include <string>

#include "kernels/cpu/ops/ops.h"
#include "kernels/cpu/plan/op_util.h"
#include "lib/core/error.h"
#include "lib/ops/index_loops.h"
#include "lib/ops/non_max_suppression.h"

namespace mt::cpu {
namespace {

Value row_major_input(NodeContext& c, size_t i) { return c.input(i, identity_layout(c.input_info(i).shape.size())); }
Value row_major_output(NodeContext& c) { return c.output(0, identity_layout(c.output_info(0).shape.size())); }

size_t node_axis(NodeContext& c) {
  return static_cast<size_t>(axis_of(c.node(), attr_int(c.node(), "axis"), c.input_info(0).shape.size()));
}

ScatterReduction node_reduction(const Node& node) { return *scatter_reduction(attr_string(node, "reduction")); }

// Scatter reductions compute on float32, int32 and int64; plain scatters move any dtype.
std::optional<std::string> check_scatter(const Graph& graph, const Node& node) {
  if (node_reduction(node) == ScatterReduction::none) return std::nullopt;
  return check_dtypes(graph, node, {DType::f32, DType::i32, DType::i64}, 1);
}

}  // namespace

std::optional<std::string> check_trilu(const Graph&, const Node&) { return std::nullopt; }

void plan_trilu(NodeContext& c) {
  const Value x = row_major_input(c, 0);
  const TriluParams params = trilu_params(x.shape, x.dtype, attr_int(c.node(), "upper") != 0);
  const Value y = row_major_output(c);
  if (!c.has_input(1)) {
    c.add_kernel({x, y}, [params](Pointers p, ThreadPool*) { trilu(params, 0, p[0], p[1]); });
    return;
  }
  // k is read on every run: ONNX passes it as a tensor, which may be computed.
  const Value k = c.input(1);
  c.add_kernel({x, k, y},
               [params](Pointers p, ThreadPool*) { trilu(params, *static_cast<const int64_t*>(p[1]), p[0], p[2]); });
}

std::optional<std::string> check_tile(const Graph&, const Node&) { return std::nullopt; }

void plan_tile(NodeContext& c) {
  const Value x = row_major_input(c, 0);
  const Value y = row_major_output(c);
  const TileParams params{x.shape, y.shape, dtype_size(x.dtype)};
  c.add_kernel({x, y}, [params](Pointers p, ThreadPool*) { tile(params, p[0], p[1]); });
}

std::optional<std::string> check_gather_elements(const Graph&, const Node&) { return std::nullopt; }

void plan_gather_elements(NodeContext& c) {
  const Value data = row_major_input(c, 0);
  const Value indices = row_major_input(c, 1);
  const Value y = row_major_output(c);
  const GatherElementsParams params{data.shape, indices.shape, node_axis(c), dtype_size(data.dtype)};
  const bool wide = indices.dtype == DType::i64;
  const std::string name = c.node().name;
  c.add_kernel({data, indices, y}, [params, wide, name](Pointers p, ThreadPool*) {
    gather_elements(params, name, p[0], {p[1], wide}, p[2]);
  });
}

std::optional<std::string> check_scatter_elements(const Graph& graph, const Node& node) {
  return check_scatter(graph, node);
}

void plan_scatter_elements(NodeContext& c) {
  const Value data = row_major_input(c, 0);
  const Value indices = row_major_input(c, 1);
  const Value updates = row_major_input(c, 2);
  const Value y = row_major_output(c);
  const ScatterElementsParams params{data.shape, indices.shape, node_axis(c), data.dtype, node_reduction(c.node())};
  const bool wide = indices.dtype == DType::i64;
  const std::string name = c.node().name;
  c.add_kernel({data, indices, updates, y}, [params, wide, name](Pointers p, ThreadPool*) {
    scatter_elements(params, name, p[0], {p[1], wide}, p[2], p[3]);
  });
}

std::optional<std::string> check_gather_nd(const Graph&, const Node&) { return std::nullopt; }

void plan_gather_nd(NodeContext& c) {
  const Value data = row_major_input(c, 0);
  const Value indices = row_major_input(c, 1);
  const Value y = row_major_output(c);
  const NdParams params =
      gather_nd_params(data.shape, indices.shape, static_cast<size_t>(attr_int(c.node(), "batch_dims")), data.dtype);
  const bool wide = indices.dtype == DType::i64;
  const std::string name = c.node().name;
  c.add_kernel({data, indices, y}, [params, wide, name](Pointers p, ThreadPool*) {
    gather_nd(params, name, p[0], {p[1], wide}, p[2]);
  });
}

std::optional<std::string> check_scatter_nd(const Graph& graph, const Node& node) { return check_scatter(graph, node); }

void plan_scatter_nd(NodeContext& c) {
  const Value data = row_major_input(c, 0);
  const Value indices = row_major_input(c, 1);
  const Value updates = row_major_input(c, 2);
  const Value y = row_major_output(c);
  const NdParams params = scatter_nd_params(data.shape, indices.shape, data.dtype, node_reduction(c.node()));
  const bool wide = indices.dtype == DType::i64;
  const std::string name = c.node().name;
  c.add_kernel({data, indices, updates, y}, [params, wide, name](Pointers p, ThreadPool*) {
    scatter_nd(params, name, p[0], {p[1], wide}, p[2], p[3]);
  });
}

std::optional<std::string> check_one_hot(const Graph&, const Node&) { return std::nullopt; }

void plan_one_hot(NodeContext& c) {
  const Value indices = row_major_input(c, 0);
  const Value values = row_major_input(c, 1);
  const Value y = row_major_output(c);
  const size_t axis = static_cast<size_t>(axis_of(c.node(), attr_int(c.node(), "axis"), indices.shape.size() + 1));
  const OneHotParams params =
      one_hot_params(indices.shape, indices.dtype, attr_int(c.node(), "depth"), axis, values.dtype);
  c.add_kernel({indices, values, y}, [params](Pointers p, ThreadPool*) { one_hot(params, p[0], p[1], p[2]); });
}

std::optional<std::string> check_non_max_suppression(const Graph&, const Node&) { return std::nullopt; }

void plan_non_max_suppression(NodeContext& c) {
  const Node& node = c.node();
  const Shape& boxes_shape = c.input_info(0).shape;
  const NmsParams params{.batches = boxes_shape[0],
                         .classes = c.input_info(1).shape[1],
                         .boxes = boxes_shape[1],
                         .max_per_class = attr_int(node, "max_output_boxes_per_class"),
                         .center_point_box = attr_int(node, "center_point_box") != 0};
  // Pointers: boxes, scores, the thresholds given (iou, score), selected, count, scratch.
  std::vector<Value> values{row_major_input(c, 0), row_major_input(c, 1)};
  const bool has_iou = node.inputs.size() > 2 && !node.inputs[2].empty();
  const bool has_score = node.inputs.size() > 3 && !node.inputs[3].empty();
  if (has_iou) values.push_back(row_major_input(c, 2));
  if (has_score) values.push_back(row_major_input(c, 3));
  const size_t out = values.size();
  values.push_back(row_major_output(c));
  values.push_back(c.output(1, identity_layout(0)));
  values.push_back(c.scratch(std::max<size_t>(8, nms_scratch_bytes(params))));
  c.add_kernel(values, [params, has_iou, has_score, out](Pointers p, ThreadPool*) {
    const float iou = has_iou ? *static_cast<const float*>(p[2]) : 0.0f;
    const std::optional<float> score =
        has_score ? std::optional<float>(*static_cast<const float*>(p[has_iou ? 3 : 2])) : std::nullopt;
    *static_cast<int64_t*>(p[out + 1]) =
        non_max_suppression(params, static_cast<const float*>(p[0]), static_cast<const float*>(p[1]), iou, score,
                            static_cast<int64_t*>(p[out]), p[out + 2]);
  });
}

}  // namespace mt::cpu
