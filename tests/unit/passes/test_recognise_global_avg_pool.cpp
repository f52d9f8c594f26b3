// recognise_global_avg_pool: reduce_mean over exactly the spatial axes of a float32 4-D tensor
// becomes global_avg_pool (+ a reshape to [N, C] for keepdims 0) with the same results on the
// reference kernels; other reductions stay, and a layer norm over H, W still becomes layer_norm.
#include "pass_test_util.h"

#include "lib/passes/pipeline.h"

namespace mt {
namespace {

using test::GraphBuilder;
using Ints = std::vector<int64_t>;

// x [2, 3, 5, 4] -> reduce_mean "m" -> relu "r"; both m and r are graph outputs.
Graph spatial_mean(const Ints& axes, int64_t keepdims) {
  GraphBuilder b;
  auto x = b.input("x", {2, 3, 5, 4});
  auto m = b.node("reduce_mean", "m", {x}, {{"axes", axes}, {"keepdims", keepdims}});
  auto r = b.node("relu", "r", {m});
  return b.build({m, r});
}

TEST_CASE("recognise_global_avg_pool: keepdims 1, any spelling of axes {2, 3}") {
  for (const Ints& axes : {Ints{2, 3}, Ints{3, 2}, Ints{-2, -1}, Ints{-1, 2}}) {
    CAPTURE(axes);
    const Graph before = spatial_mean(axes, 1);
    auto [after, report] = test::apply("recognise_global_avg_pool", before);
    REQUIRE(test::op_counts(after) == std::map<std::string, size_t>{{"global_avg_pool", 1}, {"relu", 1}});
    const Node& pool = after.nodes[0];
    CHECK(pool.name == "m");
    CHECK(pool.inputs == std::vector<std::string>{"x"});
    CHECK(pool.outputs == std::vector<std::string>{"m"});
    CHECK(after.tensor("m").shape == Shape{2, 3, 1, 1});
    CHECK(after.outputs == before.outputs);
    REQUIRE(report.changes.size() == 1);
    CHECK(report.changes[0].before == std::vector<std::string>{"m"});
    test::check_same_results(before, after);
  }
}

TEST_CASE("recognise_global_avg_pool: keepdims 0 adds a reshape to [N, C] that writes the mean's output") {
  for (const Ints& axes : {Ints{2, 3}, Ints{-1, -2}, Ints{3, -2}}) {
    CAPTURE(axes);
    const Graph before = spatial_mean(axes, 0);
    auto [after, report] = test::apply("recognise_global_avg_pool", before);
    REQUIRE(test::op_counts(after) ==
            std::map<std::string, size_t>{{"global_avg_pool", 1}, {"relu", 1}, {"reshape", 1}});
    const Node& pool = after.nodes[0];
    const Node& reshape = after.nodes[1];
    CHECK(pool.op == "global_avg_pool");
    CHECK(pool.name == "m");
    CHECK(after.tensor(pool.outputs[0]).shape == Shape{2, 3, 1, 1});
    CHECK(reshape.op == "reshape");
    CHECK(reshape.inputs == pool.outputs);
    CHECK(reshape.outputs == std::vector<std::string>{"m"});
    CHECK(std::get<Ints>(reshape.attrs.at("shape")) == Ints{2, 3});
    CHECK(after.tensor("m").shape == Shape{2, 3});
    CHECK(after.outputs == before.outputs);
    CHECK(after.nodes[2].inputs == std::vector<std::string>{"m"});  // the relu reads what it read
    REQUIRE(report.changes.size() == 1);
    CHECK(report.changes[0].after == std::vector<std::string>{"m", reshape.name});
    test::check_same_results(before, after);
  }
}

TEST_CASE("recognise_global_avg_pool leaves other axes, ranks, dtypes and empty spatial axes") {
  GraphBuilder b;
  auto x = b.input("x", {2, 3, 5, 4});
  std::vector<std::string> outputs;
  for (const Ints& axes : {Ints{1}, Ints{2}, Ints{-1}, Ints{1, 2, 3}, Ints{0, 2, 3}, Ints{}})
    for (int64_t keepdims : {0, 1})
      outputs.push_back(b.node("reduce_mean", fmt::format("m{}_{}", outputs.size(), keepdims), {x},
                               {{"axes", axes}, {"keepdims", keepdims}}));
  const Ints spatial = {2, 3};
  outputs.push_back(b.node("reduce_mean", "rank3", {b.input("x3", {2, 3, 5})}, {{"axes", Ints{2}}}));
  outputs.push_back(b.node("reduce_mean", "rank3_two_axes", {b.input("y3", {2, 3, 5})}, {{"axes", Ints{1, 2}}}));
  outputs.push_back(b.node("reduce_mean", "rank5", {b.input("x5", {1, 2, 3, 4, 5})}, {{"axes", spatial}}));
  outputs.push_back(b.node("reduce_mean", "int8", {b.input("q", {1, 2, 3, 4}, DType::i8)}, {{"axes", spatial}}));
  outputs.push_back(b.node("reduce_mean", "empty", {b.input("e", {1, 2, 0, 4})}, {{"axes", spatial}}));
  outputs.push_back(b.node("reduce_sum", "sum", {x}, {{"axes", spatial}}));
  auto [after, report] = test::apply("recognise_global_avg_pool", b.build(outputs));
  CHECK_FALSE(report.changed());
  CHECK(test::count_op(after, "global_avg_pool") == 0);
}

TEST_CASE("the default pipeline: a layer norm over H, W stays a layer_norm, a head mean becomes a pool") {
  GraphBuilder b;
  auto x = b.input("x", {1, 4, 3, 5});
  const Attributes spatial = {{"axes", Ints{-2, -1}}, {"keepdims", int64_t{1}}};
  auto mean = b.node("reduce_mean", "mean", {x}, spatial);
  auto d = b.node("sub", "d", {x, mean});
  auto var = b.node("reduce_mean", "var", {b.node("mul", "sq", {d, d})}, spatial);
  auto sd = b.node("sqrt", "sd", {b.node("add", "ve", {var, b.scalar("eps", 1e-5f)})});
  auto normalised = b.node("div", "n", {d, sd});
  auto head = b.node("reduce_mean", "head", {normalised}, {{"axes", Ints{2, 3}}, {"keepdims", int64_t{0}}});
  const Graph before = b.build({head});
  Graph after = before;
  const auto result = passes::run_pipeline(after, {.passes = passes::select_passes({}, {})});
  CHECK(result.converged);
  CHECK(test::op_counts(after) ==
        std::map<std::string, size_t>{{"global_avg_pool", 1}, {"layer_norm", 1}, {"reshape", 1}});
  test::check_same_results(before, after);
}

}  // namespace
}  // namespace mt
