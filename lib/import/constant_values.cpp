#include "lib/import/constant_values.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "lib/core/float16.h"
#include "lib/core/error.h"

namespace mt::onnx_import {
namespace {

template <typename T>
T load(const std::byte* data, size_t i) {
  T value;
  std::memcpy(&value, data + i * sizeof(T), sizeof(T));
  return value;
}

template <typename T>
void store(std::byte* data, size_t i, T value) {
  std::memcpy(data + i * sizeof(T), &value, sizeof(T));
}

// A float converted to an integer type: truncated toward zero and saturated (NaN gives 0), so
// no value read from a file makes the conversion undefined.
template <typename Out>
Out convert(double value) {
  if constexpr (std::is_integral_v<Out>) {
    if (std::isnan(value)) return Out{0};
    if (value <= static_cast<double>(std::numeric_limits<Out>::lowest())) return std::numeric_limits<Out>::lowest();
    if (value >= static_cast<double>(std::numeric_limits<Out>::max())) return std::numeric_limits<Out>::max();
  }
  return static_cast<Out>(value);
}

// Element i of a constant as Out.
template <typename Out>
Out element(const TensorInfo& tensor, size_t i) {
  const std::byte* data = tensor.data.data();
  switch (tensor.dtype) {
    case DType::f32:
      return convert<Out>(load<float>(data, i));
    case DType::f16:
      return convert<Out>(half_to_float(load<uint16_t>(data, i)));
    case DType::i8:
      return static_cast<Out>(load<int8_t>(data, i));
    case DType::u8:
      return static_cast<Out>(load<uint8_t>(data, i));
    case DType::i32:
      return static_cast<Out>(load<int32_t>(data, i));
    case DType::i64:
      return static_cast<Out>(load<int64_t>(data, i));
    case DType::boolean:
      return static_cast<Out>(load<uint8_t>(data, i) != 0);
  }
  return Out{};
}

template <typename In>
int64_t integer_value(In value) {
  if constexpr (std::is_integral_v<In>)
    return value;
  else
    return convert<int64_t>(value);
}

template <typename In>
TensorInfo make(std::string name, DType dtype, Shape shape, std::span<const In> values) {
  TensorInfo info{.name = std::move(name), .dtype = dtype, .shape = std::move(shape)};
  if (static_cast<int64_t>(values.size()) != info.numel())
    throw Error(ExitCode::failure, fmt::format("internal: constant '{}' of shape {} given {} values", info.name,
                                               shape_str(info.shape), values.size()));
  info.data = ConstData::allocate(info.byte_size());
  std::byte* out = info.data.mutable_data();
  for (size_t i = 0; i < values.size(); ++i) {
    const In v = values[i];
    switch (dtype) {
      case DType::f32:
        store(out, i, static_cast<float>(v));
        break;
      case DType::f16:
        store(out, i, float_to_half(static_cast<float>(v)));
        break;
      case DType::i8:
        store(out, i, static_cast<int8_t>(integer_value(v)));
        break;
      case DType::u8:
        store(out, i, static_cast<uint8_t>(integer_value(v)));
        break;
      case DType::i32:
        store(out, i, static_cast<int32_t>(integer_value(v)));
        break;
      case DType::i64:
        store(out, i, integer_value(v));
        break;
      case DType::boolean:
        store(out, i, static_cast<uint8_t>(v != In{0}));
        break;
    }
  }
  return info;
}

}  // namespace

bool is_integer(DType dtype) { return !is_float(dtype); }
bool is_float(DType dtype) { return dtype == DType::f32 || dtype == DType::f16; }

std::vector<int64_t> read_ints(const TensorInfo& tensor) {
  std::vector<int64_t> values(static_cast<size_t>(tensor.numel()));
  for (size_t i = 0; i < values.size(); ++i) values[i] = element<int64_t>(tensor, i);
  return values;
}

std::vector<double> read_doubles(const TensorInfo& tensor) {
  std::vector<double> values(static_cast<size_t>(tensor.numel()));
  for (size_t i = 0; i < values.size(); ++i) values[i] = element<double>(tensor, i);
  return values;
}

TensorInfo make_constant(std::string name, DType dtype, Shape shape, std::span<const int64_t> values) {
  return make(std::move(name), dtype, std::move(shape), values);
}

TensorInfo make_constant(std::string name, DType dtype, Shape shape, std::span<const double> values) {
  return make(std::move(name), dtype, std::move(shape), values);
}

}  // namespace mt::onnx_import
