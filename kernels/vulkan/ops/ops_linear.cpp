// linear (constant weights packed per block of 4 outputs, at planning or by mt-prepack) and matmul
// (numpy semantics, any operands).
#include "kernels/vulkan/ops/conv_grid.h"
#include "kernels/vulkan/ops/ops.h"
#include "kernels/vulkan/plan/weight_layout.h"

namespace mt::vulkan {

std::optional<std::string> check_linear(const Graph& graph, const Node& node) {
  if (auto reason = require_constant(graph, node, 1, "weight")) return reason;
  return require_constant(graph, node, 2, "bias");
}

void plan_linear(NodeContext& ctx) {
  const Shape& xs = ctx.input_info(0).shape;
  const Shape& ws = ctx.input_info(1).shape;
  const int64_t n = ws[0], k = ws[1];
  const int64_t rows = numel(xs) / std::max<int64_t>(k, 1);
  const int64_t blocks = (n + 3) / 4;
  const auto [lo, hi] = activation_bounds(ctx.node());
  const int weights =
      ctx.prepacked(1) ? ctx.prepacked_weights(1) : ctx.weights(pack_linear_weights(ctx.constant(1), n, k));
  const int bias = bias_weights(ctx, n);
  const Tensor& x = ctx.input(0);
  const Tensor y = ctx.output(0);
  // The last axis is the packed one for tensors of rank 1 and 2 (packed_layout.h).
  const bool k_packed = x.layout.dims.size() <= 2, n_packed = y.layout.dims.size() <= 2;
  const uint32_t split = linear_split((k + 3) / 4);
  ctx.dispatch("linear", {split, 64 / split, 1}, {split},
               {NodeContext::fetch(x), NodeContext::write(y), NodeContext::fetch(weights), NodeContext::read(bias)},
               Params().i(rows).i(k).i(n).i(blocks).i(k_packed).i(n_packed).f(lo).f(hi).view(x.view()).view(y.view()),
               linear_groups(ceil_div(rows * blocks, 64 / split), 1));
}

std::optional<std::string> check_matmul(const Graph&, const Node&) { return std::nullopt; }

void plan_matmul(NodeContext& ctx) {
  const bool a_vector = ctx.input_info(0).shape.size() == 1, b_vector = ctx.input_info(1).shape.size() == 1;
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  const Tensor y = ctx.output(0);
  // numpy promotion: a 1-D A is [1, K], a 1-D B is [K, 1]; Y is seen with those unit axes back.
  View va = a_vector ? with_unit_axis(a.view(), 0) : a.view();
  View vb = b_vector ? with_unit_axis(b.view(), 1) : b.view();
  View vy = y.view();
  if (a_vector && b_vector) vy = with_unit_axis(vy, 1);  // a scalar, stored as [1]
  else if (a_vector) vy = with_unit_axis(vy, vy.rank - 1);
  else if (b_vector) vy = with_unit_axis(vy, vy.rank);
  const int rank = vy.rank;
  va = aligned(va, rank);
  vb = aligned(vb, rank);
  const int64_t m = va.dims[rank - 2], k = va.dims[rank - 1], n = vb.dims[rank - 1];
  int64_t batch = 1;
  for (int d = 0; d < rank - 2; ++d) batch *= vy.dims[d];
  const int64_t blocks = (n + 3) / 4, invocations = batch * m * blocks;
  ctx.dispatch("matmul", {64, 1, 1}, {}, {NodeContext::read(a), NodeContext::read(b), NodeContext::write(y)},
               Params().i(invocations).i(m).i(k).i(n).i(blocks).view(va).view(vb).view(vy), linear_groups(invocations));
}

}  // namespace mt::vulkan
