// Layout-sensitive ops on the cpu backend against the reference backend, each on a row-major
// input and on an NHWC conv output, so that every axis remapping is exercised.
#include <functional>

#include "tests/unit/cpu/cpu_test_util.h"

namespace mt::test {
namespace {

// x: [2, 4, 5, 6] either as given (row-major) or through an NHWC convolution.
std::string source(GraphBuilder& b, bool nhwc) {
  const auto x = b.input("x", random({2, 4, 5, 6}, 21));
  return nhwc ? conv1x1(b, x, 4, 4, 22) : x;
}

void for_both_layouts(const std::function<void(GraphBuilder&, const std::string&)>& body, double atol = 1e-5) {
  for (bool nhwc : {false, true}) {
    const char* where = nhwc ? "after conv (NHWC)" : "row-major input";
    INFO(where);
    GraphBuilder b;
    body(b, source(b, nhwc));
    check_against_reference(b, atol, atol);
  }
}

}  // namespace

TEST_CASE("cpu: reshape, flatten, squeeze, unsqueeze, identity") {
  for_both_layouts([](GraphBuilder& b, const std::string& x) {
    b.output(b.op("reshape", {x}, {{"shape", ints({2, 4, 30})}}));
    b.output(b.op("reshape", {x}, {{"shape", ints({8, 5, 6})}}));
    b.output(b.op("flatten", {x}, {{"axis", integer(1)}}));
    b.output(b.op("flatten", {x}, {{"axis", integer(3)}}));
    const auto u = b.op("unsqueeze", {x}, {{"axes", ints({0, 3})}});
    b.output(u);
    b.output(b.op("squeeze", {u}, {{"axes", ints({0})}}));
    b.output(b.op("identity", {x}));
  });
}

TEST_CASE("cpu: global pool, flatten and linear need no layout change") {
  GraphBuilder b;
  const auto y = conv1x1(b, b.input("x", random({2, 3, 4, 4}, 1)), 3, 8, 2);
  const auto pooled = b.op("global_avg_pool", {y});
  const auto flat = b.op("flatten", {pooled}, {{"axis", integer(1)}});
  b.output(b.op("linear", {flat, b.constant("w", random({5, 8}, 3)), b.constant("bias", random({5}, 4))}));
  check_against_reference(b);
}

TEST_CASE("cpu: transpose of any rank") {
  for_both_layouts([](GraphBuilder& b, const std::string& x) {
    b.output(b.op("transpose", {x}, {{"perm", ints({0, 2, 3, 1})}}));
    b.output(b.op("transpose", {x}, {{"perm", ints({3, 1, 0, 2})}}));
    b.output(b.op("transpose", {x}));
    const auto r = b.op("reshape", {x}, {{"shape", ints({2, 2, 2, 5, 6})}});
    b.output(b.op("transpose", {r}, {{"perm", ints({4, 0, 3, 2, 1})}}));
  });
}

TEST_CASE("cpu: channel shuffle (reshape, transpose, reshape) between convolutions") {
  GraphBuilder b;
  const auto y = conv1x1(b, b.input("x", random({1, 4, 3, 5}, 1)), 4, 6, 2);
  const auto r = b.op("reshape", {y}, {{"shape", ints({1, 2, 3, 3, 5})}});
  const auto t = b.op("transpose", {r}, {{"perm", ints({0, 2, 1, 3, 4})}});
  const auto s = b.op("reshape", {t}, {{"shape", ints({1, 6, 3, 5})}});
  b.output(conv1x1(b, s, 6, 3, 3));
  check_against_reference(b);
}

TEST_CASE("cpu: ConvNeXt block (permute, layer_norm, linear, gelu, permute back)") {
  GraphBuilder b;
  const auto x = b.input("x", random({1, 8, 4, 5}, 1));
  const auto d = b.op("conv2d", {x, b.constant("dw", random({8, 1, 3, 3}, 2)), b.constant("db", random({8}, 3))},
                      {{"pads", ints({1, 1, 1, 1})}, {"group", integer(8)}});
  const auto p = b.op("transpose", {d}, {{"perm", ints({0, 2, 3, 1})}});
  const auto n = b.op("layer_norm", {p, b.constant("g", random({8}, 4)), b.constant("be", random({8}, 5))});
  const auto l1 = b.op("matmul", {n, b.constant("w1", random({8, 16}, 6))});
  const auto a = b.op("add", {l1, b.constant("b1", random({16}, 7))});
  const auto g = b.op("gelu", {a});
  const auto l2 = b.op("linear", {g, b.constant("w2", random({8, 16}, 8)), b.constant("b2", random({8}, 9))});
  const auto back = b.op("transpose", {l2}, {{"perm", ints({0, 3, 1, 2})}});
  const auto scaled = b.op("mul", {back, b.constant("ls", random({8, 1, 1}, 10))});
  b.output(b.op("add", {scaled, x}));
  check_against_reference(b, 2e-5, 2e-5);
}

TEST_CASE("cpu: concat and split along every axis") {
  const Shape dims{2, 4, 5, 6};
  for (int64_t axis : {0, 1, 2, 3, -1}) {
    INFO("axis ", axis);
    const int64_t size = dims[(axis + 4) % 4];
    for_both_layouts([axis, size](GraphBuilder& b, const std::string& x) {
      const auto parts = b.node("split", {x}, {{"axis", integer(axis)}, {"split", ints({1, size - 1})}}, 2);
      b.output(parts[0]);
      b.output(parts[1]);
      b.output(b.op("concat", {parts[1], x, parts[0]}, {{"axis", integer(axis)}}));
    });
  }
  SUBCASE("concat with a constant") {
    GraphBuilder b;
    const auto y = conv1x1(b, b.input("x", random({1, 3, 4, 4}, 1)), 3, 5, 2);
    b.output(b.op("concat", {y, b.constant("c", random({1, 2, 4, 4}, 3))}, {{"axis", integer(1)}}));
    check_against_reference(b);
  }
}

TEST_CASE("cpu: slice with steps, negative indices and clamping") {
  for_both_layouts([](GraphBuilder& b, const std::string& x) {
    b.output(b.op("slice", {x}, {{"starts", ints({1})}, {"ends", ints({3})}, {"axes", ints({1})}}));
    b.output(b.op("slice", {x}, {{"starts", ints({0, -1})}, {"ends", ints({1, -100})}, {"axes", ints({0, 3})},
                                 {"steps", ints({1, -2})}}));
    b.output(b.op("slice", {x}, {{"starts", ints({1, 0, 1, 2})}, {"ends", ints({2, 100, 4, INT64_MAX})},
                                 {"steps", ints({1, 2, 1, 3})}}));
    b.output(b.op("slice", {x}, {{"starts", ints({1})}, {"ends", ints({2})}, {"axes", ints({0})}}));
  });
}

TEST_CASE("cpu: gather, expand, pad") {
  for_both_layouts([](GraphBuilder& b, const std::string& x) {
    b.output(b.op("gather", {x, b.constant("i", i64({2, 2}, {0, -1, 2, 1}))}, {{"axis", integer(1)}}));
    b.output(b.op("gather", {x, b.constant("j", i64({}, {3}))}, {{"axis", integer(3)}}));
    b.output(b.op("expand", {b.op("slice", {x}, {{"starts", ints({0})}, {"ends", ints({1})}, {"axes", ints({2})}})},
                  {{"shape", ints({3, 2, 4, 2, 6})}}));
    b.output(b.op("pad", {x}, {{"pads", ints({0, 1, 2, 0, 1, 0, 1, 3})}, {"value", real(0.5)}}));
    b.output(b.op("pad", {x}, {{"pads", ints({0, 0, 2, 1, 0, 0, 1, 2})}, {"mode", str("reflect")}}));
    b.output(b.op("pad", {x}, {{"pads", ints({0, 1, 2, 3, 0, 0, 1, 2})}, {"mode", str("edge")}}));
    b.output(b.op("pad", {x}, {{"pads", ints({0, -1, 1, -2, 0, 0, -1, 1})}}));
  });
  SUBCASE("computed indices") {
    GraphBuilder b;
    b.output(b.op("gather", {b.input("d", random({4, 3}, 1)), b.input("i", i64({3}, {3, 0, -2}))}));
    check_against_reference(b);
  }
}

TEST_CASE("cpu: reductions, softmax, log_softmax") {
  for_both_layouts([](GraphBuilder& b, const std::string& x) {
    for (const char* op : {"reduce_mean", "reduce_sum", "reduce_max", "reduce_min"}) {
      b.output(b.op(op, {x}, {{"axes", ints({2, 3})}, {"keepdims", integer(1)}}));
      b.output(b.op(op, {x}, {{"axes", ints({1})}, {"keepdims", integer(0)}}));
      b.output(b.op(op, {x}, {{"axes", ints({0, 2})}, {"keepdims", integer(0)}}));
      b.output(b.op(op, {x}, {{"keepdims", integer(0)}}));
    }
    for (const char* op : {"softmax", "log_softmax"})
      for (int64_t axis : {1, 2, -1}) b.output(b.op(op, {x}, {{"axis", integer(axis)}}));
  });
}

TEST_CASE("cpu: batch_norm and layer_norm") {
  for_both_layouts([](GraphBuilder& b, const std::string& x) {
    b.output(b.op("batch_norm", {x, b.constant("s", random({4}, 1)), b.constant("o", random({4}, 2)),
                                 b.constant("m", random({4}, 3)), b.constant("v", random({4}, 4, 0.5f, 2.0f))}));
    b.output(b.op("layer_norm", {x, b.constant("g", random({6}, 5)), b.constant("h", random({6}, 6))}));
    b.output(b.op("layer_norm", {x, b.constant("g2", random({5, 6}, 7))}, {{"axis", integer(2)}}));
    b.output(b.op("layer_norm", {x}, {{"axis", integer(1)}, {"epsilon", real(1e-3)}}));
  });
}

TEST_CASE("cpu: resize modes") {
  struct Case {
    const char* mode;
    const char* transform;
    const char* nearest;
    Shape sizes;
    std::vector<double> scales;
  };
  const std::vector<Case> cases{
      {"linear", "half_pixel", "", {2, 4, 10, 12}, {}},
      {"linear", "pytorch_half_pixel", "", {2, 4, 1, 12}, {}},
      {"linear", "align_corners", "", {2, 4, 9, 7}, {}},
      {"linear", "asymmetric", "", {2, 4, 10, 12}, {1, 1, 2, 2}},
      {"linear", "half_pixel", "", {2, 4, 7, 8}, {1, 1, 1.5, 1.4}},
      {"linear", "half_pixel", "", {2, 8, 10, 6}, {}},
      {"nearest", "asymmetric", "floor", {2, 4, 10, 12}, {1, 1, 2, 2}},
      {"nearest", "half_pixel", "round_prefer_floor", {2, 4, 7, 9}, {}},
      {"nearest", "tf_half_pixel_for_nn", "round_prefer_ceil", {2, 4, 3, 4}, {}},
      {"nearest", "align_corners", "ceil", {2, 4, 8, 11}, {}},
      {"cubic", "half_pixel", "", {2, 4, 9, 13}, {}},
      {"cubic", "align_corners", "", {2, 4, 3, 4}, {}},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.mode), " ", std::string(c.transform), " ", std::string(c.nearest), " to ", shape_str(c.sizes));
    for_both_layouts([&](GraphBuilder& b, const std::string& x) {
      Attributes attrs{{"sizes", ints(c.sizes)}, {"mode", str(c.mode)}, {"coordinate_transformation_mode", str(c.transform)}};
      if (!c.scales.empty()) attrs["scales"] = floats_attr(c.scales);
      if (*c.nearest) attrs["nearest_mode"] = str(c.nearest);
      b.output(b.op("resize", {x}, attrs));
    });
  }
  // The cases above resize a graph output: upsampled, it is computed row-major (separable passes)
  // even from the NHWC conv output. Read by another node, an NHWC bilinear resize stays XNNPACK's.
  SUBCASE("bilinear NHWC resize read by a conv") {
    for (const char* transform : {"half_pixel", "align_corners", "asymmetric"}) {
      INFO(transform);
      GraphBuilder b;
      const auto y = conv1x1(b, b.input("x", random({2, 4, 5, 6}, 21)), 4, 4, 22);
      const auto r = b.op("resize", {y},
                          {{"sizes", ints({2, 4, 10, 12})},
                           {"mode", str("linear")},
                           {"coordinate_transformation_mode", str(transform)}});
      b.output(conv1x1(b, r, 4, 3, 23));
      check_against_reference(b);
    }
  }
  SUBCASE("cubic with exclude_outside") {
    GraphBuilder b;
    b.output(b.op("resize", {b.input("x", random({1, 2, 4, 5}, 1))},
                  {{"sizes", ints({1, 2, 7, 9})}, {"mode", str("cubic")}, {"exclude_outside", integer(1)},
                   {"cubic_coeff_a", real(-0.5)}}));
    check_against_reference(b);
  }
}

