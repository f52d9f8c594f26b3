// FLOP counts (lib/ops/flops.h), hand-computed: 2 * outputs * products per output.
#include <doctest/doctest.h>

#include "bench_test_util.h"
#include "lib/ops/flops.h"

namespace mt::bench::test {
namespace {

// One node `op` over the given inputs (constants where a value is given), shapes inferred; its
// outputs are "out", then "out1", "out2", ... when it has several.
Graph single_node(const std::string& op, const std::vector<std::pair<std::string, Shape>>& inputs,
                  Attributes attrs = {}, int outputs = 1) {
  Graph graph;
  Node node{.name = "n", .op = op, .outputs = {"out"}, .attrs = std::move(attrs)};
  for (int i = 1; i < outputs; ++i) node.outputs.push_back("out" + std::to_string(i));
  for (const auto& [name, shape] : inputs) {
    graph.add_tensor(name == "x" ? TensorInfo{.name = name, .dtype = DType::f32, .shape = shape}
                                 : constant(name, shape, 1.0f));
    node.inputs.push_back(name);
  }
  for (const auto& name : node.outputs) graph.add_tensor({.name = name, .dtype = DType::f32});
  graph.nodes.push_back(std::move(node));
  graph.inputs = {"x"};
  graph.outputs = {"out"};
  graph.infer_shapes();
  graph.validate();
  return graph;
}

double flops_of(const Graph& graph) {
  const auto flops = node_flops(graph, graph.nodes.at(0));
  REQUIRE(flops.has_value());
  return *flops;
}

}  // namespace

TEST_CASE("conv2d: 2 * N*M*oH*oW * C/group*kH*kW") {
  // [1,3,8,8] * [4,3,3,3], pads 1 -> [1,4,8,8]: 2 * 256 * 27.
  CHECK(flops_of(single_node("conv2d", {{"x", {1, 3, 8, 8}}, {"w", {4, 3, 3, 3}}, {"b", {4}}},
                             {{"pads", std::vector<int64_t>{1, 1, 1, 1}}})) == 13824);
  // Depthwise, stride 2, no pads: [1,4,9,9] -> [1,4,4,4]; 2 * 64 * 9.
  CHECK(flops_of(single_node("conv2d", {{"x", {1, 4, 9, 9}}, {"w", {4, 1, 3, 3}}},
                             {{"group", int64_t{4}}, {"strides", std::vector<int64_t>{2, 2}}})) == 1152);
  // Batch 2, 1x1 kernel: [2,8,5,5] * [16,8,1,1] -> [2,16,5,5]; 2 * 800 * 8.
  CHECK(flops_of(single_node("conv2d", {{"x", {2, 8, 5, 5}}, {"w", {16, 8, 1, 1}}})) == 12800);
}

TEST_CASE("conv_transpose2d: 2 * N*C*H*W * M/group*kH*kW") {
  // [1,2,4,4] scattered through [2,3,3,3]: 2 * 32 * 27 (output size does not matter).
  CHECK(flops_of(single_node("conv_transpose2d", {{"x", {1, 2, 4, 4}}, {"w", {2, 3, 3, 3}}},
                             {{"strides", std::vector<int64_t>{2, 2}}})) == 1728);
}

TEST_CASE("linear and matmul: 2 * outputs * K") {
  CHECK(flops_of(single_node("linear", {{"x", {2, 5}}, {"w", {3, 5}}, {"b", {3}}})) == 60);
  CHECK(flops_of(single_node("linear", {{"x", {2, 7, 5}}, {"w", {3, 5}}})) == 2 * 42 * 5);
  CHECK(flops_of(single_node("matmul", {{"x", {2, 4, 5}}, {"w", {5, 6}}})) == 480);
  CHECK(flops_of(single_node("matmul", {{"x", {5}}, {"w", {5, 6}}})) == 60);  // 1-D A: [6] outputs
}

TEST_CASE("rnn, gru, lstm: 2 * T*B * (W + R elements)") {
  // T 5, B 2, I 3, H 4, bidirectional lstm: W [2, 16, 3], R [2, 16, 4]; 2 * 10 * (96 + 128).
  const Attributes bidirectional{{"hidden_size", int64_t{4}}, {"direction", std::string("bidirectional")}};
  CHECK(flops_of(single_node("lstm", {{"x", {5, 2, 3}}, {"w", {2, 16, 3}}, {"r", {2, 16, 4}}}, bidirectional, 3)) ==
        4480);
  // gru, one direction: W [1, 12, 3], R [1, 12, 4]; 2 * 10 * (36 + 48).
  CHECK(flops_of(single_node("gru", {{"x", {5, 2, 3}}, {"w", {1, 12, 3}}, {"r", {1, 12, 4}}},
                             {{"hidden_size", int64_t{4}}}, 2)) == 1680);
}

TEST_CASE("ops without a count") {
  const Graph graph = single_node("relu", {{"x", {1, 4}}});
  CHECK_FALSE(node_flops(graph, graph.nodes[0]).has_value());
}

}  // namespace mt::bench::test
