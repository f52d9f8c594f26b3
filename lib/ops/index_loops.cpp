#include "lib/ops/index_loops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "lib/core/error.h"

namespace mt {
namespace {

std::vector<int64_t> row_major_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

// indices[i] made non-negative against `size`; Error(invalid_input) naming the node if it is
// outside [-size, size).
int64_t checked_index(const std::string& node, std::string_view op, IndexData indices, int64_t i, int64_t size,
                      size_t axis) {
  const int64_t index = indices[i];
  if (index < -size || index >= size)
    invalid_input("node '{}' ({}): index {} (element {} of the indices) is out of range for axis {} of size {}", node,
                  op, index, i, axis, size);
  return index < 0 ? index + size : index;
}

// Calls fn(linear, coords) for every element of `shape` in row-major order.
template <typename Fn>
void for_each_coord(const Shape& shape, Fn&& fn) {
  const int64_t count = numel(shape);
  std::vector<int64_t> coord(shape.size(), 0);
  for (int64_t i = 0; i < count; ++i) {
    fn(i, coord);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++coord[d] < shape[d]) break;
      coord[d] = 0;
    }
  }
}

// Integer sums and products wrap (computed unsigned: no undefined overflow), as in two's complement.
template <typename T>
T wrapping_add(T a, T b) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) + static_cast<std::make_unsigned_t<T>>(b));
  else return a + b;
}
template <typename T>
T wrapping_mul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  } else {
    return a * b;
  }
}

template <typename T>
void combine(T& target, T update, ScatterReduction reduction) {
  switch (reduction) {
    case ScatterReduction::none: target = update; break;
    case ScatterReduction::add: target = wrapping_add(target, update); break;
    case ScatterReduction::mul: target = wrapping_mul(target, update); break;
    case ScatterReduction::max: target = std::max(target, update); break;
    case ScatterReduction::min: target = std::min(target, update); break;
  }
}

// Writes (or combines) `count` elements of `update` into `target` (element offsets).
void scatter_run(DType dtype, ScatterReduction reduction, void* out, int64_t target, const void* updates,
                 int64_t source, int64_t count) {
  auto run = [&](auto type_tag) {
    using T = decltype(type_tag);
    T* y = static_cast<T*>(out) + target;
    const T* u = static_cast<const T*>(updates) + source;
    for (int64_t i = 0; i < count; ++i) combine(y[i], u[i], reduction);
  };
  if (count == 0) return;
  if (reduction == ScatterReduction::none) {
    const size_t element = dtype_size(dtype);
    std::memcpy(static_cast<std::byte*>(out) + target * element,
                static_cast<const std::byte*>(updates) + source * element, static_cast<size_t>(count) * element);
    return;
  }
  switch (dtype) {
    case DType::f32: run(float{}); break;
    case DType::i32: run(int32_t{}); break;
    case DType::i64: run(int64_t{}); break;
    default: unsupported("scatter with a reduction supports float32, int32 and int64, not {}", dtype_name(dtype));
  }
}

}  // namespace

TriluParams trilu_params(const Shape& shape, DType dtype, bool upper) {
  TriluParams params;
  params.rows = shape[shape.size() - 2];
  params.cols = shape[shape.size() - 1];
  params.batches = params.rows * params.cols == 0 ? 0 : numel(shape) / (params.rows * params.cols);
  params.element = dtype_size(dtype);
  params.upper = upper;
  return params;
}

void trilu(const TriluParams& p, int64_t k, const void* x, void* y) {
  const auto* in = static_cast<const std::byte*>(x);
  auto* out = static_cast<std::byte*>(y);
  for (int64_t b = 0; b < p.batches; ++b) {
    for (int64_t i = 0; i < p.rows; ++i) {
      // Row i keeps columns [i + k, cols) (upper) or [0, i + k] (lower); k may be far outside.
      const int64_t bound = std::clamp<int64_t>(k, -p.cols - p.rows, p.cols + p.rows) + i;
      const int64_t begin = p.upper ? std::clamp<int64_t>(bound, 0, p.cols) : 0;
      const int64_t end = p.upper ? p.cols : std::clamp<int64_t>(bound + 1, 0, p.cols);
      const size_t row = static_cast<size_t>((b * p.rows + i) * p.cols) * p.element;
      const auto bytes = [&](int64_t n) { return static_cast<size_t>(n) * p.element; };
      std::memset(out + row, 0, bytes(p.cols));
      if (end > begin) std::memcpy(out + row + bytes(begin), in + row + bytes(begin), bytes(end - begin));
    }
  }
}

