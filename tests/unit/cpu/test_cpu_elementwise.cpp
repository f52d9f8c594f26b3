// Elementwise ops on the cpu backend against the reference backend: every activation on a
// row-major graph input and on an NHWC conv output; binary ops with broadcasting (including
// per-channel constants meeting NHWC activations); integer arithmetic; cast.
#include "tests/unit/cpu/cpu_test_util.h"

namespace mt::test {
namespace {

struct Unary {
  const char* op;
  Attributes attrs;
  float low = -4.0f, high = 4.0f;
};

const std::vector<Unary>& unary_ops() {
  static const std::vector<Unary> ops{
      {"relu", {}},
      {"sigmoid", {}},
      {"tanh", {}},
      {"hardswish", {}},
      {"silu", {}},
      {"erf", {}},
      {"exp", {}},
      {"log", {}, 0.01f, 5.0f},
      {"sqrt", {}, 0.0f, 5.0f},
      {"neg", {}},
      {"abs", {}},
      {"reciprocal", {}, 0.5f, 4.0f},
      {"floor", {}},
      {"ceil", {}},
      {"softplus", {}, -30.0f, 30.0f},
      {"gelu", {}},
      {"gelu", {{"approximate", str("tanh")}}},
      {"clamp", {{"min", real(-0.5)}, {"max", real(1.5)}}},
      {"clamp", {{"min", real(0.0)}, {"max", real(6.0)}}},
      {"clamp", {{"min", real(1.0)}, {"max", real(1.0)}}},
      {"hardsigmoid", {{"alpha", real(0.1666667)}, {"beta", real(0.5)}}},
      {"leaky_relu", {{"alpha", real(0.1)}}},
      {"elu", {{"alpha", real(1.3)}}},
      {"elu", {{"alpha", real(-0.5)}}},
  };
  return ops;
}

}  // namespace

TEST_CASE("cpu: unary activations on a row-major input") {
  for (const Unary& u : unary_ops()) {
    INFO("op ", std::string(u.op));
    GraphBuilder b;
    const auto x = b.input("x", random({2, 3, 5, 7}, 7, u.low, u.high));
    b.output(b.op(u.op, {x}, u.attrs));
    check_against_reference(b, 2e-6, 2e-6);
  }
}

TEST_CASE("cpu: unary activations after a convolution (NHWC)") {
  for (const Unary& u : unary_ops()) {
    INFO("op ", std::string(u.op));
    GraphBuilder b;
    const auto x = b.input("x", random({1, 3, 4, 5}, 11, u.low, u.high));
    // An identity 1x1 convolution: the values keep their range (log, sqrt) but live in NHWC.
    std::vector<float> eye(9, 0.0f);
    eye[0] = eye[4] = eye[8] = 1.0f;
    const auto w = b.constant("w", f32({3, 3, 1, 1}, eye));
    const auto y = b.op("conv2d", {x, w});
    b.output(b.op(u.op, {y}, u.attrs));
    check_against_reference(b, 2e-6, 2e-6);
  }
}

TEST_CASE("cpu: prelu with per-channel, scalar and general slopes") {
  SUBCASE("per-channel constant slope after conv") {
    GraphBuilder b;
    const auto y = conv1x1(b, b.input("x", random({2, 3, 4, 4}, 1)), 3, 5, 2);
    b.output(b.op("prelu", {y, b.constant("s", random({5, 1, 1}, 3))}));
    check_against_reference(b);
  }
  SUBCASE("scalar slope") {
    GraphBuilder b;
    b.output(b.op("prelu", {b.input("x", random({2, 3, 4}, 1)), b.constant("s", f32({1}, {0.25f}))}));
    check_against_reference(b);
  }
  SUBCASE("slope varying along an outer dim, computed at run time") {
    GraphBuilder b;
    b.output(b.op("prelu", {b.input("x", random({2, 3, 4}, 1)), b.input("s", random({2, 1, 1}, 4))}));
    check_against_reference(b);
  }
}

TEST_CASE("cpu: binary ops with broadcasting") {
  struct Case {
    Shape a, b;
    bool b_constant;
  };
  const std::vector<Case> cases{
      {{2, 3, 4, 5}, {2, 3, 4, 5}, false}, {{2, 3, 4, 5}, {3, 1, 1}, true}, {{2, 3, 4, 5}, {5}, false},
      {{3, 1}, {1, 4}, false},            {{1}, {2, 3}, true},             {{2, 1, 4, 1}, {1, 3, 1, 5}, false},
      {{}, {}, false},                    {{2, 3, 2, 2, 2, 2, 2}, {3, 1, 1, 1, 1, 1}, false},
  };
  for (const char* op : {"add", "sub", "mul", "div", "max", "min", "pow"}) {
    for (const Case& c : cases) {
      INFO(std::string(op), " ", shape_str(c.a), " with ", shape_str(c.b));
      GraphBuilder b;
      const bool positive = std::string(op) == "pow";
      const auto x = b.input("a", random(c.a, 5, positive ? 0.1f : -2.0f, 2.0f));
      const HostTensor other = random(c.b, 6, 0.5f, 2.0f);
      const auto y = c.b_constant ? b.constant("b", other) : b.input("b", other);
      b.output(b.op(op, {x, y}));
      check_against_reference(b, 1e-5, 1e-5);
    }
  }
}

TEST_CASE("cpu: binary ops meet per-channel constants and other layouts after a convolution") {
  for (const char* op : {"add", "mul", "sub", "div"}) {
    INFO(std::string(op));
    GraphBuilder b;
    const auto y = conv1x1(b, b.input("x", random({2, 3, 4, 6}, 1)), 3, 4, 2);
    const auto scaled = b.op(op, {y, b.constant("c", random({4, 1, 1}, 3, 0.5f, 1.5f))});
    // A constant with full spatial extent must be reordered to NHWC at planning.
    const auto full = b.op(op, {scaled, b.constant("f", random({1, 4, 4, 6}, 4, 0.5f, 1.5f))});
    // A row-major graph input meets the NHWC activation.
    b.output(b.op(op, {full, b.input("g", random({2, 4, 4, 6}, 5, 0.5f, 1.5f))}));
    check_against_reference(b, 1e-5, 1e-5);
  }
}

TEST_CASE("cpu: add with a fused clamp") {
  GraphBuilder b;
  b.output(b.op("add", {b.input("a", random({2, 8}, 1)), b.input("b", random({8}, 2))},
                {{"act_min", real(0.0)}, {"act_max", real(0.5)}}));
  check_against_reference(b);
}

TEST_CASE("cpu: integer arithmetic wraps and divides toward zero") {
  for (const char* op : {"add", "sub", "mul", "div", "max", "min"}) {
    INFO(std::string(op));
    GraphBuilder b;
    const auto x = b.input("a", i64({2, 3}, {7, -7, 9, INT64_MAX, -100, 0}));
    b.output(b.op(op, {x, b.constant("b", i64({3}, {2, 2, -4}))}));
    check_against_reference(b);
  }
}

TEST_CASE("cpu: cast between dtypes") {
  const HostTensor values = f32({2, 4}, {-2.7f, -0.5f, 0.0f, 0.5f, 1.5f, 2.5f, 300.7f, 65520.0f});
  for (const char* to : {"float32", "float16", "int64", "int32", "int8", "uint8", "bool"}) {
    INFO(std::string(to));
    GraphBuilder b;
    const auto casted = b.op("cast", {b.input("x", values)}, {{"to", str(to)}});
    b.output(casted);
    b.output(b.op("cast", {casted}, {{"to", str("float32")}}));
    check_against_reference(b, 0.0, 0.0);
  }
}

}  // namespace mt::test

namespace mt::test {

TEST_CASE("cpu: quantize and dequantize with per-tensor parameters") {
  GraphBuilder b;
  const auto x = b.input("x", random({2, 3, 5}, 3, -8.0f, 8.0f));
  const auto q = b.op("quantize", {x});
  b.graph.tensor(q).quant = QuantParams{{0.05f}, {3}, -1};
  b.output(q);
  b.output(b.op("dequantize", {q}));
  check_against_reference(b, 0.0, 0.0);
}

}  // namespace mt::test
