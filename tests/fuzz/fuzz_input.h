// The fuzz input as the readers get it from read_input: a private, 64-byte aligned copy of exactly
// `size` bytes, so AddressSanitizer reports any read past the end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>

#include "lib/core/file_io.h"

namespace mt::fuzz {

inline InputBytes aligned_copy(const uint8_t* data, size_t size, const char* source) {
  constexpr std::align_val_t alignment{64};
  auto* bytes = static_cast<std::byte*>(::operator new[](size, alignment));
  std::shared_ptr<std::byte> owner(bytes, [](std::byte* p) { ::operator delete[](p, alignment); });
  if (size > 0) std::memcpy(bytes, data, size);
  return InputBytes{.owner = owner, .data = bytes, .size = size, .source = source};
}

}  // namespace mt::fuzz
