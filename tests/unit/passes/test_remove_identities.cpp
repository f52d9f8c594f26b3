// remove_identities: no-op nodes disappear (results unchanged), look-alikes that do change
// values or shapes stay.
#include "pass_test_util.h"

namespace mt {
namespace {

using test::GraphBuilder;

TEST_CASE("remove_identities drops identity, same-shape reshape and identity transpose") {
  GraphBuilder b;
  auto x = b.input("x", {2, 3, 4});
  auto a = b.node("relu", "a", {x});
  auto i = b.node("identity", "i", {a});
  auto r = b.node("reshape", "r", {i}, {{"shape", std::vector<int64_t>{2, 3, 4}}});
  auto t = b.node("transpose", "t", {r}, {{"perm", std::vector<int64_t>{0, 1, 2}}});
  auto y = b.node("sigmoid", "y", {t});
  const Graph before = b.build({y});
  auto [after, report] = test::apply("remove_identities", before);
  CHECK(test::op_counts(after) == std::map<std::string, size_t>{{"relu", 1}, {"sigmoid", 1}});
  CHECK(test::node_named(after, "y").inputs == std::vector<std::string>{"a"});
  CHECK(report.nodes_removed == 3);
  REQUIRE(report.changes.size() == 3);
  CHECK(report.changes[0].before == std::vector<std::string>{"i"});
  CHECK(report.changes[0].after.empty());
  test::check_same_results(before, after);
}

TEST_CASE("remove_identities drops a transpose that only moves size-1 axes") {
  GraphBuilder b;
  auto x = b.input("x", {1, 5, 1, 1});
  auto t = b.node("transpose", "t", {x}, {{"perm", std::vector<int64_t>{2, 1, 0, 3}}});
  auto y = b.node("relu", "y", {t});
  const Graph before = b.build({y});
  auto [after, report] = test::apply("remove_identities", before);
  CHECK(test::count_op(after, "transpose") == 0);
  test::check_same_results(before, after);
}

TEST_CASE("remove_identities keeps a transpose that reorders data") {
  GraphBuilder b;
  auto x = b.input("x", {3, 3});
  auto t = b.node("transpose", "t", {x}, {{"perm", std::vector<int64_t>{1, 0}}});
  auto y = b.node("relu", "y", {t});
  const Graph before = b.build({y});
  auto [after, report] = test::apply("remove_identities", before);
  CHECK(test::count_op(after, "transpose") == 1);
  CHECK_FALSE(report.changed());
}

TEST_CASE("remove_identities drops +0, -0, *1 and /1 but only without broadcasting") {
  GraphBuilder b;
  auto x = b.input("x", {2, 3});
  auto zero = b.constant("zero", {3}, {0, 0, 0});
  auto one = b.scalar("one", 1.0f);
  auto a = b.node("add", "a", {x, zero});
  auto s = b.node("sub", "s", {a, zero});
  auto m = b.node("mul", "m", {one, s});
  auto d = b.node("div", "d", {m, one});
  // zeros of shape [4, 2, 3] broadcast x to a bigger shape: not an identity.
  auto big_zero = b.constant("big_zero", {4, 2, 3}, std::vector<float>(24, 0.0f));
  auto grown = b.node("add", "grown", {d, big_zero});
  const Graph before = b.build({grown});
  auto [after, report] = test::apply("remove_identities", before);
  CHECK(test::op_counts(after) == std::map<std::string, size_t>{{"add", 1}});
  CHECK(test::node_named(after, "grown").inputs[0] == "x");
  CHECK_FALSE(after.has_tensor("zero"));  // no longer used
  test::check_same_results(before, after);
}

TEST_CASE("remove_identities keeps sub from zero, division of one and non-neutral constants") {
  GraphBuilder b;
  auto x = b.input("x", {2, 3});
  auto zero = b.scalar("zero", 0.0f);
  auto one = b.scalar("one", 1.0f);
  auto almost = b.scalar("almost", 1.0001f);
  auto a = b.node("sub", "a", {zero, x});   // -x
  auto c = b.node("div", "c", {one, a});    // 1 / a
  auto d = b.node("mul", "d", {c, almost});
  const Graph before = b.build({d});
  auto [after, report] = test::apply("remove_identities", before);
  CHECK_FALSE(report.changed());
  CHECK(after.nodes.size() == 3);
}

TEST_CASE("remove_identities keeps an add with a fused clamp even when adding zero") {
  GraphBuilder b;
  auto x = b.input("x", {4});
  auto zero = b.scalar("zero", 0.0f);
  auto y = b.node("add", "y", {x, zero}, {{"act_min", 0.0}, {"act_max", 6.0}});
  auto [after, report] = test::apply("remove_identities", b.build({y}));
  CHECK(test::count_op(after, "add") == 1);
}

TEST_CASE("remove_identities drops a full slice, keeps a reversing slice") {
  GraphBuilder b;
  auto x = b.input("x", {2, 4});
  auto full = b.node("slice", "full", {x},
                     {{"starts", std::vector<int64_t>{0}}, {"ends", std::vector<int64_t>{INT64_MAX}}, {"axes", std::vector<int64_t>{1}}});
  auto reversed = b.node("slice", "reversed", {full},
                         {{"starts", std::vector<int64_t>{-1}}, {"ends", std::vector<int64_t>{INT64_MIN}},
                          {"axes", std::vector<int64_t>{1}}, {"steps", std::vector<int64_t>{-1}}});
  const Graph before = b.build({reversed});
  auto [after, report] = test::apply("remove_identities", before);
  CHECK(test::op_counts(after) == std::map<std::string, size_t>{{"slice", 1}});
  CHECK(test::node_named(after, "reversed").inputs[0] == "x");
  test::check_same_results(before, after);
}

TEST_CASE("remove_identities drops a zero pad and a same-size resize, keeps real ones") {
  GraphBuilder b;
  auto x = b.input("x", {1, 2, 4, 4});
  auto pad = b.node("pad", "pad", {x}, {{"pads", std::vector<int64_t>(8, 0)}, {"mode", std::string("reflect")}});
  auto same = b.node("resize", "same", {pad},
                     {{"sizes", std::vector<int64_t>{1, 2, 4, 4}}, {"mode", std::string("linear")},
                      {"coordinate_transformation_mode", std::string("align_corners")}});
  // tf_half_pixel_for_nn samples at i + 0.5, which round_prefer_ceil rounds up: a shift, not a no-op.
  auto shifted = b.node("resize", "shifted", {same},
                        {{"sizes", std::vector<int64_t>{1, 2, 4, 4}}, {"nearest_mode", std::string("round_prefer_ceil")},
                         {"coordinate_transformation_mode", std::string("tf_half_pixel_for_nn")}});
  auto grown = b.node("pad", "grown", {shifted}, {{"pads", std::vector<int64_t>{0, 0, 1, 0, 0, 0, 0, 1}}});
  const Graph before = b.build({grown});
  auto [after, report] = test::apply("remove_identities", before);
  CHECK(test::op_counts(after) == std::map<std::string, size_t>{{"pad", 1}, {"resize", 1}});
  CHECK(test::node_named(after, "shifted").inputs[0] == "x");
  test::check_same_results(before, after);
}

TEST_CASE("remove_identities renames the producer when the identity's output is a graph output") {
  GraphBuilder b;
  auto x = b.input("x", {3});
  auto a = b.node("relu", "a", {x});
  auto y = b.node("identity", "y", {a});
  auto z = b.node("sigmoid", "z", {a});
  const Graph before = b.build({y, z});
  auto [after, report] = test::apply("remove_identities", before);
  CHECK(test::count_op(after, "identity") == 0);
  CHECK(test::node_named(after, "a").outputs[0] == "y");
  CHECK(test::node_named(after, "z").inputs[0] == "y");
  CHECK(after.outputs == std::vector<std::string>{"y", "z"});
  test::check_same_results(before, after);
}

TEST_CASE("remove_identities keeps an identity from a graph input to a graph output") {
  GraphBuilder b;
  auto x = b.input("x", {3});
  auto y = b.node("identity", "y", {x});
  auto [after, report] = test::apply("remove_identities", b.build({y}));
  CHECK(test::count_op(after, "identity") == 1);
  CHECK_FALSE(report.changed());
}

}  // namespace
}  // namespace mt
