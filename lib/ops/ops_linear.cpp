// Op schemas of the linear family: linear (X W^T + B, with a fused clamp) and numpy matmul.
#include <limits>

#include "lib/ops/broadcast.h"
#include "lib/ops/infer_helpers.h"
#include "lib/ops/registry.h"

namespace mt {
namespace {

constexpr double kFloatMax = std::numeric_limits<float>::max();

std::vector<TensorType> infer_linear(const InferContext& context) {
  require_rank(context, 0, 1);
  require_rank(context, 1, 2, 2);
  require_matching_dtype(context, 1, 0);
  const Shape& x = context.input(0).shape;
  const Shape& w = context.input(1).shape;
  if (w[1] != x.back())
    context.fail("weight '{}' has shape {} but X '{}' ({}) has {} features; W must be [N, {}]", context.node().inputs[1],
                 shape_str(w), context.node().inputs[0], shape_str(x), x.back(), x.back());
  if (context.has_input(2)) {
    require_matching_dtype(context, 2, 0);
    if (context.input(2).shape != Shape{w[0]})
      context.fail("bias '{}' must have shape {} (the rows of W), got {}", context.node().inputs[2], w[0],
                   shape_str(context.input(2).shape));
  }
  const double act_min = context.attr_float("act_min");
  const double act_max = context.attr_float("act_max");
  if (act_min > act_max) context.fail("attribute 'act_min' ({}) is greater than 'act_max' ({})", act_min, act_max);
  Shape out = x;
  out.back() = w[0];
  return {TensorType{context.input(0).dtype, out}};
}

std::vector<TensorType> infer_matmul(const InferContext& context) {
  require_rank(context, 0, 1);
  require_rank(context, 1, 1);
  require_matching_dtype(context, 1, 0);
  const Shape& a = context.input(0).shape;
  const Shape& b = context.input(1).shape;
  // numpy: a 1-D A is a row [1, K], a 1-D B a column [K, 1]; the added dim is dropped again.
  const int64_t k_a = a.back();
  const int64_t k_b = b.size() == 1 ? b[0] : b[b.size() - 2];
  if (k_a != k_b)
    context.fail("inner dimensions differ: A '{}' is {} and B '{}' is {}", context.node().inputs[0], shape_str(a),
                 context.node().inputs[1], shape_str(b));
  const Shape batch_a(a.begin(), a.end() - std::min<ptrdiff_t>(2, static_cast<ptrdiff_t>(a.size())));
  const Shape batch_b(b.begin(), b.end() - std::min<ptrdiff_t>(2, static_cast<ptrdiff_t>(b.size())));
  auto batch = broadcast_shapes(batch_a, batch_b);
  if (!batch)
    context.fail("batch dimensions do not broadcast: A '{}' is {} and B '{}' is {}", context.node().inputs[0],
                 shape_str(a), context.node().inputs[1], shape_str(b));
  Shape out = *batch;
  if (a.size() >= 2) out.push_back(a[a.size() - 2]);
  if (b.size() >= 2) out.push_back(b.back());
  return {TensorType{context.input(0).dtype, out}};
}

// det: [..., M, M] -> [...].
std::vector<TensorType> infer_det(const InferContext& context) {
  require_rank(context, 0, 2);
  const TensorInfo& x = context.input(0);
  if (x.dtype != DType::f32) context.fail("input 'X' must be float32, not {}", dtype_name(x.dtype));
  if (x.shape[x.shape.size() - 1] != x.shape[x.shape.size() - 2])
    context.fail("input 'X' {} must end in square matrices", shape_str(x.shape));
  return {TensorType{DType::f32, Shape(x.shape.begin(), x.shape.end() - 2)}};
}

}  // namespace

void register_linear_ops(OpRegistry& registry) {
  registry.add(OpSchema{"linear",
                        "X[..., K] W[N, K]^T + B[N], then clamped to [act_min, act_max]",
                        {"X", "W", "B?"},
                        false,
                        1,
                        {{"act_min", AttrType::real, Attribute{-kFloatMax}}, {"act_max", AttrType::real, Attribute{kFloatMax}}},
                        infer_linear});
  registry.add(OpSchema{"matmul", "matrix product with numpy semantics (batch broadcast, 1-D promotion)", {"A", "B"},
                        false, 1, {}, infer_matmul});
  registry.add(OpSchema{"det",
                        "determinant of each square matrix in the last two axes (LU with partial pivoting)",
                        {"X"},
                        false,
                        1,
                        {},
                        infer_det});
}

}  // namespace mt
