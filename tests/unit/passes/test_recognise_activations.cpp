// recognise_silu / _gelu / _hardsigmoid / _hardswish: the primitive spellings exporters write
// become the single op (same results), and near-misses are left alone.
#include <cmath>

#include "pass_test_util.h"

namespace mt {
namespace {

using test::GraphBuilder;

constexpr float kSqrt2 = 1.41421356f;

TEST_CASE("recognise_silu: x * sigmoid(x) in both operand orders") {
  for (bool sigmoid_first : {false, true}) {
    GraphBuilder b;
    auto x = b.input("x", {2, 8});
    auto s = b.node("sigmoid", "s", {x});
    auto y = b.node("mul", "y", sigmoid_first ? std::vector<std::string>{s, x} : std::vector<std::string>{x, s});
    const Graph before = b.build({y});
    auto [after, report] = test::apply("recognise_silu", before);
    CHECK(test::op_counts(after) == std::map<std::string, size_t>{{"silu", 1}});
    CHECK(after.nodes[0].outputs[0] == "y");
    REQUIRE(report.changes.size() == 1);
    CHECK(report.changes[0].before == std::vector<std::string>{"s", "y"});
    test::check_same_results(before, after);
  }
}

TEST_CASE("recognise_silu leaves x * sigmoid(z) and a sigmoid read elsewhere") {
  GraphBuilder b;
  auto x = b.input("x", {4});
  auto z = b.input("z", {4});
  auto s = b.node("sigmoid", "s", {z});
  auto y = b.node("mul", "y", {x, s});
  auto s2 = b.node("sigmoid", "s2", {x});
  auto y2 = b.node("mul", "y2", {x, s2});
  auto side = b.node("relu", "side", {s2});
  auto [after, report] = test::apply("recognise_silu", b.build({y, y2, side}));
  CHECK_FALSE(report.changed());
}

// 0.5 * x * (1 + erf(x / sqrt 2)) as torch.onnx.export writes it for nn.GELU.
Graph torch_gelu(bool extra_erf_reader = false) {
  GraphBuilder b;
  auto x = b.input("x", {2, 16});
  auto d = b.node("div", "d", {x, b.scalar("sqrt2", kSqrt2)});
  auto e = b.node("erf", "e", {d});
  auto a = b.node("add", "a", {e, b.scalar("one", 1.0f)});
  auto m = b.node("mul", "m", {x, a});
  auto y = b.node("mul", "y", {m, b.scalar("half", 0.5f)});
  std::vector<std::string> outputs = {y};
  if (extra_erf_reader) outputs.push_back(b.node("relu", "r", {e}));
  return b.build(outputs);
}

TEST_CASE("recognise_gelu: the torch.onnx.export spelling") {
  const Graph before = torch_gelu();
  auto [after, report] = test::apply("recognise_gelu", before);
  CHECK(test::op_counts(after) == std::map<std::string, size_t>{{"gelu", 1}});
  REQUIRE(report.changes.size() == 1);
  CHECK(report.changes[0].before == std::vector<std::string>{"d", "e", "a", "m", "y"});
  CHECK(report.changes[0].after == std::vector<std::string>{"y"});
  CHECK(report.constants_removed == 3);
  test::check_same_results(before, after);
}

TEST_CASE("recognise_gelu: x * 0.5 first, multiply by 1/sqrt 2, one + erf") {
  GraphBuilder b;
  auto x = b.input("x", {3, 5});
  auto h = b.node("mul", "h", {x, b.scalar("half", 0.5f)});
  auto d = b.node("mul", "d", {b.scalar("inv_sqrt2", 1.0f / kSqrt2), x});
  auto e = b.node("erf", "e", {d});
  auto a = b.node("add", "a", {b.scalar("one", 1.0f), e});
  auto y = b.node("mul", "y", {h, a});
  const Graph before = b.build({y});
  auto [after, report] = test::apply("recognise_gelu", before);
  CHECK(test::op_counts(after) == std::map<std::string, size_t>{{"gelu", 1}});
  test::check_same_results(before, after);
}

TEST_CASE("recognise_gelu leaves an erf read elsewhere and a wrong constant") {
  auto [after, report] = test::apply("recognise_gelu", torch_gelu(true));
  CHECK_FALSE(report.changed());

  GraphBuilder b;
  auto x = b.input("x", {4});
  auto d = b.node("div", "d", {x, b.scalar("sqrt2", kSqrt2)});
  auto e = b.node("erf", "e", {d});
  auto a = b.node("add", "a", {e, b.scalar("one", 1.0f)});
  auto m = b.node("mul", "m", {x, a});
  auto y = b.node("mul", "y", {m, b.scalar("not_half", 0.6f)});
  auto [after2, report2] = test::apply("recognise_gelu", b.build({y}));
  CHECK_FALSE(report2.changed());
}

TEST_CASE("recognise_gelu: the tanh approximation, cube as x * (x * x) or pow(x, 3)") {
  for (bool use_pow : {false, true}) {
    CAPTURE(use_pow);
    GraphBuilder b;
    auto x = b.input("x", {2, 16});
    auto cube = use_pow ? b.node("pow", "cube", {x, b.scalar("three", 3.0f)})
                        : b.node("mul", "cube", {x, b.node("mul", "sq", {x, x})});
    auto inner = b.node("add", "inner", {x, b.node("mul", "term", {b.scalar("k", 0.044715f), cube})});
    auto u = b.node("mul", "u", {b.scalar("c", 0.7978845608f), inner});
    auto t = b.node("add", "t", {b.scalar("one", 1.0f), b.node("tanh", "th", {u})});
    auto y = b.node("mul", "y", {b.scalar("half", 0.5f), b.node("mul", "m", {x, t})});
    const Graph before = b.build({y});
    auto [after, report] = test::apply("recognise_gelu", before);
    REQUIRE(test::op_counts(after) == std::map<std::string, size_t>{{"gelu", 1}});
    CHECK(std::get<std::string>(after.nodes[0].attrs.at("approximate")) == "tanh");
    test::check_same_results(before, after);
  }
}

TEST_CASE("recognise_gelu leaves a tanh form with the wrong cubic coefficient") {
  GraphBuilder b;
  auto x = b.input("x", {4});
  auto cube = b.node("pow", "cube", {x, b.scalar("three", 3.0f)});
  auto inner = b.node("add", "inner", {x, b.node("mul", "term", {b.scalar("k", 0.05f), cube})});
  auto u = b.node("mul", "u", {b.scalar("c", 0.7978845608f), inner});
  auto t = b.node("add", "t", {b.scalar("one", 1.0f), b.node("tanh", "th", {u})});
  auto y = b.node("mul", "y", {b.scalar("half", 0.5f), b.node("mul", "m", {x, t})});
  auto [after, report] = test::apply("recognise_gelu", b.build({y}));
  CHECK_FALSE(report.changed());
}

TEST_CASE("recognise_hardsigmoid: clamp(x + 3, 0, 6) / 6 and * (1/6)") {
  for (bool divide : {true, false}) {
    GraphBuilder b;
    auto x = b.input("x", {2, 8});
    auto a = b.node("add", "a", {x, b.scalar("three", 3.0f)});
    auto c = b.node("clamp", "c", {a}, {{"min", 0.0}, {"max", 6.0}});
    auto y = divide ? b.node("div", "y", {c, b.scalar("six", 6.0f)})
                    : b.node("mul", "y", {c, b.scalar("sixth", 1.0f / 6.0f)});
    const Graph before = b.build({y});
    auto [after, report] = test::apply("recognise_hardsigmoid", before);
    REQUIRE(test::op_counts(after) == std::map<std::string, size_t>{{"hardsigmoid", 1}});
    CHECK(std::get<double>(after.nodes[0].attrs.at("alpha")) == doctest::Approx(1.0 / 6.0));
    test::check_same_results(before, after);
  }
}

TEST_CASE("recognise_hardsigmoid: the add already carrying the fused relu6") {
  GraphBuilder b;
  auto x = b.input("x", {8});
  auto a = b.node("add", "a", {x, b.scalar("three", 3.0f)}, {{"act_min", 0.0}, {"act_max", 6.0}});
  auto y = b.node("div", "y", {a, b.scalar("six", 6.0f)});
  const Graph before = b.build({y});
  auto [after, report] = test::apply("recognise_hardsigmoid", before);
  CHECK(test::op_counts(after) == std::map<std::string, size_t>{{"hardsigmoid", 1}});
  test::check_same_results(before, after);
}

TEST_CASE("recognise_hardsigmoid leaves clamp(x + 3, 0, 5) / 6") {
  GraphBuilder b;
  auto x = b.input("x", {8});
  auto a = b.node("add", "a", {x, b.scalar("three", 3.0f)});
  auto c = b.node("clamp", "c", {a}, {{"min", 0.0}, {"max", 5.0}});
  auto y = b.node("div", "y", {c, b.scalar("six", 6.0f)});
  auto [after, report] = test::apply("recognise_hardsigmoid", b.build({y}));
  CHECK_FALSE(report.changed());
}

TEST_CASE("recognise_hardswish: x * hardsigmoid(x) with PyTorch's constants") {
  GraphBuilder b;
  auto x = b.input("x", {2, 8});
  auto h = b.node("hardsigmoid", "h", {x}, {{"alpha", 1.0 / 6.0}, {"beta", 0.5}});
  auto y = b.node("mul", "y", {x, h});
  const Graph before = b.build({y});
  auto [after, report] = test::apply("recognise_hardswish", before);
  CHECK(test::op_counts(after) == std::map<std::string, size_t>{{"hardswish", 1}});
  test::check_same_results(before, after);
}

TEST_CASE("recognise_hardswish: x * clamp(x + 3, 0, 6) / 6 in each association") {
  for (int form = 0; form < 3; ++form) {
    CAPTURE(form);
    GraphBuilder b;
    auto x = b.input("x", {2, 8});
    auto a = b.node("add", "a", {x, b.scalar("three", 3.0f)});
    auto c = b.node("clamp", "c", {a}, {{"min", 0.0}, {"max", 6.0}});
    std::string y;
    if (form == 0) {  // (x * relu6(x + 3)) / 6
      y = b.node("div", "y", {b.node("mul", "m", {x, c}), b.scalar("six", 6.0f)});
    } else if (form == 1) {  // x * (relu6(x + 3) / 6)
      y = b.node("mul", "y", {x, b.node("div", "q", {c, b.scalar("six", 6.0f)})});
    } else {  // (relu6(x + 3) * x) * (1/6)
      y = b.node("mul", "y", {b.node("mul", "m", {c, x}), b.scalar("sixth", 1.0f / 6.0f)});
    }
    const Graph before = b.build({y});
    auto [after, report] = test::apply("recognise_hardswish", before);
    CHECK(test::op_counts(after) == std::map<std::string, size_t>{{"hardswish", 1}});
    test::check_same_results(before, after);
  }
}

TEST_CASE("recognise_hardswish leaves x * hardsigmoid(x) with ONNX's default alpha 0.2") {
  GraphBuilder b;
  auto x = b.input("x", {8});
  auto h = b.node("hardsigmoid", "h", {x});
  auto y = b.node("mul", "y", {x, h});
  auto [after, report] = test::apply("recognise_hardswish", b.build({y}));
  CHECK_FALSE(report.changed());
}

TEST_CASE("recognise_hardswish leaves a relu6 read by something else") {
  GraphBuilder b;
  auto x = b.input("x", {8});
  auto a = b.node("add", "a", {x, b.scalar("three", 3.0f)});
  auto c = b.node("clamp", "c", {a}, {{"min", 0.0}, {"max", 6.0}});
  auto y = b.node("div", "y", {b.node("mul", "m", {x, c}), b.scalar("six", 6.0f)});
  auto side = b.node("relu", "side", {c});
  auto [after, report] = test::apply("recognise_hardswish", b.build({y, side}));
  CHECK_FALSE(report.changed());
}

}  // namespace
}  // namespace mt
