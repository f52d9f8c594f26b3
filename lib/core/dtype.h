// Element types of tensors, with their sizes and the names used in model files and on
// the command line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace mt {

enum class DType : uint8_t { f32, f16, i8, u8, i32, i64, boolean };

size_t dtype_size(DType dtype);
std::string_view dtype_name(DType dtype);  // "float32", "int8", ...
std::optional<DType> dtype_from_name(std::string_view name);

}  // namespace mt
