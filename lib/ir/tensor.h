// A tensor of the graph: name, element type, shape, storage layout, optional int8
// quantization parameters and, for constants (weights), its bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "lib/core/dtype.h"
#include "lib/ir/shape.h"

namespace mt {

// Bytes of a constant tensor. The owner keeps them alive: a heap block, or the memory map of
// the model file they were read from (weights are used in place, never copied on load).
class ConstData {
 public:
  ConstData() = default;
  ConstData(std::shared_ptr<const void> owner, const std::byte* data, size_t size)
      : owner_(std::move(owner)), data_(data), size_(size) {}

  // A new 64-byte aligned, zero-filled heap block of `size` bytes; fill it through mutable_data().
  static ConstData allocate(size_t size);
  static ConstData copy_of(const void* data, size_t size);

  const std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return owner_ == nullptr; }
  std::span<const std::byte> bytes() const { return {data_, size_}; }
  template <typename T>
  std::span<const T> as() const { return {reinterpret_cast<const T*>(data_), size_ / sizeof(T)}; }
  // Only valid on a block made by allocate() and not yet shared.
  std::byte* mutable_data() { return const_cast<std::byte*>(data_); }

 private:
  std::shared_ptr<const void> owner_;
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
};

// Affine int8 quantization: real = scale * (q - zero_point); per tensor (axis < 0) or per
// channel along `axis` (one scale and zero point per channel).
struct QuantParams {
  std::vector<float> scales;
  std::vector<int32_t> zero_points;
  int axis = -1;
  bool operator==(const QuantParams&) const = default;
};

struct TensorInfo {
  std::string name;
  DType dtype = DType::f32;
  Shape shape;
  std::string layout;  // empty: row-major in the order of `shape`; otherwise set by prepack
  std::optional<QuantParams> quant;
  ConstData data;  // non-empty for constants

  bool is_constant() const { return !data.empty(); }
  int64_t numel() const;
  size_t byte_size() const;  // numel * dtype size; shapes are validated before this is used
};

}  // namespace mt
