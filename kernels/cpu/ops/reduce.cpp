// The reduce_* ops (mean, sum, max, min, l1, l2, sum_square, log_sum, log_sum_exp, prod) over any
// axes, in the input's layout: the output keeps the input's memory order with the reduced dims
// dropped (or left as size 1).
#include <algorithm>

#include "kernels/cpu/plan/op_util.h"
#include "kernels/cpu/ops/ops.h"
#include "kernels/cpu/engines/reduce_loop.h"

namespace mt::cpu {
namespace {

ReduceKind kind_of(const std::string& op) {
  if (op == "reduce_sum") return ReduceKind::sum;
  if (op == "reduce_max") return ReduceKind::max;
  if (op == "reduce_min") return ReduceKind::min;
  if (op == "reduce_l1") return ReduceKind::l1;
  if (op == "reduce_l2") return ReduceKind::l2;
  if (op == "reduce_sum_square") return ReduceKind::sum_square;
  if (op == "reduce_log_sum") return ReduceKind::log_sum;
  if (op == "reduce_log_sum_exp") return ReduceKind::log_sum_exp;
  if (op == "reduce_prod") return ReduceKind::prod;
  return ReduceKind::mean;
}

}  // namespace

std::optional<std::string> check_reduce(const Graph& graph, const Node& node) { return check_float(graph, node); }

// Shared with the global pools: reduces `axes` (logical) of input 0 into output 0.
void plan_reduction(NodeContext& c, const std::vector<int>& axes, bool keepdims, ReduceKind kind) {
  const Value x = c.input(0);
  const size_t rank = x.shape.size();
  std::vector<bool> is_reduced(rank, false);
  for (int axis : axes) is_reduced[axis] = true;
  std::vector<bool> reduced(rank);
  for (size_t k = 0; k < rank; ++k) reduced[k] = is_reduced[x.layout[k]];

  Layout out_layout;
  if (keepdims) {
    out_layout = x.layout;
  } else {
    for (int dim : x.layout) {
      if (is_reduced[dim]) continue;
      out_layout.push_back(dim - static_cast<int>(std::count(is_reduced.begin(), is_reduced.begin() + dim, true)));
    }
  }
  const Value y = c.output(0, out_layout);
  const ReduceLoop loop(x.physical(), reduced, kind);
  std::vector<Value> values{x, y};
  if (loop.scratch_floats() > 0) values.push_back(c.scratch(loop.scratch_floats() * sizeof(float)));
  c.add_kernel(values, [loop](Pointers p, ThreadPool* pool) {
    loop.run(static_cast<const float*>(p[0]), static_cast<float*>(p[1]),
             loop.scratch_floats() > 0 ? static_cast<float*>(p[2]) : nullptr, pool);
  });
}

void plan_reduce(NodeContext& c) {
  const size_t rank = c.input_info(0).shape.size();
  std::vector<int> axes;
  for (int64_t axis : attr_ints(c.node(), "axes")) axes.push_back(axis_of(c.node(), axis, rank));
  if (axes.empty())
    for (size_t d = 0; d < rank; ++d) axes.push_back(static_cast<int>(d));
  plan_reduction(c, axes, attr_int(c.node(), "keepdims") != 0, kind_of(c.node().op));
}

}  // namespace mt::cpu
