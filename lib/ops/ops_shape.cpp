// Op schemas of the shape family: ops that move or select elements without computing on them
// (reshape, transpose, concat, slice, gather, ...). They accept every dtype.
#include <algorithm>

#include "lib/ops/broadcast.h"
#include "lib/ops/registry.h"
#include "lib/ops/slice_params.h"

namespace mt {
namespace {

using Ints = std::vector<int64_t>;

AttrSpec required(std::string name, AttrType type) { return {std::move(name), type, std::nullopt}; }
AttrSpec int_attr(std::string name, int64_t value) { return {std::move(name), AttrType::integer, Attribute{value}}; }
AttrSpec ints_attr(std::string name, Ints value) {
  return {std::move(name), AttrType::integers, Attribute{std::move(value)}};
}

std::vector<TensorType> same_as_input(const InferContext& context) {
  const TensorInfo& x = context.input(0);
  return {{x.dtype, x.shape}};
}

// Fails unless every value of `shape` is a dimension (>= 0) and the element count is bounded.
void check_literal_shape(const InferContext& context, const Ints& shape, std::string_view attr) {
  for (int64_t dim : shape)
    if (dim < 0) context.fail("attribute '{}' has negative dimension {} (must be a literal shape)", attr, dim);
  if (!checked_numel(shape)) context.fail("attribute '{}' shape {} is too large", attr, shape_str(shape));
}

std::vector<TensorType> infer_reshape(const InferContext& context) {
  const TensorInfo& x = context.input(0);
  const Ints& shape = context.attr_ints("shape");
  check_literal_shape(context, shape, "shape");
  if (numel(shape) != x.numel())
    context.fail("cannot reshape {} ({} elements) to {} ({} elements)", shape_str(x.shape), x.numel(), shape_str(shape),
                 numel(shape));
  return {{x.dtype, shape}};
}

std::vector<TensorType> infer_flatten(const InferContext& context) {
  const TensorInfo& x = context.input(0);
  const auto rank = static_cast<int64_t>(x.shape.size());
  int64_t axis = context.attr_int("axis");
  if (axis < -rank || axis > rank) context.fail("axis {} is out of range for rank {}", axis, rank);
  if (axis < 0) axis += rank;
  const auto outer = checked_numel(Shape(x.shape.begin(), x.shape.begin() + axis));
  const auto inner = checked_numel(Shape(x.shape.begin() + axis, x.shape.end()));
  if (!outer || !inner) context.fail("flattened shape of {} is too large", shape_str(x.shape));
  return {{x.dtype, {*outer, *inner}}};
}

std::vector<TensorType> infer_transpose(const InferContext& context) {
  const TensorInfo& x = context.input(0);
  const Ints& perm = context.attr_ints("perm");
  const size_t rank = x.shape.size();
  if (perm.empty()) return {{x.dtype, Shape(x.shape.rbegin(), x.shape.rend())}};
  if (perm.size() != rank) context.fail("perm has {} values for an input of rank {}", perm.size(), rank);
  std::vector<bool> used(rank, false);
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t p = perm[i];
    if (p < 0 || p >= static_cast<int64_t>(rank) || used[p])
      context.fail("perm [{}] is not a permutation of 0..{}", fmt::join(perm, ","), rank - 1);
    used[p] = true;
    out[i] = x.shape[p];
  }
  return {{x.dtype, out}};
}

std::vector<TensorType> infer_concat(const InferContext& context) {
  const TensorInfo& first = context.input(0);
  const auto axis = normalize_axis(context.attr_int("axis"), first.shape.size());
  if (!axis) context.fail("axis {} is out of range for rank {}", context.attr_int("axis"), first.shape.size());
  Shape out = first.shape;
  for (size_t i = 1; i < context.num_inputs(); ++i) {
    const TensorInfo& in = context.input(i);
    if (in.dtype != first.dtype)
      context.fail("input {} '{}' is {}, input 0 is {}", i, in.name, dtype_name(in.dtype), dtype_name(first.dtype));
    if (in.shape.size() != out.size())
      context.fail("input {} '{}' has rank {}, input 0 has rank {}", i, in.name, in.shape.size(), out.size());
    for (size_t d = 0; d < out.size(); ++d)
      if (static_cast<int>(d) != *axis && in.shape[d] != out[d])
        context.fail("input {} '{}' has shape {}, which disagrees with {} outside axis {}", i, in.name,
                     shape_str(in.shape), shape_str(first.shape), *axis);
    out[*axis] += in.shape[*axis];
    if (out[*axis] > kMaxElements) context.fail("concatenated axis {} is too large", *axis);
  }
  return {{first.dtype, out}};
}

std::vector<TensorType> infer_split(const InferContext& context) {
  const TensorInfo& x = context.input(0);
  const auto axis = normalize_axis(context.attr_int("axis"), x.shape.size());
  if (!axis) context.fail("axis {} is out of range for rank {}", context.attr_int("axis"), x.shape.size());
  const Ints& sizes = context.attr_ints("split");
  if (sizes.empty()) context.fail("attribute 'split' is empty");
  // Subtracting from the dimension (rather than summing the sizes) cannot overflow.
  int64_t remaining = x.shape[*axis];
  for (int64_t size : sizes)
    if (size < 0) context.fail("split size {} is negative", size);
  for (int64_t size : sizes) {
    if (size > remaining) remaining = -1;
    if (remaining < 0) break;
    remaining -= size;
  }
  if (remaining != 0)
    context.fail("split sizes [{}] do not sum to dimension {} of axis {}", fmt::join(sizes, ","), x.shape[*axis],
                 *axis);
  std::vector<TensorType> outs;
  for (int64_t size : sizes) {
    Shape shape = x.shape;
    shape[*axis] = size;
    outs.push_back({x.dtype, shape});
  }
  return outs;
}

std::vector<TensorType> infer_slice(const InferContext& context) {
  const TensorInfo& x = context.input(0);
  std::vector<SliceAxis> axes;
  try {
    axes = resolve_slice(context.node(), x.shape);
  } catch (const Error& error) {
    context.fail_message(error.what());
  }
  Shape out(axes.size());
  for (size_t i = 0; i < axes.size(); ++i) out[i] = axes[i].count;
  return {{x.dtype, out}};
}

std::vector<TensorType> infer_squeeze(const InferContext& context) {
  const TensorInfo& x = context.input(0);
  const Ints& axes = context.attr_ints("axes");
  std::vector<bool> drop(x.shape.size(), axes.empty());
  if (axes.empty()) {
    for (size_t i = 0; i < x.shape.size(); ++i) drop[i] = x.shape[i] == 1;
  } else {
    for (int64_t value : axes) {
      const auto axis = normalize_axis(value, x.shape.size());
      if (!axis) context.fail("axis {} is out of range for rank {}", value, x.shape.size());
      if (drop[*axis]) context.fail("axis {} is listed twice", value);
      if (x.shape[*axis] != 1) context.fail("cannot squeeze axis {} of size {}", value, x.shape[*axis]);
      drop[*axis] = true;
    }
  }
  Shape out;
  for (size_t i = 0; i < x.shape.size(); ++i)
    if (!drop[i]) out.push_back(x.shape[i]);
  return {{x.dtype, out}};
}

std::vector<TensorType> infer_unsqueeze(const InferContext& context) {
  const TensorInfo& x = context.input(0);
  const Ints& axes = context.attr_ints("axes");
  if (axes.empty()) context.fail("attribute 'axes' is empty");
  const size_t out_rank = x.shape.size() + axes.size();
  std::vector<bool> inserted(out_rank, false);
  for (int64_t value : axes) {
    const auto axis = normalize_axis(value, out_rank);
    if (!axis) context.fail("axis {} is out of range for output rank {}", value, out_rank);
    if (inserted[*axis]) context.fail("axis {} is listed twice", value);
    inserted[*axis] = true;
  }
  Shape out;
  size_t next = 0;
  for (size_t i = 0; i < out_rank; ++i) out.push_back(inserted[i] ? 1 : x.shape[next++]);
  return {{x.dtype, out}};
}

std::vector<TensorType> infer_expand(const InferContext& context) {
  const TensorInfo& x = context.input(0);
  const Ints& shape = context.attr_ints("shape");
  check_literal_shape(context, shape, "shape");
  const auto out = broadcast_shapes(x.shape, shape);
  if (!out) context.fail("cannot broadcast {} to {}", shape_str(x.shape), shape_str(shape));
  return {{x.dtype, *out}};
}

std::vector<TensorType> infer_gather(const InferContext& context) {
  const TensorInfo& data = context.input(0);
  const TensorInfo& indices = context.input(1);
  const auto axis = normalize_axis(context.attr_int("axis"), data.shape.size());
  if (!axis) context.fail("axis {} is out of range for rank {}", context.attr_int("axis"), data.shape.size());
  if (indices.dtype != DType::i64 && indices.dtype != DType::i32)
    context.fail("indices '{}' must be int64 or int32, got {}", indices.name, dtype_name(indices.dtype));
  // Constant indices (the usual case) are checked now rather than when the model runs.
  if (indices.is_constant() && indices.data.size() == indices.byte_size()) {
    const int64_t dim = data.shape[*axis];
    for (int64_t i = 0; i < indices.numel(); ++i) {
      const int64_t index = indices.dtype == DType::i64 ? indices.data.as<int64_t>()[i] : indices.data.as<int32_t>()[i];
      if (index < -dim || index >= dim)
        context.fail("index {} is out of range for axis {} of size {}", index, *axis, dim);
    }
  }
  Shape out(data.shape.begin(), data.shape.begin() + *axis);
  out.insert(out.end(), indices.shape.begin(), indices.shape.end());
  out.insert(out.end(), data.shape.begin() + *axis + 1, data.shape.end());
  return {{data.dtype, out}};
}

}  // namespace

