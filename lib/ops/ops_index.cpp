// Op schemas of the index family: trilu, tile, gather_elements, gather_nd, scatter_elements,
// scatter_nd, one_hot and non_max_suppression (ONNX semantics; negative axes and indices count from the end). Their loops are
// lib/ops/index_loops.h.
#include <algorithm>
#include <string>
#include <vector>

#include "lib/ops/index_loops.h"
#include "lib/ops/infer_helpers.h"
#include "lib/ops/non_max_suppression.h"
#include "lib/ops/registry.h"

namespace mt {
namespace {

void require_index_dtype(const InferContext& context, size_t index) {
  const DType dtype = context.input(index).dtype;
  if (dtype != DType::i64 && dtype != DType::i32)
    context.fail("input {} ('{}') must be int64 or int32 indices, not {}", index, context.input(index).name,
                 dtype_name(dtype));
}

void require_reduction(const InferContext& context) {
  const std::string& name = context.attr_string("reduction");
  if (!scatter_reduction(name)) context.fail("attribute 'reduction' = \"{}\" is not none, add, mul, max or min", name);
}

std::vector<TensorType> infer_trilu(const InferContext& context) {
  require_rank(context, 0, 2);
  checked_flag(context, "upper");
  if (context.has_input(1)) {
    const TensorInfo& k = context.input(1);
    if (k.dtype != DType::i64 || k.numel() != 1)
      context.fail("input 'k' must be one int64 value, not {} of shape {}", dtype_name(k.dtype), shape_str(k.shape));
  }
  return same_as_input0(context);
}

std::vector<TensorType> infer_tile(const InferContext& context) {
  const TensorInfo& x = context.input(0);
  const std::vector<int64_t>& repeats = context.attr_ints("repeats");
  if (repeats.size() != x.shape.size())
    context.fail("attribute 'repeats' has {} values for an input of rank {}", repeats.size(), x.shape.size());
  Shape shape;
  for (size_t d = 0; d < repeats.size(); ++d) {
    if (repeats[d] < 0) context.fail("attribute 'repeats' has the negative value {}", repeats[d]);
    shape.push_back(x.shape[d] * repeats[d]);
  }
  if (!checked_numel(shape)) context.fail("the output shape {} is too large", shape_str(shape));
  return {TensorType{x.dtype, shape}};
}

// gather_elements and scatter_elements: indices of the data's rank, no larger off the axis.
int elementwise_indices(const InferContext& context) {
  const TensorInfo& data = context.input(0);
  const TensorInfo& indices = context.input(1);
  require_rank(context, 0, 1);
  require_index_dtype(context, 1);
  const int axis = checked_axis(context, "axis", context.attr_int("axis"), data.shape.size());
  if (indices.shape.size() != data.shape.size())
    context.fail("indices of rank {} for data of rank {}: they must be equal", indices.shape.size(), data.shape.size());
  for (size_t d = 0; d < data.shape.size(); ++d)
    if (d != static_cast<size_t>(axis) && indices.shape[d] > data.shape[d])
      context.fail("indices shape {} is larger than data shape {} along axis {}", shape_str(indices.shape),
                   shape_str(data.shape), d);
  return axis;
}

std::vector<TensorType> infer_gather_elements(const InferContext& context) {
  elementwise_indices(context);
  return {TensorType{context.input(0).dtype, context.input(1).shape}};
}

std::vector<TensorType> infer_scatter_elements(const InferContext& context) {
  elementwise_indices(context);
  require_reduction(context);
  require_same_dtype(context, 2, 0);
  if (context.input(2).shape != context.input(1).shape)
    context.fail("updates shape {} differs from indices shape {}", shape_str(context.input(2).shape),
                 shape_str(context.input(1).shape));
  return {TensorType{context.input(0).dtype, context.input(0).shape}};
}

// gather_nd / scatter_nd: indices [..., q] address slices data.shape[batch_dims + q:]; the
// shape of what they gather (or take as updates).
Shape nd_slices_shape(const InferContext& context, size_t batch_dims) {
  const Shape& data = context.input(0).shape;
  const Shape& indices = context.input(1).shape;
  require_rank(context, 0, 1);
  require_rank(context, 1, 1);
  require_index_dtype(context, 1);
  if (batch_dims >= std::min(data.size(), indices.size()))
    context.fail("batch_dims {} must be less than the ranks of data ({}) and indices ({})", batch_dims, data.size(),
                 indices.size());
  for (size_t d = 0; d < batch_dims; ++d)
    if (data[d] != indices[d])
      context.fail("batch dimension {} differs: data {} and indices {}", d, shape_str(data), shape_str(indices));
  const int64_t depth = indices.back();
  if (depth < 1 || depth > static_cast<int64_t>(data.size() - batch_dims))
    context.fail("the last dimension of indices ({}) must be in [1, {}] for data {} with batch_dims {}", depth,
                 data.size() - batch_dims, shape_str(data), batch_dims);
  Shape shape(indices.begin(), indices.end() - 1);
  shape.insert(shape.end(), data.begin() + static_cast<int64_t>(batch_dims) + depth, data.end());
  return shape;
}

std::vector<TensorType> infer_gather_nd(const InferContext& context) {
  const int64_t batch_dims = context.attr_int("batch_dims");
  if (batch_dims < 0) context.fail("attribute 'batch_dims' is negative ({})", batch_dims);
  return {TensorType{context.input(0).dtype, nd_slices_shape(context, static_cast<size_t>(batch_dims))}};
}

std::vector<TensorType> infer_scatter_nd(const InferContext& context) {
  const Shape updates = nd_slices_shape(context, 0);
  require_reduction(context);
  require_same_dtype(context, 2, 0);
  if (context.input(2).shape != updates)
    context.fail("updates shape {} must be {} for these data and indices", shape_str(context.input(2).shape),
                 shape_str(updates));
  return {TensorType{context.input(0).dtype, context.input(0).shape}};
}

std::vector<TensorType> infer_one_hot(const InferContext& context) {
  const TensorInfo& indices = context.input(0);
  const TensorInfo& values = context.input(1);
  if (indices.dtype != DType::i64 && indices.dtype != DType::i32 && indices.dtype != DType::f32)
    context.fail("indices must be int64, int32 or float32, not {}", dtype_name(indices.dtype));
  if (values.numel() != 2)
    context.fail("input 'values' must hold 2 values (off, on), not {} (shape {})", values.numel(),
                 shape_str(values.shape));
  const int64_t depth = context.attr_int("depth");
  if (depth < 1) context.fail("attribute 'depth' must be at least 1, got {}", depth);
  // The new axis may go anywhere from before the first index axis to after the last.
  const int axis = checked_axis(context, "axis", context.attr_int("axis"), indices.shape.size() + 1);
  Shape shape = indices.shape;
  shape.insert(shape.begin() + axis, depth);
  if (!checked_numel(shape)) context.fail("the output shape {} is too large", shape_str(shape));
  return {TensorType{values.dtype, shape}};
}

// Boxes [B, N, 4] and scores [B, C, N] in float32, the thresholds one float32 each: the selected
// (batch, class, box) rows at their largest count (lib/ops/non_max_suppression.h), and that count.
std::vector<TensorType> infer_non_max_suppression(const InferContext& context) {
  for (size_t i = 0; i < context.num_inputs(); ++i)
    if (context.has_input(i) && context.input(i).dtype != DType::f32)
      context.fail("input {} ('{}') must be float32, not {}", i, context.input(i).name,
                   dtype_name(context.input(i).dtype));
  const Shape& boxes = context.input(0).shape;
  const Shape& scores = context.input(1).shape;
  if (boxes.size() != 3 || boxes[2] != 4) context.fail("boxes must be batches x boxes x 4, not {}", shape_str(boxes));
  if (scores.size() != 3 || scores[0] != boxes[0] || scores[2] != boxes[1])
    context.fail("scores must be batches x classes x boxes ({} x C x {}), not {}", boxes[0], boxes[1],
                 shape_str(scores));
  for (size_t i : {size_t{2}, size_t{3}})
    if (context.has_input(i) && context.input(i).numel() != 1)
      context.fail("input {} ('{}') must hold one value, not {}", i, context.input(i).name, context.input(i).numel());
  const int64_t max_per_class = context.attr_int("max_output_boxes_per_class");
  if (max_per_class < 0) context.fail("attribute 'max_output_boxes_per_class' must be >= 0, got {}", max_per_class);
  checked_flag(context, "center_point_box");
  const int64_t rows =
      nms_capacity({.batches = boxes[0], .classes = scores[1], .boxes = boxes[1], .max_per_class = max_per_class});
  return {TensorType{DType::i64, {rows, 3}}, TensorType{DType::i64, {}}};
}

AttrSpec axis_attr() { return {"axis", AttrType::integer, Attribute{int64_t{0}}}; }
AttrSpec reduction_attr() { return {"reduction", AttrType::string, Attribute{std::string("none")}}; }

}  // namespace

void register_index_ops(OpRegistry& registry) {
  registry.add(OpSchema{"trilu",
                        "keeps the upper ('upper' = 1) or lower triangle of the last two axes from diagonal k "
                        "(input 'k', read at run time, default 0), zeroes the rest",
                        {"X", "k?"},
                        false,
                        1,
                        {{"upper", AttrType::integer, Attribute{int64_t{1}}}},
                        infer_trilu});
  registry.add(OpSchema{"tile",
                        "repeats the input 'repeats[d]' times along each axis d",
                        {"X"},
                        false,
                        1,
                        {{"repeats", AttrType::integers, std::nullopt}},
                        infer_tile});
  registry.add(OpSchema{"gather_elements",
                        "out[p] = data[p with its 'axis' coordinate replaced by indices[p]]",
                        {"data", "indices"},
                        false,
                        1,
                        {axis_attr()},
                        infer_gather_elements});
  registry.add(OpSchema{"gather_nd",
                        "slices of data addressed by the index tuples in the last axis of indices, after "
                        "'batch_dims' shared leading axes",
                        {"data", "indices"},
                        false,
                        1,
                        {{"batch_dims", AttrType::integer, Attribute{int64_t{0}}}},
                        infer_gather_nd});
  registry.add(OpSchema{"scatter_elements",
                        "data with updates[p] written at p with its 'axis' coordinate replaced by indices[p] "
                        "('reduction': none, add, mul, max, min)",
                        {"data", "indices", "updates"},
                        false,
                        1,
                        {axis_attr(), reduction_attr()},
                        infer_scatter_elements});
  registry.add(OpSchema{"scatter_nd",
                        "data with update slices written at the index tuples in the last axis of indices "
                        "('reduction': none, add, mul, max, min)",
                        {"data", "indices", "updates"},
                        false,
                        1,
                        {reduction_attr()},
                        infer_scatter_nd});
  registry.add(
      OpSchema{"one_hot",
               "a new axis 'axis' of size 'depth': values[1] where it equals the index, values[0] "
               "elsewhere (an index outside [-depth, depth) gives only values[0])",
               {"indices", "values"},
               false,
               1,
               {{"depth", AttrType::integer, std::nullopt}, {"axis", AttrType::integer, Attribute{int64_t{-1}}}},
               infer_one_hot});
  registry.add(OpSchema{"non_max_suppression",
                        "per batch and class, the boxes scoring above score_threshold, best first, each kept "
                        "unless it overlaps a kept one by IoU > iou_threshold, at most "
                        "'max_output_boxes_per_class': (batch, class, box) rows at their largest count, and "
                        "the count (output 1: how many rows are valid)",
                        {"boxes", "scores", "iou_threshold?", "score_threshold?"},
                        false,
                        2,
                        {{"max_output_boxes_per_class", AttrType::integer, Attribute{int64_t{0}}},
                         {"center_point_box", AttrType::integer, Attribute{int64_t{0}}}},
                        infer_non_max_suppression});
}

}  // namespace mt
