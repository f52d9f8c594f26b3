// Builds small graphs by hand for the pass tests, applies a pass by name, and checks that a
// rewritten graph computes what the original did (reference backend, seeded inputs).
#pragma once

#include <doctest/doctest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "kernels/reference/reference_backend.h"
#include "lib/core/error.h"
#include "lib/passes/graph_edit.h"
#include "lib/passes/pass_registry.h"
#include "lib/passes/verify.h"

// Op counts print as "{add: 1, conv2d: 3}" in failed checks.
template <>
struct doctest::StringMaker<std::map<std::string, size_t>> {
  static doctest::String convert(const std::map<std::string, size_t>& counts) {
    std::string text = "{";
    for (const auto& [op, n] : counts) text += (text.size() > 1 ? ", " : "") + op + ": " + std::to_string(n);
    return (text + "}").c_str();
  }
};

namespace mt::test {

class GraphBuilder {
 public:
  std::string input(const std::string& name, Shape shape, DType dtype = DType::f32) {
    graph_.add_tensor(TensorInfo{.name = name, .dtype = dtype, .shape = std::move(shape)});
    graph_.inputs.push_back(name);
    return name;
  }

  std::string constant(const std::string& name, Shape shape, const std::vector<float>& values) {
    REQUIRE(static_cast<int64_t>(values.size()) == numel(shape));
    graph_.add_tensor(TensorInfo{.name = name,
                                 .dtype = DType::f32,
                                 .shape = std::move(shape),
                                 .data = ConstData::copy_of(values.data(), values.size() * sizeof(float))});
    return name;
  }
  std::string scalar(const std::string& name, float value) { return constant(name, {}, {value}); }

  // Uniform values in [lo, hi) from a seed derived from the name, so graphs are reproducible.
  std::string random(const std::string& name, Shape shape, float lo = -1.0f, float hi = 1.0f) {
    std::mt19937 rng(static_cast<unsigned>(std::hash<std::string>{}(name)));
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> values(static_cast<size_t>(numel(shape)));
    for (auto& v : values) v = dist(rng);
    return constant(name, std::move(shape), values);
  }

  // Adds a node named `name` whose single output is the tensor `name`; returns it.
  std::string node(const std::string& op, const std::string& name, std::vector<std::string> inputs,
                   Attributes attrs = {}) {
    graph_.nodes.push_back(Node{.name = name, .op = op, .inputs = std::move(inputs), .outputs = {name}, .attrs = std::move(attrs)});
    return name;
  }
  void node_outputs(const std::string& op, const std::string& name, std::vector<std::string> inputs,
                    std::vector<std::string> outputs, Attributes attrs = {}) {
    graph_.nodes.push_back(
        Node{.name = name, .op = op, .inputs = std::move(inputs), .outputs = std::move(outputs), .attrs = std::move(attrs)});
  }

  Graph build(std::vector<std::string> outputs) {
    graph_.outputs = std::move(outputs);
    graph_.infer_shapes();
    graph_.validate();
    return graph_;
  }

 private:
  Graph graph_;
};

inline size_t count_op(const Graph& graph, const std::string& op) {
  size_t n = 0;
  for (const auto& node : graph.nodes) n += node.op == op;
  return n;
}

inline std::map<std::string, size_t> op_counts(const Graph& graph) {
  std::map<std::string, size_t> counts;
  for (const auto& node : graph.nodes) ++counts[node.op];
  return counts;
}

inline const Node& node_named(const Graph& graph, const std::string& name) {
  for (const auto& node : graph.nodes)
    if (node.name == name) return node;
  FAIL("no node named ", name);
  throw;  // unreachable: FAIL throws
}

// Applies the registered pass `name` to a copy of `graph` and returns the copy and the report.
inline std::pair<Graph, passes::PassReport> apply(const std::string& name, const Graph& graph) {
  const passes::PassInfo* pass = passes::find_pass(name);
  REQUIRE_MESSAGE(pass != nullptr, "no pass ", name);
  Graph result = graph;
  passes::PassReport report = passes::apply_pass(*pass, result);
  return {std::move(result), std::move(report)};
}

// Runs both graphs node by node through the reference kernels on the same seeded inputs and
// checks every output: max |after - before| <= 1e-5 * max(1, max |before|).
inline void check_same_results(const Graph& before, const Graph& after, uint64_t seed = 7) {
  static const auto backend = make_reference_backend();
  const auto inputs = passes::verification_inputs(before, {}, seed);
  auto run = [&](const Graph& graph) {
    auto plan = backend->plan(graph, PlanOptions{});
    for (size_t i = 0; i < inputs.size(); ++i) plan->bind_input(i, inputs[i].data.data());
    plan->run();
    std::vector<std::vector<double>> outputs;
    for (size_t i = 0; i < graph.outputs.size(); ++i) {
      const TensorInfo& info = graph.tensor(graph.outputs[i]);
      outputs.push_back(to_doubles(info.dtype, plan->output_data(i), static_cast<size_t>(info.numel())));
    }
    return outputs;
  };
  const auto expected = run(before), actual = run(after);
  REQUIRE(expected.size() == actual.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    REQUIRE(expected[i].size() == actual[i].size());
    double scale = 1.0, error = 0.0;
    for (size_t k = 0; k < expected[i].size(); ++k) {
      scale = std::max(scale, std::abs(expected[i][k]));
      error = std::max(error, std::abs(actual[i][k] - expected[i][k]));
    }
    INFO("output ", before.outputs[i], ": max abs error ", error, " (scale ", scale, ")");
    CHECK(error <= 1e-5 * scale);
  }
}

}  // namespace mt::test
