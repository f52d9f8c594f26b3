// Small checks shared by the shape functions of the op families: "same as input 0", axis and
// rank validation, dtype agreement. Each fails through InferContext, naming the node.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "lib/ops/registry.h"

namespace mt {

// Output 0 has input 0's dtype and shape (element-wise unary ops).
std::vector<TensorType> same_as_input0(const InferContext& context);

// True for float32 and float16.
bool is_floating(DType dtype);

// Fails unless input `index` has rank in [min_rank, max_rank].
void require_rank(const InferContext& context, size_t index, size_t min_rank, size_t max_rank = SIZE_MAX);

// Fails unless input `index` has the dtype of input `reference`. Integer operands of quantized
// ops (int8 data with int32 bias, uint8 with int8 weights) may differ from each other; a
// floating-point operand must match exactly.
void require_matching_dtype(const InferContext& context, size_t index, size_t reference);

// Fails unless input `index` has exactly the dtype of input `reference` (no exception for integers).
void require_same_dtype(const InferContext& context, size_t index, size_t reference);

// The axis attribute `attr` (value `axis`) normalised against `rank`; fails if out of range.
int checked_axis(const InferContext& context, std::string_view attr, int64_t axis, size_t rank);

// Fails unless integer attribute `attr` is 0 or 1.
bool checked_flag(const InferContext& context, std::string_view attr);

// Fails unless the shape of input `index` broadcasts to `target` without changing it
// (unidirectional numpy broadcasting, as ONNX PRelu and LayerNormalization scale use).
void require_broadcasts_to(const InferContext& context, size_t index, const Shape& target, std::string_view what);

}  // namespace mt
