// Cases of the pool family: kernel sizes, strides, pads (incl. asymmetric), ceil_mode (including
// the rule that drops a window starting in the padding), dilations, count_include_pad; global
// pooling on square, non-square and 1x1 inputs.
#include "tests/ops/op_cases.h"

namespace mt::optest {

void add_pool_cases(CaseTable& t) {
  struct PoolCase {
    std::string name;
    Shape x;
    Ints kernel, strides = {1, 1}, pads = {0, 0, 0, 0};
    int64_t ceil_mode = 0;
    Ints dilations = {1, 1};   // max only
    int64_t count_include_pad = 0;  // avg only
  };
  const std::vector<PoolCase> cases = {
      {"2x2 s2", {1, 4, 8, 8}, {2, 2}, {2, 2}},
      {"3x3 s2 p1 odd channels", {1, 5, 9, 9}, {3, 3}, {2, 2}, {1, 1, 1, 1}},
      {"3x3 s1 p1", {2, 3, 6, 7}, {3, 3}, {1, 1}, {1, 1, 1, 1}},
      {"asymmetric pads 0,1,1,0", {1, 3, 7, 7}, {3, 3}, {2, 2}, {0, 1, 1, 0}},
      {"ceil_mode 3x3 s2 on 10x10", {1, 2, 10, 10}, {3, 3}, {2, 2}, {0, 0, 0, 0}, 1},
      {"ceil_mode drops a window in the padding", {1, 2, 5, 5}, {2, 2}, {2, 2}, {1, 1, 1, 1}, 1},
      {"ceil_mode with pads, 11x9", {1, 3, 11, 9}, {3, 3}, {2, 2}, {1, 1, 1, 1}, 1},
      {"non-square 2x3 kernel, strides 1,2", {1, 2, 7, 9}, {2, 3}, {1, 2}},
      {"kernel equals input", {1, 6, 5, 5}, {5, 5}, {1, 1}},
  };
  for (const auto& c : cases) {
    Attributes attrs = {{"kernel_shape", c.kernel}, {"strides", c.strides}, {"pads", c.pads}, {"ceil_mode", c.ceil_mode}};
    t.add("max_pool2d", {.name = c.name, .inputs = {in(c.x, -5, 5)}, .attrs = attrs});
    t.add("max_pool2d_indices", {.name = c.name, .inputs = {in(c.x, -5, 5)}, .attrs = attrs});
    t.add("avg_pool2d", {.name = c.name, .inputs = {in(c.x, -5, 5)}, .attrs = attrs});
    if (c.pads != Ints{0, 0, 0, 0}) {
      attrs["count_include_pad"] = int64_t{1};
      t.add("avg_pool2d", {.name = c.name + ", count_include_pad", .inputs = {in(c.x, -5, 5)}, .attrs = attrs});
    }
  }
  t.add("max_pool2d", {.name = "dilation 2", .inputs = {in({1, 3, 9, 9})},
                       .attrs = {{"kernel_shape", Ints{3, 3}}, {"dilations", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}});
  t.add("max_pool2d", {.name = "dilations 2,1 stride 2 ceil", .inputs = {in({1, 2, 10, 8})},
                       .attrs = {{"kernel_shape", Ints{2, 2}}, {"dilations", Ints{2, 1}}, {"strides", Ints{2, 2}}, {"ceil_mode", int64_t{1}}}});
  t.add("max_pool2d", {.name = "all negative inputs with padding", .inputs = {in({1, 2, 5, 5}, -9, -1)},
                       .attrs = {{"kernel_shape", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}}});
  // engines/max_pool.h's float32 path: 16-lane blocks and a tail, two images, and 24 KiB of
  // output, split between two threads.
  t.add("max_pool2d", {.name = "37 channels, 2 images, 3x3 s2 p1",
                       .inputs = {in({2, 37, 7, 6})},
                       .attrs = {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}});
  t.add("max_pool2d", {.name = "24x32x32 3x3 s2 p1 (split across threads)",
                       .inputs = {in({1, 24, 32, 32})},
                       .attrs = {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}});
  t.add("max_pool2d_indices",
        {.name = "dilation 2, padding",
         .inputs = {in({2, 3, 9, 9})},
         .attrs = {{"kernel_shape", Ints{3, 3}}, {"dilations", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}});
  t.add("max_pool2d_indices",
        {.name = "column-major (storage_order 1), stride 2",
         .inputs = {in({2, 2, 7, 5})},
         .attrs = {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"storage_order", int64_t{1}}}});
  t.add("max_pool2d_indices", {.name = "ties: the first position",
                               .inputs = {given(DType::f32, {1, 2, 4, 4}, {1, 1, 2, 0})},
                               .attrs = {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{1, 1}}}});
  // uint8 images: padding taps are skipped, so a window of small values keeps them (not 0).
  t.add("max_pool2d", {.name = "uint8, 5x5 padded 2, stride 2",
                       .inputs = {typed(DType::u8, {1, 3, 9, 7}, 0, 256)},
                       .attrs = {{"kernel_shape", Ints{5, 5}}, {"pads", Ints{2, 2, 2, 2}}, {"strides", Ints{2, 2}}}});

  for (const char* op : {"global_avg_pool", "global_max_pool"}) {
    t.add(op, {.name = "1x16x7x7", .inputs = {in({1, 16, 7, 7})}});
    t.add(op, {.name = "batch 2, odd 5x3x9", .inputs = {in({2, 5, 3, 9})}});
    t.add(op, {.name = "already 1x1", .inputs = {in({1, 8, 1, 1})}});
    t.add(op, {.name = "rank 3 [N,C,L]", .inputs = {in({2, 3, 10})}});
    // From 64 KiB on the cpu average sums four shares of the pixels apart (split across threads):
    // a block of 64 channels and a tail of 6, two images.
    t.add(op, {.name = "batch 2, 70x20x13 (pixel shares)", .inputs = {in({2, 70, 20, 13})}});
  }
}

}  // namespace mt::optest
