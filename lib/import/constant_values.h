// Reading and writing the values of small constant tensors (shapes, axes, scales, scalars)
// as 64-bit integers or doubles, whatever their element type.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "lib/ir/tensor.h"

namespace mt::onnx_import {

bool is_integer(DType dtype);  // int8/uint8/int32/int64/bool
bool is_float(DType dtype);    // float32/float16

// The elements of a constant, converted. Floats read as integers truncate toward zero.
std::vector<int64_t> read_ints(const TensorInfo& tensor);
std::vector<double> read_doubles(const TensorInfo& tensor);

// A constant tensor of `dtype` holding `values` (converted; booleans become 0/1).
TensorInfo make_constant(std::string name, DType dtype, Shape shape, std::span<const int64_t> values);
TensorInfo make_constant(std::string name, DType dtype, Shape shape, std::span<const double> values);

}  // namespace mt::onnx_import