void tile(const TileParams& p, const void* x, void* y) {
  const auto* in = static_cast<const std::byte*>(x);
  auto* out = static_cast<std::byte*>(y);
  if (numel(p.out_shape) == 0) return;
  if (p.out_shape.empty()) {
    std::memcpy(out, in, p.element);
    return;
  }
  // Each output row (innermost dim) is the input row repeated; the outer dims wrap around.
  const size_t rank = p.out_shape.size();
  const int64_t in_row = p.in_shape[rank - 1];
  const int64_t out_row = p.out_shape[rank - 1];
  const std::vector<int64_t> in_strides = row_major_strides(p.in_shape);
  const Shape outer(p.out_shape.begin(), p.out_shape.end() - 1);
  for_each_coord(outer, [&](int64_t row, const std::vector<int64_t>& coord) {
    int64_t source = 0;
    for (size_t d = 0; d + 1 < rank; ++d) source += (coord[d] % p.in_shape[d]) * in_strides[d];
    std::byte* target = out + static_cast<size_t>(row * out_row) * p.element;
    for (int64_t j = 0; j < out_row; j += in_row)
      std::memcpy(target + static_cast<size_t>(j) * p.element, in + static_cast<size_t>(source) * p.element,
                  static_cast<size_t>(in_row) * p.element);
  });
}

void gather_elements(const GatherElementsParams& p, const std::string& node, const void* data, IndexData indices,
                     void* out) {
  const int64_t count = numel(p.indices_shape);
  const int64_t size = p.data_shape[p.axis];
  for (int64_t i = 0; i < count; ++i) checked_index(node, "gather_elements", indices, i, size, p.axis);
  const std::vector<int64_t> strides = row_major_strides(p.data_shape);
  const auto* in = static_cast<const std::byte*>(data);
  auto* y = static_cast<std::byte*>(out);
  for_each_coord(p.indices_shape, [&](int64_t i, const std::vector<int64_t>& coord) {
    int64_t source = 0;
    for (size_t d = 0; d < coord.size(); ++d) source += (d == p.axis ? indices[i] : coord[d]) * strides[d];
    if (indices[i] < 0) source += size * strides[p.axis];
    std::memcpy(y + static_cast<size_t>(i) * p.element, in + static_cast<size_t>(source) * p.element, p.element);
  });
}

std::optional<ScatterReduction> scatter_reduction(std::string_view name) {
  if (name == "none") return ScatterReduction::none;
  if (name == "add") return ScatterReduction::add;
  if (name == "mul") return ScatterReduction::mul;
  if (name == "max") return ScatterReduction::max;
  if (name == "min") return ScatterReduction::min;
  return std::nullopt;
}

void scatter_elements(const ScatterElementsParams& p, const std::string& node, const void* data, IndexData indices,
                      const void* updates, void* out) {
  const int64_t count = numel(p.indices_shape);
  const int64_t size = p.data_shape[p.axis];
  for (int64_t i = 0; i < count; ++i) checked_index(node, "scatter_elements", indices, i, size, p.axis);
  const size_t bytes = static_cast<size_t>(numel(p.data_shape)) * dtype_size(p.dtype);
  if (out != data && bytes > 0) std::memcpy(out, data, bytes);
  const std::vector<int64_t> strides = row_major_strides(p.data_shape);
  for_each_coord(p.indices_shape, [&](int64_t i, const std::vector<int64_t>& coord) {
    int64_t target = 0;
    for (size_t d = 0; d < coord.size(); ++d) target += (d == p.axis ? indices[i] : coord[d]) * strides[d];
    if (indices[i] < 0) target += size * strides[p.axis];
    scatter_run(p.dtype, p.reduction, out, target, updates, i, 1);
  });
}

NdParams gather_nd_params(const Shape& data, const Shape& indices, size_t batch_dims, DType dtype) {
  NdParams p;
  p.data_shape = data;
  p.batch_dims = batch_dims;
  p.depth = indices.back();
  p.element = dtype_size(dtype);
  p.dtype = dtype;
  for (size_t d = 0; d < batch_dims; ++d) p.batches *= data[d];
  for (size_t d = batch_dims; d + 1 < indices.size(); ++d) p.per_batch *= indices[d];
  p.batch_stride = 1;
  for (size_t d = batch_dims; d < data.size(); ++d) p.batch_stride *= data[d];
  for (size_t d = batch_dims + static_cast<size_t>(p.depth); d < data.size(); ++d) p.slice *= data[d];
  return p;
}

