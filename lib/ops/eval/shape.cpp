// Reference kernels of the shape family. They move whole elements of dtype_size bytes and
// never look at their values, so they work for every dtype (constant folding runs them on
// int64 shape arithmetic as well as on float weights).
#include <cstring>

#include "lib/ops/broadcast.h"
#include "lib/ops/eval/reference.h"
#include "lib/ops/registry.h"
#include "lib/ops/slice_params.h"

namespace mt::reference {
namespace {

size_t element_size(const TensorInfo& info) { return dtype_size(info.dtype); }

// Row-major element strides of a shape.
std::vector<int64_t> strides_of(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

int64_t product(const Shape& shape, size_t begin, size_t end) {
  int64_t result = 1;
  for (size_t i = begin; i < end; ++i) result *= shape[i];
  return result;
}

// Fills the contiguous output of shape `out_shape` from a strided view of `in`: the element at
// multi-index idx comes from element base + sum(idx[d] * strides[d]) of `in`. Transpose, slice
// and expand are all such views.
void copy_view(const void* in, void* out, size_t elem, const Shape& out_shape, int64_t base,
               const std::vector<int64_t>& strides) {
  const int64_t count = numel(out_shape);
  const auto* src = static_cast<const std::byte*>(in);
  auto* dst = static_cast<std::byte*>(out);
  std::vector<int64_t> index(out_shape.size(), 0);
  int64_t offset = base;
  for (int64_t i = 0; i < count; ++i) {
    std::memcpy(dst + i * elem, src + offset * elem, elem);
    // Advance the multi-index like an odometer, keeping `offset` in step.
    for (size_t d = out_shape.size(); d-- > 0;) {
      offset += strides[d];
      if (++index[d] < out_shape[d]) break;
      offset -= strides[d] * index[d];
      index[d] = 0;
    }
  }
}

void copy_all(const Node&, std::span<const ConstView> in, std::span<const MutView> out) {
  const size_t bytes = in[0].info->byte_size();
  if (bytes > 0) std::memcpy(out[0].data, in[0].data, bytes);
}

void transpose(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  const Shape& shape = in[0].info->shape;
  const auto& perm = attr_ints(node, "perm");
  const std::vector<int64_t> in_strides = strides_of(shape);
  std::vector<int64_t> strides(shape.size());
  for (size_t i = 0; i < shape.size(); ++i)
    strides[i] = in_strides[perm.empty() ? shape.size() - 1 - i : static_cast<size_t>(perm[i])];
  copy_view(in[0].data, out[0].data, element_size(*in[0].info), out[0].info->shape, 0, strides);
}

void slice(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  const Shape& shape = in[0].info->shape;
  const std::vector<SliceAxis> axes = resolve_slice(node, shape);
  const std::vector<int64_t> in_strides = strides_of(shape);
  int64_t base = 0;
  std::vector<int64_t> strides(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) {
    base += axes[i].start * in_strides[i];
    strides[i] = axes[i].step * in_strides[i];
  }
  copy_view(in[0].data, out[0].data, element_size(*in[0].info), out[0].info->shape, base, strides);
}

void expand(const Node&, std::span<const ConstView> in, std::span<const MutView> out) {
  const Shape& out_shape = out[0].info->shape;
  copy_view(in[0].data, out[0].data, element_size(*in[0].info), out_shape, 0,
            broadcast_strides(in[0].info->shape, out_shape));
}

// Concat and split view each tensor as [outer, dim(axis) * inner] blocks.
void concat(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  const Shape& out_shape = out[0].info->shape;
  const size_t axis = *normalize_axis(attr_int(node, "axis"), out_shape.size());
  const size_t elem = element_size(*out[0].info);
  const int64_t outer = product(out_shape, 0, axis);
  const int64_t inner = product(out_shape, axis + 1, out_shape.size());
  const int64_t out_row = out_shape[axis] * inner;
  auto* dst = static_cast<std::byte*>(out[0].data);
  int64_t column = 0;  // where this input starts within an output row
  for (const ConstView& view : in) {
    const int64_t row = view.info->shape[axis] * inner;
    const auto* src = static_cast<const std::byte*>(view.data);
    for (int64_t o = 0; o < outer && row > 0; ++o)
      std::memcpy(dst + (o * out_row + column) * elem, src + o * row * elem, row * elem);
    column += row;
  }
}

void split(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  const Shape& shape = in[0].info->shape;
  const size_t axis = *normalize_axis(attr_int(node, "axis"), shape.size());
  const size_t elem = element_size(*in[0].info);
  const int64_t outer = product(shape, 0, axis);
  const int64_t inner = product(shape, axis + 1, shape.size());
  const int64_t in_row = shape[axis] * inner;
  const auto* src = static_cast<const std::byte*>(in[0].data);
  int64_t column = 0;
  for (const MutView& view : out) {
    const int64_t row = view.info->shape[axis] * inner;
    auto* dst = static_cast<std::byte*>(view.data);
    for (int64_t o = 0; o < outer && row > 0; ++o)
      std::memcpy(dst + o * row * elem, src + (o * in_row + column) * elem, row * elem);
    column += row;
  }
}

void gather(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  const Shape& shape = in[0].info->shape;
  const size_t axis = *normalize_axis(attr_int(node, "axis"), shape.size());
  const size_t elem = element_size(*in[0].info);
  const int64_t outer = product(shape, 0, axis);
  const int64_t dim = shape[axis];
  const int64_t inner = product(shape, axis + 1, shape.size());
  const int64_t count = in[1].info->numel();
  std::vector<int64_t> indices(count);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t index = in[1].info->dtype == DType::i64 ? in[1].as<int64_t>()[i] : in[1].as<int32_t>()[i];
    if (index < -dim || index >= dim)
      invalid_input("node '{}' (gather): index {} is out of range for axis {} of size {}", node.name, index, axis, dim);
    indices[i] = index < 0 ? index + dim : index;
  }
  const auto* src = static_cast<const std::byte*>(in[0].data);
  auto* dst = static_cast<std::byte*>(out[0].data);
  const size_t block = static_cast<size_t>(inner) * elem;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < count; ++i)
      if (block > 0) std::memcpy(dst + (o * count + i) * block, src + (o * dim + indices[i]) * block, block);
}

}  // namespace

void register_shape_kernels(KernelTable& table) {
  for (const char* op : {"reshape", "flatten", "squeeze", "unsqueeze", "identity"}) table.add(op, copy_all);
  table.add("transpose", transpose);
  table.add("slice", slice);
  table.add("expand", expand);
  table.add("concat", concat);
  table.add("split", split);
  table.add("gather", gather);
}

}  // namespace mt::reference
