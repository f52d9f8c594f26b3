// Cases of the sample family: grid_sample in every mode and padding mode, with and without
// align_corners, the grid reaching past the image; roi_align averaging and max, fixed and adaptive
// sampling, both coordinate transforms, int32 and int64 batch indices; max_unpool at MaxPool's
// positions (with repeats) and into a larger output.
#include <string>

#include "tests/ops/op_cases.h"

namespace mt::optest {

void add_sample_cases(CaseTable& t) {
  for (const char* mode : {"bilinear", "nearest", "bicubic"})
    for (const char* padding : {"zeros", "border", "reflection"})
      for (int64_t align : {0, 1}) {
        const std::string name = std::string(mode) + ", " + padding + (align != 0 ? ", align_corners" : "");
        // Grid points in [-1.3, 1.3): some outside the image, where the padding mode decides.
        t.add(
            "grid_sample",
            {.name = name,
             .inputs = {in({2, 3, 5, 6}), in({2, 4, 7, 2}, -1.3, 1.3)},
             .attrs = {{"mode", std::string(mode)}, {"padding_mode", std::string(padding)}, {"align_corners", align}}});
      }

  // Regions [x1, y1, x2, y2] from coordinates in [0, 9): some inverted or tiny, where the bins are empty.
  t.add("roi_align", {.name = "avg, sampling 2, output_half_pixel",
                      .inputs = {in({2, 3, 10, 9}), in({4, 4}, 0, 9), typed(DType::i64, {4}, 0, 2)},
                      .attrs = {{"output_height", int64_t{3}},
                                {"output_width", int64_t{4}},
                                {"sampling_ratio", int64_t{2}},
                                {"half_pixel", int64_t{0}}}});
  t.add("roi_align", {.name = "avg, adaptive sampling, half_pixel, scale 0.5",
                      .inputs = {in({1, 2, 8, 8}), in({3, 4}, 0, 16), typed(DType::i32, {3}, 0, 1)},
                      .attrs = {{"output_height", int64_t{2}}, {"output_width", int64_t{2}}, {"spatial_scale", 0.5}}});
  t.add("roi_align", {.name = "max, sampling 3",
                      .inputs = {in({2, 2, 7, 7}), in({3, 4}, 0, 7), typed(DType::i64, {3}, 0, 2, true)},
                      .attrs = {{"mode", std::string("max")},
                                {"output_height", int64_t{2}},
                                {"output_width", int64_t{3}},
                                {"sampling_ratio", int64_t{3}}}});

  // 2x2 windows, stride 2 of a 4x6 plane: each index in its window; all positions share a plane (repeats).
  t.add("max_unpool",
        {.name = "indices of a 2x3 pooled map",
         .inputs = {in({1, 2, 2, 3}), given(DType::i64, {1, 2, 2, 3}, {0, 3, 5, 13, 14, 23, 24, 27, 29, 37, 38, 47})},
         .attrs = {{"output_shape", Ints{1, 2, 4, 6}}}});
  t.add("max_unpool", {.name = "repeated indices, int32",
                       .inputs = {in({1, 1, 2, 2}), given(DType::i32, {1, 1, 2, 2}, {0, 0, 3, 3})},
                       .attrs = {{"output_shape", Ints{1, 1, 2, 2}}}});
  t.add("max_unpool", {.name = "into a larger output",
                       .inputs = {in({1, 1, 2, 2}), given(DType::i64, {1, 1, 2, 2}, {5, 7, 13, 15})},
                       .attrs = {{"output_shape", Ints{1, 1, 5, 5}}, {"index_shape", Ints{1, 1, 4, 4}}}});
}

}  // namespace mt::optest
