// The channel-packed device layout (kernels/vulkan/plan/packed_layout.h) and the views shaders read:
// strides, texel counts, reshapes that need no copy, and views with axes added. No device needed.
#include <doctest/doctest.h>

#include <vector>

#include "kernels/vulkan/plan/packed_layout.h"
#include "lib/core/error.h"

using namespace mt;
using namespace mt::vulkan;

TEST_CASE("packed_layout: NC4HW4 strides and texels") {
  // [2, 5, 3, 4]: 5 channels are 2 blocks; texels row-major over (n, block, h, w).
  const PackedLayout nchw = packed_layout({2, 5, 3, 4});
  CHECK(nchw.packed_axis == 1);
  CHECK(nchw.blocks() == 2);
  CHECK(nchw.strides == std::vector<int64_t>{24, 12, 4, 1});
  CHECK(nchw.texels == 48);
  CHECK(nchw.bytes(false) == 48 * 16);
  CHECK(nchw.bytes(true) == 48 * 8);

  // Rank 1 packs axis 0; a scalar is stored as [1]; 4 channels are exactly one block.
  const PackedLayout vector = packed_layout({7});
  CHECK(vector.packed_axis == 0);
  CHECK(vector.texels == 2);
  CHECK(vector.strides == std::vector<int64_t>{1});
  const PackedLayout scalar = packed_layout({});
  CHECK(scalar.dims == Shape{1});
  CHECK(scalar.texels == 1);
  CHECK(packed_layout({3, 4}).texels == 3);
  CHECK(packed_layout({1, 8, 1, 1}).texels == 2);
}

TEST_CASE("packed_layout: reshapes that keep every element in place") {
  CHECK(same_placement({1, 8, 4, 4}, {1, 8, 16}));           // trailing axes merged
  CHECK(same_placement({2, 8, 16}, {2, 8, 4, 4}));           // and split again
  CHECK_FALSE(same_placement({1, 8, 4, 4}, {1, 16, 2, 4}));  // the packed axis changes
  CHECK_FALSE(same_placement({2, 8, 4}, {1, 16, 4}));        // the batch moves into the channels
  // With one channel every element is alone in its texel, so only the count matters; [16] packs
  // its elements 4 to a texel, though.
  CHECK(same_placement({2, 1, 3}, {6, 1}));
  CHECK_FALSE(same_placement({1, 1, 4, 4}, {16}));
}

TEST_CASE("packed_layout: views as shaders read them") {
  const View view = view_of(packed_layout({2, 5, 3, 4}));
  CHECK(view.rank == 4);
  CHECK(view.packed == 1);
  CHECK(view.dims == std::array<int32_t, kMaxRank>{2, 5, 3, 4, 1, 1});
  CHECK(view.strides == std::array<int32_t, kMaxRank>{24, 12, 4, 1, 0, 0});

  // 14 words: rank, packed axis, 6 dims, 6 strides (shaders/common.glsl).
  std::vector<uint32_t> words{99};
  view.append_to(words);
  CHECK(words == std::vector<uint32_t>{99, 4, 1, 2, 5, 3, 4, 1, 1, 24, 12, 4, 1, 0, 0});

  // Broadcasting aligns a [5, 3] tensor (packed axis 1, one block) to rank 4: two leading unit axes
  // of stride 0.
  const View small = aligned(view_of(packed_layout({5, 3})), 4);
  CHECK(small.rank == 4);
  CHECK(small.packed == 3);
  CHECK(small.dims == std::array<int32_t, kMaxRank>{1, 1, 5, 3, 1, 1});
  CHECK(small.strides == std::array<int32_t, kMaxRank>{0, 0, 1, 1, 0, 0});

  // An axis inserted after the packed one leaves the packed index alone.
  const View unsqueezed = with_unit_axis(view, 2);
  CHECK(unsqueezed.rank == 5);
  CHECK(unsqueezed.packed == 1);
  CHECK(unsqueezed.dims == std::array<int32_t, kMaxRank>{2, 5, 1, 3, 4, 1});
  CHECK(unsqueezed.strides == std::array<int32_t, kMaxRank>{24, 12, 0, 4, 1, 0});
}

TEST_CASE("packed_layout: shaders address at most rank 6") {
  CHECK_THROWS_AS(view_of(packed_layout({1, 2, 1, 2, 1, 2, 1})), Error);
  View six = view_of(packed_layout({1, 2, 1, 2, 1, 2}));
  try {
    with_unit_axis(six, 0);
    FAIL("a seventh axis must be refused");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::unsupported);
    CHECK(std::string(e.what()) == "vulkan: rank 7 tensors are not supported (at most 6)");
  }
}
