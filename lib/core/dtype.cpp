#include "lib/core/dtype.h"

#include <array>

namespace mt {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  size_t size;
};

constexpr std::array<DTypeInfo, 7> kDTypes = {{
    {DType::f32, "float32", 4},
    {DType::f16, "float16", 2},
    {DType::i8, "int8", 1},
    {DType::u8, "uint8", 1},
    {DType::i32, "int32", 4},
    {DType::i64, "int64", 8},
    {DType::boolean, "bool", 1},
}};

}  // namespace

size_t dtype_size(DType dtype) { return kDTypes[static_cast<size_t>(dtype)].size; }

std::string_view dtype_name(DType dtype) { return kDTypes[static_cast<size_t>(dtype)].name; }

std::optional<DType> dtype_from_name(std::string_view name) {
  for (const auto& info : kDTypes)
    if (info.name == name) return info.dtype;
  return std::nullopt;
}

}  // namespace mt