TEST_CASE("cpu: linear and matmul") {
  SUBCASE("linear with computed weights") {
    GraphBuilder b;
    b.output(b.op("linear", {b.input("x", random({3, 2, 6}, 1)), b.input("w", random({5, 6}, 2)),
                             b.input("b", random({5}, 3))}));
    check_against_reference(b);
  }
  SUBCASE("matmul with constant B of rank 1 and 2, A of rank 1 to 4") {
    GraphBuilder b;
    const auto w2 = b.constant("w2", random({6, 5}, 2));
    const auto w1 = b.constant("w1", random({6}, 3));
    for (const Shape& shape : std::vector<Shape>{{6}, {4, 6}, {3, 4, 6}, {2, 3, 4, 6}}) {
      const auto a = b.input(fmt::format("a{}", shape.size()), random(shape, 4));
      b.output(b.op("matmul", {a, w2}));
      b.output(b.op("matmul", {a, w1}));
    }
    check_against_reference(b);
  }
  SUBCASE("batched matmul with broadcasting") {
    GraphBuilder b;
    b.output(b.op("matmul", {b.input("a", random({2, 1, 5, 7}, 1)), b.input("b", random({3, 7, 9}, 2))}));
    b.output(b.op("matmul", {b.input("c", random({7}, 3)), b.input("d", random({2, 7, 4}, 4))}));
    b.output(b.op("matmul", {b.input("e", random({2, 3, 7}, 5)), b.input("f", random({7}, 6))}));
    check_against_reference(b);
  }
  SUBCASE("attention-like: matmul of transposed computed tensors") {
    GraphBuilder b;
    const auto q = b.input("q", random({2, 5, 8}, 1));
    const auto k = b.input("k", random({2, 5, 8}, 2));
    const auto kt = b.op("transpose", {k}, {{"perm", ints({0, 2, 1})}});
    const auto s = b.op("softmax", {b.op("matmul", {q, kt})}, {{"axis", integer(-1)}});
    b.output(b.op("matmul", {s, q}));
    check_against_reference(b);
  }
}

}  // namespace mt::test
