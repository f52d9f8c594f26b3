// remove_dead_nodes: chains nobody reads go, as do unused constants; graph inputs and partly
// used multi-output nodes stay.
#include "pass_test_util.h"

namespace mt {
namespace {

using test::GraphBuilder;

TEST_CASE("remove_dead_nodes removes an unread chain and its constants") {
  GraphBuilder b;
  auto x = b.input("x", {4});
  auto unused_input = b.input("unused", {2});
  auto w = b.random("w", {4});
  auto y = b.node("relu", "y", {x});
  auto d1 = b.node("mul", "d1", {x, w});
  b.node("sigmoid", "d2", {d1});
  b.random("orphan", {8});
  const Graph before = b.build({y});
  auto [after, report] = test::apply("remove_dead_nodes", before);
  CHECK(test::op_counts(after) == std::map<std::string, size_t>{{"relu", 1}});
  CHECK_FALSE(after.has_tensor("w"));
  CHECK_FALSE(after.has_tensor("orphan"));
  CHECK(after.has_tensor(unused_input));  // the model's interface never changes
  CHECK(report.nodes_removed == 2);
  CHECK(report.constants_removed == 2);
  test::check_same_results(before, after);
}

TEST_CASE("remove_dead_nodes keeps a split with one output read") {
  GraphBuilder b;
  auto x = b.input("x", {4});
  b.node_outputs("split", "s", {x}, {"s0", "s1"}, {{"split", std::vector<int64_t>{2, 2}}});
  auto y = b.node("relu", "y", {"s1"});
  auto [after, report] = test::apply("remove_dead_nodes", b.build({y}));
  CHECK(after.nodes.size() == 2);
  CHECK_FALSE(report.changed());
}

}  // namespace
}  // namespace mt
