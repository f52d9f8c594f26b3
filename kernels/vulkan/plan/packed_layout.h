// The layout of tensors on the device: channels packed by 4 (NC4HW4 for NCHW tensors). The packed
// axis (1, or 0 for rank-1 tensors; a scalar is stored as [1]) is cut into blocks of 4; a texel (one
// vec4) holds one block at one position, and texels are row-major over the other axes with the
// block index in the packed axis' place. Lanes past the end of the packed axis are zero.
// Views are how shaders address tensors (shaders/common.glsl).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "lib/ir/shape.h"

namespace mt::vulkan {

inline constexpr int kMaxRank = 6;  // shaders address tensors of rank 1 to 6

struct PackedLayout {
  Shape dims;                    // rank >= 1
  int packed_axis = 0;           // 1 for rank >= 2, else 0
  std::vector<int64_t> strides;  // texel strides per axis (the packed axis: per block)
  int64_t texels = 0;

  int64_t blocks() const { return (dims[static_cast<size_t>(packed_axis)] + 3) / 4; }
  // Bytes on the device: 4 lanes of 2 (fp16) or 4 (fp32) bytes per texel.
  size_t bytes(bool fp16) const { return static_cast<size_t>(texels) * 4 * (fp16 ? 2 : 4); }
};

// The layout of a tensor of `shape` (rank 0 becomes [1]).
PackedLayout packed_layout(const Shape& shape);

// Two shapes whose elements lie at the same places, so one can be a view of the other with no
// copy (a reshape that keeps the packed axis and the order of everything around it).
bool same_placement(const Shape& a, const Shape& b);

// What a shader reads at a view's place in its parameters (shaders/common.glsl, 14 words).
struct View {
  int rank = 1;
  int packed = 0;
  std::array<int32_t, kMaxRank> dims{1, 1, 1, 1, 1, 1};
  std::array<int32_t, kMaxRank> strides{};

  void append_to(std::vector<uint32_t>& words) const;
};

// The view of a tensor stored in `layout`.
View view_of(const PackedLayout& layout);
// The same elements seen with `rank` axes, size-1 axes added in front (numpy broadcasting).
View aligned(const View& view, int rank);
// The same elements with a size-1 axis inserted before axis `position` (0..rank).
View with_unit_axis(const View& view, int position);

}  // namespace mt::vulkan
