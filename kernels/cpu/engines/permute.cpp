#include "kernels/cpu/engines/permute.h"

#include <algorithm>
#include <cstring>

#include "kernels/cpu/plan/parallel.h"

namespace mt::cpu {
namespace {

template <typename T>
void transpose_block(const T* source, T* destination, int64_t rows, int64_t columns, int64_t source_stride,
                     int64_t destination_stride) {
  // destination[r + c * destination_stride] = source[r * source_stride + c]: r is the
  // destination's contiguous dim, c the source's.
  constexpr int64_t kBlock = 64 / sizeof(T) < 16 ? 16 : 32;
  if (rows == 2 && destination_stride == 2) {
    // Two rows interleaved (ShuffleNet's channel shuffle in NHWC: each pixel's two halves of its
    // channels): a loop the compiler vectorises with unpack instructions.
    const T* a = source;
    const T* b = source + source_stride;
    for (int64_t c = 0; c < columns; ++c) {
      destination[2 * c] = a[c];
      destination[2 * c + 1] = b[c];
    }
    return;
  }
  if (rows < 8) {
    // A few destination-contiguous elements (NHWC with few channels): stream along the source.
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < columns; ++c) destination[r + c * destination_stride] = source[r * source_stride + c];
    return;
  }
  for (int64_t r0 = 0; r0 < rows; r0 += kBlock) {
    const int64_t r1 = std::min(rows, r0 + kBlock);
    for (int64_t c = 0; c < columns; ++c) {
      T* out = destination + c * destination_stride;
      const T* in = source + c;
      for (int64_t r = r0; r < r1; ++r) out[r] = in[r * source_stride];
    }
  }
}

// Source-contiguous elements per transpose work unit: at least 32, and enough that a unit moves
// about 2048 elements when the destination's contiguous dim is short.
int64_t tile_for(int64_t rows) { return std::max<int64_t>(32, 2048 / std::max<int64_t>(1, rows)); }

}  // namespace

Permute::Permute(const Shape& source_shape, const std::vector<int>& perm, size_t element_size)
    : element_size_(element_size), count_(numel(source_shape)) {
  std::vector<int64_t> source_strides(source_shape.size(), 1);
  for (size_t d = source_shape.size(); d-- > 1;) source_strides[d - 1] = source_strides[d] * source_shape[d];

  std::vector<Dim> dims;  // destination order, sizes > 1, adjacent runs merged
  for (int d : perm) {
    if (source_shape[d] == 1) continue;
    if (!dims.empty() && dims.back().stride[kSource] == source_strides[d] * source_shape[d]) {
      dims.back().size *= source_shape[d];
      dims.back().stride[kSource] = source_strides[d];
    } else {
      dims.push_back({source_shape[d], {source_strides[d], 0}});
    }
  }
  // The destination is contiguous in this order; its strides follow from the merged sizes.
  int64_t stride = 1;
  for (size_t d = dims.size(); d-- > 0;) {
    dims[d].stride[kDestination] = stride;
    stride *= dims[d].size;
  }
  if (dims.empty() || count_ == 0) return;
  inner_ = dims.back();
  dims.pop_back();
  if (inner_.stride[kSource] != 1) {
    transpose_ = true;
    auto contiguous = std::find_if(dims.begin(), dims.end(), [](const Dim& dim) { return dim.stride[kSource] == 1; });
    transposed_ = *contiguous;
    dims.erase(contiguous);
    tile_ = std::min(transposed_.size, tile_for(inner_.size));
    tiles_ = (transposed_.size + tile_ - 1) / tile_;
  }
  check_loop_depth(dims, "transpose");
  outer_ = std::move(dims);
}

void Permute::copy_rows(const std::byte* source, std::byte* destination, size_t begin, size_t end) const {
  const size_t row_bytes = static_cast<size_t>(inner_.size) * element_size_;
  StridedWalk<2> walk(outer_, begin);
  for (size_t i = begin; i < end; ++i, walk.next())
    std::memcpy(destination + walk[kDestination] * element_size_, source + walk[kSource] * element_size_, row_bytes);
}

void Permute::transpose_tiles(const std::byte* source, std::byte* destination, size_t begin, size_t end) const {
  for (size_t unit = begin; unit < end; ++unit) {
    const size_t outer = unit / static_cast<size_t>(tiles_);
    const int64_t c0 = static_cast<int64_t>(unit % static_cast<size_t>(tiles_)) * tile_;
    const int64_t columns = std::min(tile_, transposed_.size - c0);
    const StridedWalk<2> walk(outer_, outer);
    const int64_t in = walk[kSource] + c0;
    const int64_t out = walk[kDestination] + c0 * transposed_.stride[kDestination];
    auto run = [&]<typename T>(T*) {
      transpose_block(reinterpret_cast<const T*>(source) + in, reinterpret_cast<T*>(destination) + out, inner_.size,
                      columns, inner_.stride[kSource], transposed_.stride[kDestination]);
    };
    switch (element_size_) {
      case 1: run(static_cast<uint8_t*>(nullptr)); break;
      case 2: run(static_cast<uint16_t*>(nullptr)); break;
      case 4: run(static_cast<uint32_t*>(nullptr)); break;
      default: run(static_cast<uint64_t*>(nullptr)); break;
    }
  }
}

void Permute::run(const void* source, void* destination, ThreadPool* pool) const {
  if (count_ == 0) return;
  const auto* in = static_cast<const std::byte*>(source);
  auto* out = static_cast<std::byte*>(destination);
  size_t outer_count = 1;
  for (const Dim& dim : outer_) outer_count *= static_cast<size_t>(dim.size);
  if (!transpose_) {
    const size_t min_rows = std::max<size_t>(1, 16384 / std::max<size_t>(1, inner_.size * element_size_));
    parallel_chunks(pool, outer_count, min_rows, [&](size_t begin, size_t end) { copy_rows(in, out, begin, end); });
    return;
  }
  const size_t units = outer_count * static_cast<size_t>(tiles_);
  const size_t min_units = std::max<size_t>(1, 4096 / static_cast<size_t>(std::max<int64_t>(1, inner_.size * tile_)));
  parallel_chunks(pool, units, min_units, [&](size_t begin, size_t end) { transpose_tiles(in, out, begin, end); });
}

}  // namespace mt::cpu
