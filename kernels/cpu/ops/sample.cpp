// The sample family (grid_sample, roi_align, max_unpool): lib/ops/sample_loops.h's loops, the
// reference kernels' own so the backends agree exactly, on row-major NCHW tensors, with their
// parameters computed once here. grid_sample splits its output rows and roi_align its regions
// over the thread pool; indices are checked on every run (they are computed), before any write.
#include <string>

#include "kernels/cpu/ops/ops.h"
#include "kernels/cpu/plan/op_util.h"
#include "kernels/cpu/plan/parallel.h"
#include "lib/ops/sample_loops.h"

namespace mt::cpu {
namespace {

Value row_major_input(NodeContext& c, size_t i) { return c.input(i, identity_layout(c.input_info(i).shape.size())); }
Value row_major_output(NodeContext& c) { return c.output(0, identity_layout(c.output_info(0).shape.size())); }

// float32 data and outputs; the index operand (the last input) int64 or int32.
std::optional<std::string> check_float_with_indices(const Graph& graph, const Node& node, size_t index_input) {
  if (auto reason = check_dtypes(graph, node, {DType::f32}, index_input)) return reason;
  const DType index = graph.tensor(node.inputs[index_input]).dtype;
  if (index != DType::i64 && index != DType::i32)
    return fmt::format("indices dtype {} not supported", dtype_name(index));
  return std::nullopt;
}

}  // namespace

std::optional<std::string> check_grid_sample(const Graph& graph, const Node& node) { return check_float(graph, node); }

void plan_grid_sample(NodeContext& c) {
  const Value x = row_major_input(c, 0);
  const Value grid = row_major_input(c, 1);
  const Value y = row_major_output(c);
  const GridSampleParams params = grid_sample_params(c.node(), x.shape, grid.shape);
  c.add_kernel({x, grid, y}, [params](Pointers p, ThreadPool* pool) {
    parallel_chunks(pool, static_cast<size_t>(params.batch * params.out_height), 1, [&](size_t begin, size_t end) {
      grid_sample_rows(params, static_cast<const float*>(p[0]), static_cast<const float*>(p[1]),
                       static_cast<float*>(p[2]), static_cast<int64_t>(begin), static_cast<int64_t>(end));
    });
  });
}

std::optional<std::string> check_roi_align(const Graph& graph, const Node& node) {
  return check_float_with_indices(graph, node, 2);
}

void plan_roi_align(NodeContext& c) {
  const Value x = row_major_input(c, 0);
  const Value rois = row_major_input(c, 1);
  const Value batch = row_major_input(c, 2);
  const Value y = row_major_output(c);
  const RoiAlignParams params = roi_align_params(c.node(), x.shape, rois.shape[0]);
  const bool wide = batch.dtype == DType::i64;
  const std::string name = c.node().name;
  c.add_kernel({x, rois, batch, y}, [params, wide, name](Pointers p, ThreadPool* pool) {
    const IndexData indices{p[2], wide};
    roi_align_check(params, name, static_cast<const float*>(p[1]), indices);
    parallel_chunks(pool, static_cast<size_t>(params.rois), 1, [&](size_t begin, size_t end) {
      roi_align_rois(params, static_cast<const float*>(p[0]), static_cast<const float*>(p[1]), indices,
                     static_cast<float*>(p[3]), static_cast<int64_t>(begin), static_cast<int64_t>(end));
    });
  });
}

std::optional<std::string> check_max_unpool(const Graph& graph, const Node& node) {
  return check_float_with_indices(graph, node, 1);
}

void plan_max_unpool(NodeContext& c) {
  const Value x = row_major_input(c, 0);
  const Value indices = row_major_input(c, 1);
  const Value y = row_major_output(c);
  MaxUnpoolParams params{numel(x.shape), attr_ints(c.node(), "index_shape"), y.shape};
  if (params.index_shape.empty()) params.index_shape = params.out_shape;
  const bool wide = indices.dtype == DType::i64;
  const std::string name = c.node().name;
  c.add_kernel({x, indices, y}, [params, wide, name](Pointers p, ThreadPool*) {
    max_unpool(params, name, static_cast<const float*>(p[0]), {p[1], wide}, static_cast<float*>(p[2]));
  });
}

}  // namespace mt::cpu
