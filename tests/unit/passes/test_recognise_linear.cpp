// recognise_linear: matmul by a constant 2-D B (+ a 1-D constant bias) becomes linear with
// W = B^T and the same results; shared or non-constant weights stay matmuls.
#include "pass_test_util.h"

namespace mt {
namespace {

using test::GraphBuilder;

TEST_CASE("recognise_linear: matmul + bias add, bias on either side, 3-D input") {
  for (bool bias_first : {false, true}) {
    GraphBuilder b;
    auto x = b.input("x", {2, 3, 5});
    auto m = b.node("matmul", "m", {x, b.random("B", {5, 4})});
    auto bias = b.random("bias", {4});
    auto y = b.node("add", "y", bias_first ? std::vector<std::string>{bias, m} : std::vector<std::string>{m, bias});
    const Graph before = b.build({y});
    auto [after, report] = test::apply("recognise_linear", before);
    REQUIRE(test::op_counts(after) == std::map<std::string, size_t>{{"linear", 1}});
    const Node& linear = after.nodes[0];
    CHECK(linear.outputs[0] == "y");
    CHECK(after.tensor(linear.inputs[1]).shape == Shape{4, 5});
    CHECK(linear.inputs[2] == "bias");
    CHECK_FALSE(after.has_tensor("B"));
    REQUIRE(report.changes.size() == 1);
    CHECK(report.changes[0].before == std::vector<std::string>{"m", "y"});
    test::check_same_results(before, after);
  }
}

TEST_CASE("recognise_linear: matmul alone, and an add with a fused clamp passes it on") {
  GraphBuilder b;
  auto x = b.input("x", {3, 5});
  auto m1 = b.node("matmul", "m1", {x, b.random("B1", {5, 4})});
  auto m2 = b.node("matmul", "m2", {m1, b.random("B2", {4, 2})});
  auto y = b.node("add", "y", {m2, b.random("bias", {2})}, {{"act_min", 0.0}, {"act_max", 0.5}});
  const Graph before = b.build({y});
  auto [after, report] = test::apply("recognise_linear", before);
  REQUIRE(test::op_counts(after) == std::map<std::string, size_t>{{"linear", 2}});
  CHECK(std::get<double>(test::node_named(after, "y").attrs.at("act_max")) == 0.5);
  test::check_same_results(before, after);
}

TEST_CASE("recognise_linear leaves non-constant, shared and 3-D weights and 2-D bias adds") {
  GraphBuilder b;
  auto x = b.input("x", {3, 5});
  auto w = b.input("w", {5, 4});
  auto shared = b.random("shared", {5, 4});
  auto batched = b.random("batched", {3, 5, 4});
  auto y1 = b.node("matmul", "m1", {x, w});
  auto y2 = b.node("matmul", "m2", {x, shared});
  auto y3 = b.node("matmul", "m3", {x, shared});
  auto y4 = b.node("matmul", "m4", {x, batched});
  auto [after, report] = test::apply("recognise_linear", b.build({y1, y2, y3, y4}));
  CHECK_FALSE(report.changed());

  GraphBuilder c;
  auto m = c.node("matmul", "m", {c.input("x", {3, 5}), c.random("B", {5, 4})});
  auto y = c.node("add", "y", {m, c.random("bias2d", {3, 4})});
  auto [after2, report2] = test::apply("recognise_linear", c.build({y}));
  // The matmul still becomes a linear; the 2-D add stays an add.
  CHECK(test::op_counts(after2) == std::map<std::string, size_t>{{"add", 1}, {"linear", 1}});
}

}  // namespace
}  // namespace mt
