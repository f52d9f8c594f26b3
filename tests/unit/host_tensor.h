// The one host tensor type of the unit tests: dtype, shape and row-major bytes, with typed
// constructors and readers, and seeded random data. The reference-kernel tests feed it to single
// kernels, the cpu tests to whole graphs, and the golden tables hold PyTorch's results in it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "lib/core/dtype.h"
#include "lib/ir/shape.h"

namespace mt::test {

struct HostTensor {
  DType dtype = DType::f32;
  Shape shape;
  std::vector<std::byte> bytes;

  // A tensor of `values` (row-major). Throws std::invalid_argument (a test failure inside a test
  // case) when T does not match the dtype or the count the shape; no doctest macro, so that
  // golden tables can be built during static initialisation.
  template <typename T>
  static HostTensor of(DType dtype, Shape shape, const std::vector<T>& values) {
    if (sizeof(T) != dtype_size(dtype))
      throw std::invalid_argument("HostTensor: element type does not match the dtype");
    if (static_cast<int64_t>(values.size()) != numel(shape))
      throw std::invalid_argument("HostTensor: " + std::to_string(values.size()) + " values for shape " +
                                  shape_str(shape));
    HostTensor tensor{dtype, std::move(shape), std::vector<std::byte>(values.size() * sizeof(T))};
    if (!values.empty()) std::memcpy(tensor.bytes.data(), values.data(), tensor.bytes.size());
    return tensor;
  }

  template <typename T>
  std::vector<T> values() const {
    if (sizeof(T) != dtype_size(dtype))
      throw std::invalid_argument("HostTensor: element type does not match the dtype");
    std::vector<T> result(bytes.size() / sizeof(T));
    if (!result.empty()) std::memcpy(result.data(), bytes.data(), bytes.size());
    return result;
  }
  std::vector<float> floats() const { return values<float>(); }
};

inline HostTensor f32(Shape shape, const std::vector<float>& values) {
  return HostTensor::of(DType::f32, std::move(shape), values);
}
inline HostTensor i64(Shape shape, const std::vector<int64_t>& values) {
  return HostTensor::of(DType::i64, std::move(shape), values);
}
inline HostTensor i32(Shape shape, const std::vector<int32_t>& values) {
  return HostTensor::of(DType::i32, std::move(shape), values);
}

// `count` deterministic floats uniform in [low, high) from `seed` (std::mt19937).
inline std::vector<float> random_floats(size_t count, uint32_t seed, float low = -1.0f, float high = 1.0f) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> distribution(low, high);
  std::vector<float> values(count);
  for (float& v : values) v = distribution(generator);
  return values;
}

// A float32 tensor of random_floats.
inline HostTensor random(Shape shape, uint32_t seed, float low = -1.0f, float high = 1.0f) {
  std::vector<float> values = random_floats(static_cast<size_t>(numel(shape)), seed, low, high);
  return f32(std::move(shape), values);
}

}  // namespace mt::test
