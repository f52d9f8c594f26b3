// How the dense conv shaders (conv2d.comp, pointwise.comp, winograd_gemm.comp) spread their work:
// each invocation computes a tile along x for OBS blocks of 4 output channels (2 when every block
// reads every input block, so each input texel feeds 8 channels), and the 64-invocation workgroup is
// shaped to the layer: along x up to 64 tiles, along y as many (image, block group) pairs as fill the
// rest, so that a layer with few pixels (7x7) keeps its lanes busy.
#pragma once

#include <array>
#include <cstdint>

namespace mt::vulkan {

inline uint32_t u32(int64_t value) { return static_cast<uint32_t>(value); }
inline uint32_t ceil_div(int64_t a, int64_t b) { return static_cast<uint32_t>((a + b - 1) / b); }

struct ConvGrid {
  uint32_t blocks_per_invocation;  // the shaders' OBS spec constant
  std::array<uint32_t, 3> local;   // workgroup size
  std::array<uint32_t, 3> groups;  // workgroup counts; z: `depth`
};

// `tiles`: invocations along x; `images` x `out_blocks`: the output blocks along y;
// `blocks_share_inputs`: every output block reads every input block (one group); then
// `shared_blocks` of them per invocation (conv2d_int8 takes 4 for kernels above 1x1).
inline ConvGrid conv_grid(int64_t tiles, int64_t images, int64_t out_blocks, bool blocks_share_inputs,
                          uint32_t depth = 1, int64_t shared_blocks = 2) {
  const int64_t per_invocation = blocks_share_inputs && out_blocks > 1 ? shared_blocks : 1;
  const int64_t block_groups = (out_blocks + per_invocation - 1) / per_invocation;
  uint32_t local_x = 1;
  while (local_x < 64 && local_x < tiles) local_x *= 2;
  const uint32_t local_y = 64 / local_x;
  return {u32(per_invocation), {local_x, local_y, 1},
          {ceil_div(tiles, local_x), ceil_div(images * block_groups, local_y), depth}};
}

}  // namespace mt::vulkan
