#include "lib/ir/tensor.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "lib/core/memory_limit.h"

namespace mt {

ConstData ConstData::allocate(size_t size) {
  constexpr size_t kAlign = 64;
  const size_t rounded = (size + kAlign - 1) / kAlign * kAlign;
  // Inputs, outputs and images are sized by a model: a large one is checked first.
  check_memory_available(rounded, "a tensor");
  void* block = std::aligned_alloc(kAlign, rounded == 0 ? kAlign : rounded);
  if (block == nullptr) throw std::bad_alloc();
  std::memset(block, 0, rounded == 0 ? kAlign : rounded);
  std::shared_ptr<const void> owner(block, [](const void* p) { std::free(const_cast<void*>(p)); });
  return ConstData(std::move(owner), static_cast<const std::byte*>(block), size);
}

ConstData ConstData::copy_of(const void* data, size_t size) {
  ConstData result = allocate(size);
  if (size > 0) std::memcpy(result.mutable_data(), data, size);
  return result;
}

int64_t TensorInfo::numel() const { return mt::numel(shape); }

size_t TensorInfo::byte_size() const { return static_cast<size_t>(numel()) * dtype_size(dtype); }

}  // namespace mt