NdParams scatter_nd_params(const Shape& data, const Shape& indices, DType dtype, ScatterReduction reduction) {
  NdParams p = gather_nd_params(data, indices, 0, dtype);
  p.reduction = reduction;
  return p;
}

namespace {

// The element offset (within its batch) of every index tuple, checked against the data's dims.
std::vector<int64_t> tuple_offsets(const NdParams& p, const std::string& node, std::string_view op, IndexData indices) {
  const std::vector<int64_t> strides = row_major_strides(p.data_shape);
  const int64_t tuples = p.batches * p.per_batch;
  std::vector<int64_t> offsets(static_cast<size_t>(tuples));
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t offset = 0;
    for (int64_t j = 0; j < p.depth; ++j) {
      const size_t axis = p.batch_dims + static_cast<size_t>(j);
      offset += checked_index(node, op, indices, t * p.depth + j, p.data_shape[axis], axis) * strides[axis];
    }
    offsets[static_cast<size_t>(t)] = offset;
  }
  return offsets;
}

}  // namespace

void gather_nd(const NdParams& p, const std::string& node, const void* data, IndexData indices, void* out) {
  const std::vector<int64_t> offsets = tuple_offsets(p, node, "gather_nd", indices);
  const auto* in = static_cast<const std::byte*>(data);
  auto* y = static_cast<std::byte*>(out);
  const size_t slice_bytes = static_cast<size_t>(p.slice) * p.element;
  if (slice_bytes == 0) return;
  for (int64_t b = 0; b < p.batches; ++b)
    for (int64_t t = 0; t < p.per_batch; ++t) {
      const int64_t tuple = b * p.per_batch + t;
      const int64_t source = b * p.batch_stride + offsets[static_cast<size_t>(tuple)];
      std::memcpy(y + static_cast<size_t>(tuple) * slice_bytes, in + static_cast<size_t>(source) * p.element,
                  slice_bytes);
    }
}

void scatter_nd(const NdParams& p, const std::string& node, const void* data, IndexData indices, const void* updates,
                void* out) {
  const std::vector<int64_t> offsets = tuple_offsets(p, node, "scatter_nd", indices);
  const size_t bytes = static_cast<size_t>(numel(p.data_shape)) * p.element;
  if (out != data && bytes > 0) std::memcpy(out, data, bytes);
  for (int64_t t = 0; t < p.per_batch; ++t)
    scatter_run(p.dtype, p.reduction, out, offsets[static_cast<size_t>(t)], updates, t * p.slice, p.slice);
}

OneHotParams one_hot_params(const Shape& indices, DType index_dtype, int64_t depth, size_t axis, DType value_dtype) {
  OneHotParams p;
  for (size_t d = 0; d < axis; ++d) p.outer *= indices[d];
  for (size_t d = axis; d < indices.size(); ++d) p.inner *= indices[d];
  p.depth = depth;
  p.element = dtype_size(value_dtype);
  p.index_dtype = index_dtype;
  return p;
}

namespace {

// Index i of a one_hot indices tensor, or -1 when it selects no position.
int64_t one_hot_position(const OneHotParams& p, const void* indices, int64_t i) {
  int64_t index = 0;
  switch (p.index_dtype) {
    case DType::i32: index = static_cast<const int32_t*>(indices)[i]; break;
    case DType::i64: index = static_cast<const int64_t*>(indices)[i]; break;
    default: {
      // Truncated as a cast would; NaN and values beyond any depth select nothing (no overflow).
      const double v = static_cast<const float*>(indices)[i];
      if (!(std::abs(v) < static_cast<double>(p.depth) + 1)) return -1;
      index = static_cast<int64_t>(v);
    }
  }
  if (index < -p.depth || index >= p.depth) return -1;
  return index < 0 ? index + p.depth : index;
}

}  // namespace

void one_hot(const OneHotParams& p, const void* indices, const void* values, void* out) {
  const auto* off = static_cast<const std::byte*>(values);
  const std::byte* on = off + p.element;
  auto* y = static_cast<std::byte*>(out);
  for (int64_t o = 0; o < p.outer; ++o)
    for (int64_t i = 0; i < p.inner; ++i) {
      const int64_t position = one_hot_position(p, indices, o * p.inner + i);
      for (int64_t d = 0; d < p.depth; ++d)
        std::memcpy(y + static_cast<size_t>((o * p.depth + d) * p.inner + i) * p.element, d == position ? on : off,
                    p.element);
    }
}

}  // namespace mt
