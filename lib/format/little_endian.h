// Little-endian integers in a byte buffer, as every integer of the .mt format is stored.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mt {

template <typename T>
void put_le(std::byte* at, T value) {
  for (size_t i = 0; i < sizeof(T); ++i)
    at[i] = static_cast<std::byte>((static_cast<uint64_t>(value) >> (8 * i)) & 0xff);
}

template <typename T>
T get_le(const std::byte* at) {
  uint64_t value = 0;
  for (size_t i = sizeof(T); i-- > 0;) value = (value << 8) | static_cast<uint64_t>(at[i]);
  return static_cast<T>(value);
}

}  // namespace mt
