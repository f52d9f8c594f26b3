// Runs a single node through its reference kernel, for the reference kernel unit tests:
// builds a one-node Graph from host tensors, infers shapes, calls find_kernel(op), returns outputs.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "lib/ops/eval/reference.h"
#include "lib/ops/registry.h"
#include "tests/unit/host_tensor.h"

namespace mt::test {

// Runs `op` on `inputs` (nullopt = absent optional input) with `attrs`, producing `num_outputs`
// outputs. Shape inference errors propagate as mt::Error; a missing kernel fails the test.
inline std::vector<HostTensor> run_node(const std::string& op, const std::vector<std::optional<HostTensor>>& inputs,
                                        const Attributes& attrs = {}, int num_outputs = 1) {
  Graph graph;
  Node node{.name = "node", .op = op, .attrs = attrs};
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) {
      node.inputs.emplace_back();
      continue;
    }
    const std::string name = "in" + std::to_string(i);
    graph.add_tensor(TensorInfo{.name = name, .dtype = inputs[i]->dtype, .shape = inputs[i]->shape});
    graph.inputs.push_back(name);
    node.inputs.push_back(name);
  }
  for (int i = 0; i < num_outputs; ++i) node.outputs.push_back("out" + std::to_string(i));
  graph.outputs = node.outputs;
  graph.nodes.push_back(node);
  graph.infer_shapes();

  const reference::Kernel kernel = reference::find_kernel(op);
  const bool has_kernel = kernel != nullptr;
  REQUIRE_MESSAGE(has_kernel, "no reference kernel for op ", op);
  std::vector<reference::ConstView> in_views;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) {
      in_views.push_back({});
      continue;
    }
    in_views.push_back({&graph.tensor(node.inputs[i]), inputs[i]->bytes.data()});
  }
  std::vector<HostTensor> outputs;
  for (const auto& name : node.outputs) {
    const TensorInfo& info = graph.tensor(name);
    outputs.push_back(HostTensor{info.dtype, info.shape, std::vector<std::byte>(info.byte_size())});
  }
  std::vector<reference::MutView> out_views;
  for (size_t i = 0; i < outputs.size(); ++i) out_views.push_back({&graph.tensor(node.outputs[i]), outputs[i].bytes.data()});
  kernel(graph.nodes[0], in_views, out_views);
  return outputs;
}

// The single output of `op` on `inputs`.
inline HostTensor run_op(const std::string& op, const std::vector<std::optional<HostTensor>>& inputs,
                         const Attributes& attrs = {}) {
  return run_node(op, inputs, attrs, 1)[0];
}

// Checks element by element that |actual - expected| <= tolerance (infinities and NaN must match exactly).
inline void check_close(const std::vector<float>& actual, const std::vector<float>& expected, double tolerance) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    INFO("element ", i, ": got ", actual[i], ", expected ", expected[i]);
    if (std::isnan(expected[i])) {
      CHECK(std::isnan(actual[i]));
    } else if (std::isinf(expected[i])) {
      CHECK(actual[i] == expected[i]);
    } else {
      CHECK(std::abs(static_cast<double>(actual[i]) - expected[i]) <= tolerance);
    }
  }
}

}  // namespace mt::test
