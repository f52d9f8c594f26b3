#include "lib/import/onnx_tensor.h"

#include <charconv>
#include <cstring>
#include <filesystem>

#include "lib/core/error.h"

namespace mt::onnx_import {
namespace {

namespace fs = std::filesystem;
using onnx::TensorProto;

// Parses a non-negative decimal integer, the whole string.
std::optional<uint64_t> parse_size(const std::string& text) {
  uint64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

// Copies `count` elements of a repeated field into `out`, converting each with `convert`.
template <typename T, typename Field, typename Convert>
void copy_field(const Field& field, std::byte* out, Convert convert) {
  T* dst = reinterpret_cast<T*>(out);
  for (int i = 0; i < field.size(); ++i) dst[i] = convert(field.Get(i));
}

ConstData typed_field_data(const TensorProto& proto, DType dtype, int64_t count, const std::string& name) {
  auto require_count = [&](int size, const char* field) {
    if (size != count) invalid_input("tensor '{}': {} holds {} values, its shape needs {}", name, field, size, count);
  };
  ConstData data = ConstData::allocate(static_cast<size_t>(count) * dtype_size(dtype));
  std::byte* out = data.mutable_data();
  switch (dtype) {
    case DType::f32:
      require_count(proto.float_data_size(), "float_data");
      copy_field<float>(proto.float_data(), out, [](float v) { return v; });
      break;
    case DType::i64:
      require_count(proto.int64_data_size(), "int64_data");
      copy_field<int64_t>(proto.int64_data(), out, [](int64_t v) { return v; });
      break;
    case DType::i32:
      require_count(proto.int32_data_size(), "int32_data");
      copy_field<int32_t>(proto.int32_data(), out, [](int32_t v) { return v; });
      break;
    case DType::i8:
      require_count(proto.int32_data_size(), "int32_data");
      copy_field<int8_t>(proto.int32_data(), out, [](int32_t v) { return static_cast<int8_t>(v); });
      break;
    case DType::u8:
      require_count(proto.int32_data_size(), "int32_data");
      copy_field<uint8_t>(proto.int32_data(), out, [](int32_t v) { return static_cast<uint8_t>(v); });
      break;
    case DType::boolean:
      require_count(proto.int32_data_size(), "int32_data");
      copy_field<uint8_t>(proto.int32_data(), out, [](int32_t v) { return static_cast<uint8_t>(v != 0); });
      break;
    case DType::f16:  // int32_data holds the 16-bit patterns
      require_count(proto.int32_data_size(), "int32_data");
      copy_field<uint16_t>(proto.int32_data(), out, [](int32_t v) { return static_cast<uint16_t>(v & 0xffff); });
      break;
  }
  return data;
}

// Booleans must be 0 or 1 whatever bytes the file holds.
void normalise_booleans(ConstData& data) {
  std::byte* bytes = data.mutable_data();
  for (size_t i = 0; i < data.size(); ++i) bytes[i] = std::byte{bytes[i] != std::byte{0}};
}

ConstData external_data(const TensorProto& proto, size_t byte_size, const std::string& name, ExternalFiles& files) {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  for (const auto& entry : proto.external_data()) {
    if (entry.key() == "location") {
      location = entry.value();
    } else if (entry.key() == "offset" || entry.key() == "length") {
      auto value = parse_size(entry.value());
      if (!value)
        invalid_input("tensor '{}': external data {} '{}' is not a byte count", name, entry.key(), entry.value());
      (entry.key() == "offset" ? offset : length.emplace()) = *value;
    }
  }
  if (location.empty()) invalid_input("tensor '{}': external data has no location", name);
  const InputBytes& file = files.file(location, name);
  if (offset > file.size)
    invalid_input("tensor '{}': external data offset {} is beyond the end of {} ({} bytes)", name, offset, location,
                  file.size);
  const uint64_t available = file.size - offset;
  const uint64_t size = length.value_or(available);
  if (size > available)
    invalid_input("tensor '{}': external data range {}+{} is beyond the end of {} ({} bytes)", name, offset, size,
                  location, file.size);
  if (size != byte_size)
    invalid_input("tensor '{}': external data holds {} bytes, its shape and type need {}", name, size, byte_size);
  return ConstData::copy_of(file.data + offset, byte_size);
}

}  // namespace

std::optional<DType> dtype_from_onnx(int32_t onnx_type) {
  switch (onnx_type) {
    case TensorProto::FLOAT:
      return DType::f32;
    case TensorProto::FLOAT16:
      return DType::f16;
    case TensorProto::INT8:
      return DType::i8;
    case TensorProto::UINT8:
      return DType::u8;
    case TensorProto::INT32:
      return DType::i32;
    case TensorProto::INT64:
      return DType::i64;
    case TensorProto::BOOL:
      return DType::boolean;
    default:
      return std::nullopt;
  }
}

std::string onnx_type_name(int32_t onnx_type) {
  if (TensorProto::DataType_IsValid(onnx_type))
    return TensorProto::DataType_Name(static_cast<TensorProto::DataType>(onnx_type));
  return fmt::format("type {}", onnx_type);
}

const InputBytes& ExternalFiles::file(const std::string& location, const std::string& tensor_name) {
  if (auto it = files_.find(location); it != files_.end()) return it->second;
  if (model_dir_.empty())
    unsupported("tensor '{}': external data ('{}') needs the model as a file path, not standard input", tensor_name,
                location);
  const fs::path relative(location);
  const fs::path lexical = relative.lexically_normal();
  bool escapes = relative.is_absolute() || relative.has_root_name() || lexical.empty();
  if (!escapes && lexical.begin() != lexical.end() && *lexical.begin() == "..") escapes = true;
  const fs::path full = fs::path(model_dir_) / relative;
  if (!escapes) {
    // Symbolic links may still lead outside: compare the resolved paths too.
    std::error_code error;
    const fs::path dir = fs::weakly_canonical(fs::path(model_dir_), error);
    const fs::path target = fs::weakly_canonical(full, error);
    if (!error) {
      const auto rel = target.lexically_relative(dir);
      escapes = rel.empty() || *rel.begin() == "..";
    }
  }
  if (escapes)
    invalid_input("tensor '{}': external data location '{}' is outside the model's directory", tensor_name, location);
  InputBytes bytes;
  try {
    bytes = read_input(full.string());
  } catch (const Error& e) {
    invalid_input("tensor '{}': external data: {}", tensor_name, e.what());
  }
  return files_.emplace(location, std::move(bytes)).first->second;
}

TensorInfo tensor_from_onnx(const TensorProto& proto, const std::string& name, ExternalFiles& external) {
  auto dtype = dtype_from_onnx(proto.data_type());
  if (!dtype)
    unsupported("tensor '{}' has element type {}, which mt does not support", name, onnx_type_name(proto.data_type()));
  TensorInfo info{.name = name, .dtype = *dtype};
  for (int64_t dim : proto.dims()) {
    if (dim < 0) invalid_input("tensor '{}' has a negative dimension {}", name, dim);
    info.shape.push_back(dim);
  }
  auto count = checked_numel(info.shape);
  if (!count) invalid_input("tensor '{}' has shape {}, which is too large", name, shape_str(info.shape));
  if (proto.has_segment()) unsupported("tensor '{}' is segmented", name);
  const size_t byte_size = static_cast<size_t>(*count) * dtype_size(*dtype);

  if (proto.data_location() == TensorProto::EXTERNAL) {
    info.data = external_data(proto, byte_size, name, external);
  } else if (proto.has_raw_data()) {
    if (proto.raw_data().size() != byte_size)
      invalid_input("tensor '{}': raw_data holds {} bytes, shape {} of {} needs {}", name, proto.raw_data().size(),
                    shape_str(info.shape), dtype_name(*dtype), byte_size);
    info.data = ConstData::copy_of(proto.raw_data().data(), byte_size);
  } else {
    info.data = typed_field_data(proto, *dtype, *count, name);
  }
  if (info.dtype == DType::boolean) normalise_booleans(info.data);
  return info;
}

}  // namespace mt::onnx_import
