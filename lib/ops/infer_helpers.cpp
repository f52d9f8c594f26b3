#include "lib/ops/infer_helpers.h"

#include "lib/ops/broadcast.h"

namespace mt {

std::vector<TensorType> same_as_input0(const InferContext& context) {
  const TensorInfo& x = context.input(0);
  return {TensorType{x.dtype, x.shape}};
}

bool is_floating(DType dtype) { return dtype == DType::f32 || dtype == DType::f16; }

void require_rank(const InferContext& context, size_t index, size_t min_rank, size_t max_rank) {
  const TensorInfo& x = context.input(index);
  const size_t rank = x.shape.size();
  if (rank >= min_rank && rank <= max_rank) return;
  const std::string& name = context.node().inputs[index];
  if (min_rank == max_rank) context.fail("input '{}' must have rank {}, got shape {}", name, min_rank, shape_str(x.shape));
  if (max_rank == SIZE_MAX)
    context.fail("input '{}' must have rank >= {}, got shape {}", name, min_rank, shape_str(x.shape));
  context.fail("input '{}' must have rank {} to {}, got shape {}", name, min_rank, max_rank, shape_str(x.shape));
}

void require_matching_dtype(const InferContext& context, size_t index, size_t reference) {
  const DType dtype = context.input(index).dtype;
  const DType expected = context.input(reference).dtype;
  if (dtype == expected || (!is_floating(dtype) && !is_floating(expected))) return;
  context.fail("input '{}' is {} but input '{}' is {}", context.node().inputs[index], dtype_name(dtype),
               context.node().inputs[reference], dtype_name(expected));
}

void require_same_dtype(const InferContext& context, size_t index, size_t reference) {
  const DType dtype = context.input(index).dtype;
  const DType expected = context.input(reference).dtype;
  if (dtype == expected) return;
  context.fail("input '{}' is {} but input '{}' is {}; both must have the same dtype", context.node().inputs[index],
               dtype_name(dtype), context.node().inputs[reference], dtype_name(expected));
}

int checked_axis(const InferContext& context, std::string_view attr, int64_t axis, size_t rank) {
  auto normalized = normalize_axis(axis, rank);
  if (!normalized) context.fail("attribute '{}' = {} is out of range for rank {}", attr, axis, rank);
  return *normalized;
}

bool checked_flag(const InferContext& context, std::string_view attr) {
  const int64_t value = context.attr_int(attr);
  if (value != 0 && value != 1) context.fail("attribute '{}' must be 0 or 1, got {}", attr, value);
  return value == 1;
}

void require_broadcasts_to(const InferContext& context, size_t index, const Shape& target, std::string_view what) {
  const Shape& shape = context.input(index).shape;
  auto result = broadcast_shapes(shape, target);
  if (!result || *result != target)
    context.fail("{} '{}' has shape {}, which does not broadcast to {}", what, context.node().inputs[index],
                 shape_str(shape), shape_str(target));
}

}  // namespace mt
