// merge_shape_chains: reshape-like chains become one reshape, transpose chains one transpose
// or nothing; a shared intermediate stays for its other readers.
#include "pass_test_util.h"

namespace mt {
namespace {

using test::GraphBuilder;
using Ints = std::vector<int64_t>;

TEST_CASE("merge_shape_chains turns flatten -> reshape -> unsqueeze into one reshape") {
  GraphBuilder b;
  auto x = b.input("x", {2, 3, 4});
  auto f = b.node("flatten", "f", {x}, {{"axis", int64_t{1}}});
  auto r = b.node("reshape", "r", {f}, {{"shape", Ints{6, 4}}});
  auto u = b.node("unsqueeze", "u", {r}, {{"axes", Ints{0}}});
  auto y = b.node("relu", "y", {u});
  const Graph before = b.build({y});
  auto [after, report] = test::apply("merge_shape_chains", before);
  CHECK(test::op_counts(after) == std::map<std::string, size_t>{{"relu", 1}, {"reshape", 1}});
  const Node& merged = test::node_named(after, "u");
  CHECK(merged.op == "reshape");
  CHECK(merged.inputs == std::vector<std::string>{"x"});
  CHECK(std::get<Ints>(merged.attrs.at("shape")) == Ints{1, 6, 4});
  CHECK(report.nodes_removed == 2);
  test::check_same_results(before, after);
}

TEST_CASE("merge_shape_chains composes two transposes") {
  GraphBuilder b;
  auto x = b.input("x", {2, 3, 4});
  auto t1 = b.node("transpose", "t1", {x}, {{"perm", Ints{1, 2, 0}}});
  auto t2 = b.node("transpose", "t2", {t1}, {{"perm", Ints{0, 2, 1}}});
  auto y = b.node("relu", "y", {t2});
  const Graph before = b.build({y});
  auto [after, report] = test::apply("merge_shape_chains", before);
  REQUIRE(test::count_op(after, "transpose") == 1);
  // t2(t1(x)) has shape [3, 2, 4]: axis j of the result is axis p1[p2[j]] of x.
  CHECK(std::get<Ints>(test::node_named(after, "t2").attrs.at("perm")) == Ints{1, 0, 2});
  test::check_same_results(before, after);
}

TEST_CASE("merge_shape_chains removes transposes that cancel, even into a graph output") {
  GraphBuilder b;
  auto x = b.input("x", {2, 3, 4});
  auto a = b.node("relu", "a", {x});
  auto t1 = b.node("transpose", "t1", {a}, {{"perm", Ints{0, 2, 1}}});
  auto t2 = b.node("transpose", "t2", {t1}, {{"perm", Ints{0, 2, 1}}});
  const Graph before = b.build({t2});
  auto [after, report] = test::apply("merge_shape_chains", before);
  CHECK(test::op_counts(after) == std::map<std::string, size_t>{{"relu", 1}});
  CHECK(after.nodes[0].outputs[0] == "t2");
  REQUIRE(report.changes.size() == 1);
  CHECK(report.changes[0].before == std::vector<std::string>{"t1", "t2"});
  CHECK(report.changes[0].after.empty());
  test::check_same_results(before, after);
}

TEST_CASE("merge_shape_chains keeps a reshape whose output has another reader") {
  GraphBuilder b;
  auto x = b.input("x", {2, 6});
  auto r1 = b.node("reshape", "r1", {x}, {{"shape", Ints{3, 4}}});
  auto r2 = b.node("reshape", "r2", {r1}, {{"shape", Ints{12}}});
  auto side = b.node("relu", "side", {r1});
  const Graph before = b.build({r2, side});
  auto [after, report] = test::apply("merge_shape_chains", before);
  CHECK(test::count_op(after, "reshape") == 2);
  CHECK(test::node_named(after, "r2").inputs[0] == "x");  // reads the source directly
  CHECK(test::node_named(after, "side").inputs[0] == "r1");
  test::check_same_results(before, after);
}

TEST_CASE("merge_shape_chains leaves reshape -> transpose alone") {
  GraphBuilder b;
  auto x = b.input("x", {2, 6});
  auto r = b.node("reshape", "r", {x}, {{"shape", Ints{3, 4}}});
  auto t = b.node("transpose", "t", {r}, {{"perm", Ints{1, 0}}});
  auto [after, report] = test::apply("merge_shape_chains", b.build({t}));
  CHECK_FALSE(report.changed());
}

}  // namespace
}  // namespace mt
