// Graphs built node by node for the unit tests that need a small whole model (the C API, plans
// shared by threads): each node's single output tensor is named after the node and typed by shape
// inference as the node is added, and constants hold seeded random floats (seeds 1, 2, ... in the
// order the constants are made, so a graph is the same on every run).
#pragma once

#include <string>
#include <vector>

#include "lib/ops/registry.h"
#include "tests/unit/host_tensor.h"

namespace mt::test {

class TestGraph {
 public:
  // A float32 graph input.
  std::string input(const std::string& name, Shape shape) {
    graph.add_tensor(TensorInfo{.name = name, .dtype = DType::f32, .shape = std::move(shape)});
    graph.inputs.push_back(name);
    return name;
  }

  // A float32 constant of random_floats in [-1, 1) with the next seed.
  std::string constant(const std::string& name, Shape shape) {
    const std::vector<float> values = random_floats(static_cast<size_t>(numel(shape)), seed_++);
    TensorInfo info{.name = name, .dtype = DType::f32, .shape = std::move(shape)};
    info.data = ConstData::copy_of(values.data(), values.size() * sizeof(float));
    graph.add_tensor(std::move(info));
    return name;
  }

  // A node `name` of `op` whose output is the tensor `name`; returns it.
  std::string node(const std::string& name, const std::string& op, std::vector<std::string> inputs,
                   Attributes attrs = {}) {
    Node n{.name = name, .op = op, .inputs = std::move(inputs), .outputs = {name}, .attrs = std::move(attrs)};
    std::vector<const TensorInfo*> infos;
    for (const auto& in : n.inputs) infos.push_back(&graph.tensor(in));
    const auto types = infer_node(n, infos);
    graph.add_tensor(TensorInfo{.name = name, .dtype = types[0].dtype, .shape = types[0].shape});
    graph.nodes.push_back(std::move(n));
    return name;
  }

  // The graph with `outputs`, validated.
  Graph finish(std::vector<std::string> outputs) {
    graph.outputs = std::move(outputs);
    graph.validate();
    return graph;
  }

  Graph graph;

 private:
  uint32_t seed_ = 1;
};

}  // namespace mt::test
