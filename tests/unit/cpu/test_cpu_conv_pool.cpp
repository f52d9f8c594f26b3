// Convolutions and pools on the cpu backend against the reference backend, over strides, pads,
// dilations, groups (depthwise, grouped), odd channel counts, fused clamps and ceil_mode.
#include "tests/unit/cpu/cpu_test_util.h"

namespace mt::test {

TEST_CASE("cpu: conv2d over a matrix of attributes") {
  struct Case {
    int64_t c, m, k, stride, pad, dilation, group;
    bool bias;
  };
  const std::vector<Case> cases{
      {3, 5, 3, 1, 1, 1, 1, true},  {3, 8, 3, 2, 1, 1, 1, true},  {4, 6, 1, 1, 0, 1, 1, false},
      {6, 6, 3, 1, 1, 1, 6, true},  {6, 6, 3, 2, 1, 1, 6, true},  {6, 12, 3, 1, 1, 1, 6, true},
      {8, 4, 3, 1, 2, 2, 2, true},  {5, 7, 5, 2, 2, 1, 1, false}, {7, 7, 5, 1, 2, 1, 7, true},
      {4, 4, 2, 2, 0, 1, 1, true},
  };
  for (const Case& c : cases) {
    INFO("C=", c.c, " M=", c.m, " k=", c.k, " stride=", c.stride, " pad=", c.pad, " dilation=", c.dilation,
         " group=", c.group);
    GraphBuilder b;
    const auto x = b.input("x", random({2, c.c, 9, 11}, 1));
    std::vector<std::string> inputs{x, b.constant("w", random({c.m, c.c / c.group, c.k, c.k}, 2))};
    if (c.bias) inputs.push_back(b.constant("b", random({c.m}, 3)));
    b.output(b.op("conv2d", inputs,
                  {{"strides", ints({c.stride, c.stride})},
                   {"pads", ints({c.pad, c.pad, c.pad, c.pad})},
                   {"dilations", ints({c.dilation, c.dilation})},
                   {"group", integer(c.group)}}));
    check_against_reference(b, 1e-5, 1e-5);
  }
}

TEST_CASE("cpu: conv2d with asymmetric pads and a fused clamp") {
  GraphBuilder b;
  const auto x = b.input("x", random({1, 3, 8, 7}, 1));
  b.output(b.op("conv2d", {x, b.constant("w", random({4, 3, 3, 2}, 2))},
                {{"pads", ints({0, 1, 2, 0})}, {"strides", ints({2, 1})}, {"act_min", real(0.0)},
                 {"act_max", real(0.3)}}));
  check_against_reference(b, 1e-5, 1e-5);
}

TEST_CASE("cpu: conv2d with weights computed at run time") {
  struct Case {
    int64_t c, m, k, stride, pad, dilation, group;
    bool bias;
  };
  const std::vector<Case> cases{{3, 5, 3, 1, 1, 1, 1, true}, {6, 4, 3, 2, 1, 1, 2, false}, {4, 4, 3, 1, 2, 2, 4, true}};
  for (const Case& c : cases) {
    INFO("C=", c.c, " M=", c.m, " k=", c.k, " stride=", c.stride, " group=", c.group);
    GraphBuilder b;
    std::vector<std::string> inputs{b.input("x", random({2, c.c, 7, 6}, 1)),
                                    b.input("w", random({c.m, c.c / c.group, c.k, c.k}, 2))};
    if (c.bias) inputs.push_back(b.input("b", random({c.m}, 3)));
    b.output(b.op("conv2d", inputs,
                  {{"strides", ints({c.stride, c.stride})},
                   {"pads", ints({c.pad, c.pad, c.pad, c.pad})},
                   {"dilations", ints({c.dilation, c.dilation})},
                   {"group", integer(c.group)},
                   {"act_min", real(-0.5)}}));
    check_against_reference(b, 1e-5, 1e-5);
  }
}

TEST_CASE("cpu: conv_transpose2d") {
  struct Case {
    int64_t c, m, k, stride, pad, output_padding, group, dilation;
  };
  const std::vector<Case> cases{{4, 3, 3, 2, 1, 1, 1, 1}, {4, 6, 2, 2, 0, 0, 2, 1}, {3, 5, 3, 1, 1, 0, 1, 2},
                                {6, 6, 4, 2, 1, 0, 6, 1}};
  for (const Case& c : cases) {
    INFO("C=", c.c, " M=", c.m, " k=", c.k, " stride=", c.stride, " group=", c.group);
    GraphBuilder b;
    const auto x = b.input("x", random({1, c.c, 5, 6}, 1));
    b.output(b.op("conv_transpose2d",
                  {x, b.constant("w", random({c.c, c.m / c.group, c.k, c.k}, 2)), b.constant("b", random({c.m}, 3))},
                  {{"strides", ints({c.stride, c.stride})},
                   {"pads", ints({c.pad, c.pad, c.pad, c.pad})},
                   {"output_padding", ints({c.output_padding, c.output_padding})},
                   {"dilations", ints({c.dilation, c.dilation})},
                   {"group", integer(c.group)}}));
    check_against_reference(b, 1e-5, 1e-5);
  }
}

TEST_CASE("cpu: max_pool2d and avg_pool2d") {
  struct Case {
    int64_t k, stride, pad, dilation, ceil, include_pad;
  };
  const std::vector<Case> cases{{2, 2, 0, 1, 0, 0}, {3, 2, 1, 1, 0, 0}, {3, 2, 1, 1, 1, 0}, {3, 2, 0, 1, 1, 0},
                                {3, 1, 1, 1, 0, 1}, {3, 2, 1, 1, 1, 1}, {1, 2, 0, 1, 0, 0}, {2, 1, 0, 2, 0, 0},
                                {3, 3, 1, 1, 1, 1}, {2, 2, 0, 1, 1, 1}};
  for (const char* op : {"max_pool2d", "avg_pool2d"}) {
    for (const Case& c : cases) {
      if (std::string(op) == "avg_pool2d" && c.dilation != 1) continue;
      INFO(std::string(op), " k=", c.k, " stride=", c.stride, " pad=", c.pad, " dilation=", c.dilation, " ceil=", c.ceil,
           " include_pad=", c.include_pad);
      GraphBuilder b;
      const auto x = b.input("x", random({2, 5, 9, 8}, 1));
      Attributes attrs{{"kernel_shape", ints({c.k, c.k})},
                       {"strides", ints({c.stride, c.stride})},
                       {"pads", ints({c.pad, c.pad, c.pad, c.pad})},
                       {"ceil_mode", integer(c.ceil)}};
      if (std::string(op) == "max_pool2d") attrs["dilations"] = ints({c.dilation, c.dilation});
      else attrs["count_include_pad"] = integer(c.include_pad);
      b.output(b.op(op, {x}, attrs));
      check_against_reference(b, 1e-5, 1e-5);
    }
  }
}

TEST_CASE("cpu: global pools") {
  for (const char* op : {"global_avg_pool", "global_max_pool"}) {
    INFO(std::string(op));
    SUBCASE("4-D after conv") {
      GraphBuilder b;
      b.output(b.op(op, {conv1x1(b, b.input("x", random({2, 3, 5, 6}, 1)), 3, 7, 2)}));
      check_against_reference(b);
    }
    SUBCASE("3-D") {
      GraphBuilder b;
      b.output(b.op(op, {b.input("x", random({2, 3, 10}, 1))}));
      check_against_reference(b);
    }
  }
}

}  // namespace mt::test
