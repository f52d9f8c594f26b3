// The loops of the index family (trilu, tile, gather_elements, gather_nd, scatter_elements,
// scatter_nd, one_hot) over row-major tensors. The reference kernels and the cpu backend both run these,
// so they agree exactly; parameters that depend only on shapes and attributes are computed once
// (at planning, for a backend) into the *Params structs.
//
// Indices come as int32 or int64 tensors (`wide`: int64). Negative indices count from the end,
// as in ONNX; an index out of range throws Error(invalid_input) naming the node, the index and
// where it is, before anything is written: bad data never reads or writes out of bounds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/core/dtype.h"
#include "lib/ir/shape.h"

namespace mt {

// The indices operand of a gather or scatter: its data, and whether it is int64 (else int32).
struct IndexData {
  const void* data = nullptr;
  bool wide = true;
  int64_t operator[](int64_t i) const {
    return wide ? static_cast<const int64_t*>(data)[i] : static_cast<const int32_t*>(data)[i];
  }
};

// trilu: a batch of rows x cols matrices; element (i, j) is kept when j - i >= k (upper) or
// j - i <= k (lower), else set to zero bytes.
struct TriluParams {
  int64_t batches = 0, rows = 0, cols = 0;
  size_t element = 4;  // bytes
  bool upper = true;
};
TriluParams trilu_params(const Shape& shape, DType dtype, bool upper);
void trilu(const TriluParams& params, int64_t k, const void* x, void* y);

// tile: the output repeats the input along each axis; row-major strides for the walk.
struct TileParams {
  Shape in_shape, out_shape;
  size_t element = 4;
};
void tile(const TileParams& params, const void* x, void* y);

// gather_elements: out[p] = data[p with its `axis` coordinate replaced by indices[p]]; the
// output has the indices' shape, no larger than data's off the axis.
struct GatherElementsParams {
  Shape data_shape, indices_shape;
  size_t axis = 0;
  size_t element = 4;
};
void gather_elements(const GatherElementsParams& params, const std::string& node, const void* data, IndexData indices,
                     void* out);

// scatter_elements: a copy of data with updates[p] written (or combined) at the position of p
// with its `axis` coordinate replaced by indices[p].
enum class ScatterReduction { none, add, mul, max, min };
// The reduction named "none", "add", "mul", "max" or "min"; nullopt for another name.
std::optional<ScatterReduction> scatter_reduction(std::string_view name);
struct ScatterElementsParams {
  Shape data_shape, indices_shape;
  size_t axis = 0;
  DType dtype = DType::f32;
  ScatterReduction reduction = ScatterReduction::none;
};
void scatter_elements(const ScatterElementsParams& params, const std::string& node, const void* data, IndexData indices,
                      const void* updates, void* out);

// gather_nd / scatter_nd: indices of shape [batch..., rest..., q] address slices of
// `slice` elements in data (ONNX GatherND with batch_dims, ScatterND without).
struct NdParams {
  Shape data_shape;
  int64_t batches = 1;       // product of the batch dims (gather_nd)
  int64_t per_batch = 1;     // index tuples per batch
  int64_t depth = 0;         // q: coordinates per tuple
  int64_t slice = 1;         // elements per addressed slice
  int64_t batch_stride = 0;  // data elements per batch
  size_t batch_dims = 0;
  size_t element = 4;
  DType dtype = DType::f32;
  ScatterReduction reduction = ScatterReduction::none;
};
NdParams gather_nd_params(const Shape& data, const Shape& indices, size_t batch_dims, DType dtype);
void gather_nd(const NdParams& params, const std::string& node, const void* data, IndexData indices, void* out);
NdParams scatter_nd_params(const Shape& data, const Shape& indices, DType dtype, ScatterReduction reduction);
void scatter_nd(const NdParams& params, const std::string& node, const void* data, IndexData indices,
                const void* updates, void* out);

// one_hot: indices [outer, inner] (split at 'axis') become [outer, depth, inner], values[1] (on)
// where the depth coordinate equals the index (negative: counted from depth), values[0] (off)
// elsewhere. As ONNX defines it, an index outside [-depth, depth) gives a row of off values.
// Indices are int32, int64 or float32 (truncated toward zero; NaN is outside).
struct OneHotParams {
  int64_t outer = 1, depth = 1, inner = 1;
  size_t element = 4;  // bytes of a value
  DType index_dtype = DType::i64;
};
OneHotParams one_hot_params(const Shape& indices, DType index_dtype, int64_t depth, size_t axis, DType value_dtype);
void one_hot(const OneHotParams& params, const void* indices, const void* values, void* out);

}  // namespace mt
