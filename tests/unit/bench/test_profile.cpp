// Profile aggregation: per-node means over runs, shares of the total, GFLOP/s, per-op sums.
#include <doctest/doctest.h>

#include "bench_test_util.h"
#include "lib/bench/profile.h"
#include "lib/core/error.h"

namespace mt::bench::test {

TEST_CASE("aggregate_profile averages runs and sums per op type") {
  Graph graph = conv_relu_graph();
  // A second relu so that an op type has two nodes.
  graph.add_tensor({.name = "z", .dtype = DType::f32});
  graph.nodes.push_back({.name = "act2", .op = "relu", .inputs = {"y"}, .outputs = {"z"}});
  graph.outputs = {"z"};
  graph.infer_shapes();
  graph.validate();

  // conv: 3 ms and 5 ms -> 4 ms; act: 1 ms both runs; act2 only reported in the second run -> 1 ms.
  const std::vector<std::vector<NodeTiming>> runs = {{{0, 0.003}, {1, 0.001}}, {{0, 0.005}, {1, 0.001}, {2, 0.002}}};
  const Profile p = aggregate_profile(graph, runs);
  CHECK(p.runs == 2);
  CHECK(p.total_seconds == doctest::Approx(0.006));
  REQUIRE(p.nodes.size() == 3);
  CHECK(p.nodes[0].name == "conv");
  CHECK(p.nodes[0].op == "conv2d");
  CHECK(p.nodes[0].output_shape == Shape{1, 4, 8, 8});
  CHECK(p.nodes[0].seconds == doctest::Approx(0.004));
  CHECK(p.nodes[0].percent == doctest::Approx(100.0 * 4 / 6));
  REQUIRE(p.nodes[0].flops.has_value());
  CHECK(*p.nodes[0].flops == 13824);
  REQUIRE(p.nodes[0].gflops_per_second.has_value());
  CHECK(*p.nodes[0].gflops_per_second == doctest::Approx(13824 / 0.004 / 1e9));
  CHECK(p.nodes[2].seconds == doctest::Approx(0.001));
  CHECK_FALSE(p.nodes[1].flops.has_value());
  CHECK_FALSE(p.nodes[1].gflops_per_second.has_value());

  REQUIRE(p.ops.size() == 2);
  CHECK(p.ops[0].op == "conv2d");  // largest time first
  CHECK(p.ops[0].nodes == 1);
  CHECK(p.ops[1].op == "relu");
  CHECK(p.ops[1].nodes == 2);
  CHECK(p.ops[1].seconds == doctest::Approx(0.002));
  CHECK(p.ops[1].percent == doctest::Approx(100.0 * 2 / 6));
  CHECK_FALSE(p.ops[1].flops.has_value());
}

TEST_CASE("aggregate_profile rejects timings of nodes the graph does not have") {
  const Graph graph = conv_relu_graph();
  CHECK_THROWS_AS(aggregate_profile(graph, {{{7, 0.001}}}), Error);
  CHECK_THROWS_AS(aggregate_profile(graph, {}), Error);
}

TEST_CASE("a profile of zero time has no rates and no shares") {
  const Profile p = aggregate_profile(conv_relu_graph(), {{{0, 0.0}, {1, 0.0}}});
  CHECK(p.nodes[0].percent == 0);
  CHECK_FALSE(p.nodes[0].gflops_per_second.has_value());
}

}  // namespace mt::bench::test