void register_shape_ops(OpRegistry& registry) {
  using enum AttrType;
  registry.add({"reshape",
                "Same elements in a new shape (the literal output shape)",
                {"X"},
                false,
                1,
                {required("shape", integers)},
                infer_reshape});
  registry.add({"flatten",
                "Reshape to 2-D: [prod(dims before axis), prod(dims from axis)]",
                {"X"},
                false,
                1,
                {int_attr("axis", 1)},
                infer_flatten});
  registry.add({"transpose",
                "Permute the axes (empty perm reverses them)",
                {"X"},
                false,
                1,
                {ints_attr("perm", {})},
                infer_transpose});
  registry.add(
      {"concat", "Join tensors along an axis", {"inputs"}, true, 1, {required("axis", integer)}, infer_concat});
  registry.add({"split",
                "Cut a tensor into pieces of the given sizes along an axis",
                {"X"},
                false,
                -1,
                {int_attr("axis", 0), required("split", integers)},
                infer_split});
  registry.add(
      {"slice",
       "Strided sub-tensor (ONNX Slice semantics)",
       {"X"},
       false,
       1,
       {required("starts", integers), required("ends", integers), ints_attr("axes", {}), ints_attr("steps", {})},
       infer_slice});
  registry.add({"squeeze",
                "Remove axes of size 1 (all of them when axes is empty)",
                {"X"},
                false,
                1,
                {ints_attr("axes", {})},
                infer_squeeze});
  registry.add({"unsqueeze",
                "Insert axes of size 1 (axes index the output)",
                {"X"},
                false,
                1,
                {required("axes", integers)},
                infer_unsqueeze});
  registry.add({"expand",
                "Broadcast to a shape (numpy rules, ONNX Expand)",
                {"X"},
                false,
                1,
                {required("shape", integers)},
                infer_expand});
  registry.add({"gather",
                "Take entries along an axis by index (negative indices wrap)",
                {"data", "indices"},
                false,
                1,
                {int_attr("axis", 0)},
                infer_gather});
  registry.add({"identity", "Copy of the input", {"X"}, false, 1, {}, same_as_input});
}

}  // namespace mt
