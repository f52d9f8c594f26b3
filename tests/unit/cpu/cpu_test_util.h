// Small graphs for the cpu backend tests: build a graph from host tensors (graph inputs or
// constants), run it on the cpu backend and on the reference backend, compare element by element.
#pragma once

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_backend.h"
#include "kernels/reference/reference_backend.h"
#include "lib/ops/registry.h"
#include "tests/unit/host_tensor.h"

namespace mt::test {

class GraphBuilder {
 public:
  // A graph input fed with `value` when the graph runs.
  std::string input(const std::string& name, HostTensor value) {
    graph.add_tensor(TensorInfo{.name = name, .dtype = value.dtype, .shape = value.shape});
    graph.inputs.push_back(name);
    feeds.emplace(name, std::move(value));
    return name;
  }
  std::string constant(const std::string& name, const HostTensor& value) {
    TensorInfo info{.name = name, .dtype = value.dtype, .shape = value.shape};
    info.data = ConstData::copy_of(value.bytes.data(), value.bytes.size());
    graph.add_tensor(std::move(info));
    return name;
  }
  // Adds a node; its outputs are named "<name>:0", "<name>:1", ...
  std::vector<std::string> node(const std::string& op, std::vector<std::string> inputs, Attributes attrs = {},
                                int outputs = 1) {
    // fmt rather than string + (GCC 12 warns falsely about the latter, bug 105329).
    Node n{.name = fmt::format("n{}_{}", graph.nodes.size(), op), .op = op, .inputs = std::move(inputs),
           .attrs = std::move(attrs)};
    for (int i = 0; i < outputs; ++i) n.outputs.push_back(fmt::format("{}:{}", n.name, i));
    std::vector<const TensorInfo*> infos;
    for (const auto& in : n.inputs) infos.push_back(in.empty() ? nullptr : &graph.tensor(in));
    const auto types = infer_node(n, infos);
    for (size_t i = 0; i < types.size(); ++i)
      graph.add_tensor(TensorInfo{.name = n.outputs[i], .dtype = types[i].dtype, .shape = types[i].shape});
    graph.nodes.push_back(n);
    return n.outputs;
  }
  std::string op(const std::string& op, std::vector<std::string> inputs, Attributes attrs = {}) {
    return node(op, std::move(inputs), std::move(attrs))[0];
  }
  void output(const std::string& name) { graph.outputs.push_back(name); }

  Graph graph;
  std::map<std::string, HostTensor> feeds;
};

// Runs `graph` on `backend` planned with `options`, feeding graph inputs from `feeds`; returns the
// outputs.
inline std::vector<HostTensor> run_graph(const Backend& backend, const Graph& graph,
                                         const std::map<std::string, HostTensor>& feeds, const PlanOptions& options) {
  graph.validate();
  auto plan = backend.plan(graph, options);
  for (size_t i = 0; i < graph.inputs.size(); ++i) plan->bind_input(i, feeds.at(graph.inputs[i]).bytes.data());
  plan->run();
  std::vector<HostTensor> results;
  for (size_t i = 0; i < graph.outputs.size(); ++i) {
    const TensorInfo& info = graph.tensor(graph.outputs[i]);
    HostTensor h{info.dtype, info.shape, std::vector<std::byte>(info.byte_size())};
    if (!h.bytes.empty()) std::memcpy(h.bytes.data(), plan->output_data(i), h.bytes.size());
    results.push_back(std::move(h));
  }
  return results;
}
inline std::vector<HostTensor> run_graph(const Backend& backend, const Graph& graph,
                                         const std::map<std::string, HostTensor>& feeds, int threads = 1) {
  PlanOptions options;
  options.threads = threads;
  return run_graph(backend, graph, feeds, options);
}

inline const Backend& cpu_backend() {
  static const auto backend = make_cpu_backend();
  return *backend;
}
inline const Backend& reference_backend() {
  static const auto backend = make_reference_backend();
  return *backend;
}

// |actual - expected| <= atol + rtol * |expected| everywhere (NaN and infinities must match).
inline void check_close(const HostTensor& actual, const HostTensor& expected, double atol, double rtol) {
  REQUIRE(actual.dtype == expected.dtype);
  REQUIRE(actual.shape == expected.shape);
  if (actual.dtype != DType::f32) {
    CHECK(actual.bytes == expected.bytes);
    return;
  }
  const auto a = actual.values<float>(), e = expected.values<float>();
  size_t failures = 0;
  for (size_t i = 0; i < a.size() && failures < 5; ++i) {
    const bool ok = std::isnan(e[i]) ? std::isnan(a[i])
                    : std::isinf(e[i]) ? a[i] == e[i]
                                       : std::abs(double(a[i]) - e[i]) <= atol + rtol * std::abs(double(e[i]));
    if (!ok) {
      ++failures;
      FAIL_CHECK("element ", i, " of ", shape_str(actual.shape), ": cpu ", a[i], ", reference ", e[i]);
    }
  }
}

// Runs the builder's graph on cpu (1 and 2 threads, the kernel paths as `options` say) and on the
// reference backend and compares.
inline void check_against_reference(const GraphBuilder& b, double atol = 1e-5, double rtol = 1e-5,
                                    PlanOptions options = {}) {
  const auto expected = run_graph(reference_backend(), b.graph, b.feeds);
  for (int threads : {1, 2}) {
    INFO("threads: ", threads);
    options.threads = threads;
    const auto actual = run_graph(cpu_backend(), b.graph, b.feeds, options);
    REQUIRE(actual.size() == expected.size());
    for (size_t i = 0; i < actual.size(); ++i) {
      INFO("output ", b.graph.outputs[i]);
      check_close(actual[i], expected[i], atol, rtol);
    }
  }
}

inline Attribute ints(std::vector<int64_t> v) { return Attribute{std::move(v)}; }
inline Attribute floats_attr(std::vector<double> v) { return Attribute{std::move(v)}; }
inline Attribute str(std::string v) { return Attribute{std::move(v)}; }
inline Attribute integer(int64_t v) { return Attribute{v}; }
inline Attribute real(double v) { return Attribute{v}; }

}  // namespace mt::test

namespace mt::test {

// A 1x1 convolution from `channels` to `out_channels`: its output lives in NHWC inside the cpu
// backend, so whatever follows it is tested on the channels-last path.
inline std::string conv1x1(GraphBuilder& b, const std::string& x, int64_t channels, int64_t out_channels,
                           uint32_t seed) {
  const std::string w = b.constant(fmt::format("w{}", seed), random({out_channels, channels, 1, 1}, seed));
  const std::string bias = b.constant(fmt::format("b{}", seed), random({out_channels}, seed + 1));
  return b.op("conv2d", {x, w, bias});
}

}  // namespace mt::test
