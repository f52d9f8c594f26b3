// fold_constants: constant subexpressions become constants with the values the reference
// kernels compute; large expansions and graph outputs stay nodes.
#include "pass_test_util.h"

namespace mt {
namespace {

using test::GraphBuilder;
using Ints = std::vector<int64_t>;

std::vector<float> floats_of(const Graph& graph, const std::string& name) {
  auto values = passes::constant_floats(graph, name);
  REQUIRE_MESSAGE(values.has_value(), name, " is not a float32 constant");
  return *values;
}

TEST_CASE("fold_constants folds a constant chain and keeps the tensor names") {
  GraphBuilder b;
  auto x = b.input("x", {2, 3});
  auto w = b.constant("w", {3, 2}, {1, 2, 3, 4, 5, 6});
  auto two = b.scalar("two", 2.0f);
  auto wt = b.node("transpose", "wt", {w}, {{"perm", Ints{1, 0}}});  // [[1,3,5],[2,4,6]]
  auto scaled = b.node("mul", "scaled", {wt, two});
  auto y = b.node("add", "y", {x, scaled});
  const Graph before = b.build({y});
  auto [after, report] = test::apply("fold_constants", before);
  CHECK(test::op_counts(after) == std::map<std::string, size_t>{{"add", 1}});
  CHECK(floats_of(after, "scaled") == std::vector<float>{2, 6, 10, 4, 8, 12});
  CHECK_FALSE(after.has_tensor("w"));
  CHECK_FALSE(after.has_tensor("wt"));  // folded, then unused
  CHECK(report.changes.size() == 2);
  CHECK(report.nodes_removed == 2);
  test::check_same_results(before, after);
}

TEST_CASE("fold_constants folds integer shape arithmetic") {
  GraphBuilder b;
  auto x = b.input("x", {2});
  Graph graph = b.build({b.node("relu", "y", {x})});
  const std::vector<int64_t> a = {3, 4}, c = {10, 20};
  graph.add_tensor(TensorInfo{.name = "a", .dtype = DType::i64, .shape = {2}, .data = ConstData::copy_of(a.data(), 16)});
  graph.add_tensor(TensorInfo{.name = "c", .dtype = DType::i64, .shape = {2}, .data = ConstData::copy_of(c.data(), 16)});
  graph.nodes.push_back(Node{.name = "p", .op = "mul", .inputs = {"a", "c"}, .outputs = {"p"}});
  graph.nodes.push_back(Node{.name = "q", .op = "cast", .inputs = {"p"}, .outputs = {"q"}, .attrs = {{"to", std::string("float32")}}});
  graph.nodes.push_back(Node{.name = "z", .op = "add", .inputs = {"y", "q"}, .outputs = {"z"}});
  graph.outputs = {"z"};
  graph.infer_shapes();
  graph.validate();
  auto [after, report] = test::apply("fold_constants", graph);
  CHECK(test::op_counts(after) == std::map<std::string, size_t>{{"add", 1}, {"relu", 1}});
  CHECK(floats_of(after, "q") == std::vector<float>{30, 80});
  test::check_same_results(graph, after);
}

TEST_CASE("fold_constants leaves an expand that would grow the model") {
  GraphBuilder b;
  auto x = b.input("x", {64, 64, 64});
  auto s = b.scalar("s", 0.5f);
  auto e = b.node("expand", "e", {s}, {{"shape", Ints{64, 64, 64}}});  // 1 MiB from 4 bytes
  auto small = b.node("expand", "small", {s}, {{"shape", Ints{4, 4}}});  // 64 bytes: folded
  auto y = b.node("add", "y", {x, e});
  auto z = b.node("relu", "z", {small});
  const Graph before = b.build({y, z});
  auto [after, report] = test::apply("fold_constants", before);
  CHECK(test::count_op(after, "expand") == 1);
  CHECK(test::node_named(after, "e").op == "expand");
  CHECK(floats_of(after, "small") == std::vector<float>(16, 0.5f));
}

TEST_CASE("fold_constants leaves a graph output computed from constants") {
  GraphBuilder b;
  auto x = b.input("x", {2});
  auto c = b.constant("c", {2}, {-1, 1});
  auto y = b.node("relu", "y", {x});
  auto k = b.node("relu", "k", {c});
  auto [after, report] = test::apply("fold_constants", b.build({y, k}));
  CHECK(after.nodes.size() == 2);
  CHECK_FALSE(report.changed());
}

}  // namespace
}  // namespace mt
