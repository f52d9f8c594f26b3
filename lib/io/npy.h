// NumPy .npy files (format versions 1.0, 2.0 and 3.0): little-endian, C-order arrays of
// float32, float16, int8, uint8, int32, int64 and bool, read in place and written atomically.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "lib/core/file_io.h"
#include "lib/ir/tensor.h"

namespace mt {

// An n-dimensional array in host memory: row-major bytes of `dtype` elements.
struct HostArray {
  DType dtype = DType::f32;
  Shape shape;
  ConstData data;  // numel(shape) * dtype_size(dtype) bytes

  int64_t numel() const { return mt::numel(shape); }
  template <typename T>
  const T* as() const { return reinterpret_cast<const T*>(data.data()); }
};

// Parses .npy bytes. The header is checked strictly (magic, version, a dict with exactly 'descr',
// 'fortran_order' and 'shape') and the data size against the bytes present before anything is
// allocated. The result shares `input`'s bytes when they are suitably aligned. Fortran order,
// big-endian and other dtypes are Error(unsupported); malformed files Error(invalid_input), as
// "SOURCE: what is wrong".
HostArray decode_npy(const InputBytes& input);
HostArray read_npy(const std::string& path);

// The .npy encoding of an array (version 1.0, or 2.0 when the header needs it; header padded so
// the data starts at a multiple of 64 bytes).
std::vector<std::byte> encode_npy(DType dtype, const Shape& shape, const void* data);
// Writes a .npy file atomically ("-" writes to standard output, never to a terminal).
void write_npy(const std::string& path, DType dtype, const Shape& shape, const void* data);

}  // namespace mt
