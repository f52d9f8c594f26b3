// Builds small ONNX models in C++ (onnx::ModelProto) for the importer tests, imports them
// through a temporary file exactly as mt-convert does, and runs the result on the reference backend.
#pragma once

#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <variant>
#include <vector>

#include "kernels/reference/reference_backend.h"
#include "lib/core/error.h"
#include "lib/import/onnx_importer.h"

namespace mt::test {

// A dimension: a number or a symbol ("batch").
using Dim = std::variant<int64_t, std::string>;

// This process's scratch directory (computed on each call: no static that could be destroyed
// before the cleanup below runs).
inline std::filesystem::path temp_dir() {
  auto path = std::filesystem::temp_directory_path() / ("mt_import_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(path);
  return path;
}

// Importer info logs would bury the test report.
inline const bool quiet_logs = [] {
  spdlog::set_level(spdlog::level::warn);
  return true;
}();

// Removes the temporary directory when the test binary exits.
struct TempDirCleanup {
  ~TempDirCleanup() {
    std::error_code ignored;
    std::filesystem::remove_all(temp_dir(), ignored);
  }
};
inline TempDirCleanup temp_dir_cleanup;

class OnnxBuilder {
 public:
  explicit OnnxBuilder(int opset = 13) {
    model_.set_ir_version(opset >= 15 ? 8 : 7);
    model_.set_producer_name("unit-test");
    model_.set_producer_version("1.0");
    auto* entry = model_.add_opset_import();
    entry->set_domain("");
    entry->set_version(opset);
    model_.mutable_graph()->set_name("test");
  }

  onnx::ModelProto& model() { return model_; }
  onnx::GraphProto& graph() { return *model_.mutable_graph(); }

  OnnxBuilder& input(const std::string& name, const std::vector<Dim>& shape, int elem = onnx::TensorProto::FLOAT) {
    value_info(graph().add_input(), name, shape, elem);
    return *this;
  }
  OnnxBuilder& output(const std::string& name, int elem = onnx::TensorProto::FLOAT) {
    auto* info = graph().add_output();
    info->set_name(name);
    auto* type = info->mutable_type()->mutable_tensor_type();
    type->set_elem_type(elem);
    type->mutable_shape();  // the checker wants a shape field, even an empty one
    return *this;
  }

  OnnxBuilder& init(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& values) {
    auto* t = graph().add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (auto d : dims) t->add_dims(d);
    for (auto v : values) t->add_float_data(v);
    return *this;
  }
  OnnxBuilder& init_i64(const std::string& name, const std::vector<int64_t>& dims, const std::vector<int64_t>& values) {
    auto* t = graph().add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    for (auto d : dims) t->add_dims(d);
    for (auto v : values) t->add_int64_data(v);
    return *this;
  }

  // Adds a node; set attributes on the returned proto with the attr_* helpers below.
  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "") {
    auto* n = graph().add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& in : inputs) n->add_input(in);
    for (const auto& out : outputs) n->add_output(out);
    return *n;
  }

  // Writes the model to a fresh file in the temporary directory and returns its path.
  std::string save() const {
    static std::atomic<int> counter{0};
    const auto path = temp_dir() / ("model_" + std::to_string(counter++) + ".onnx");
    std::ofstream out(path, std::ios::binary);
    REQUIRE(model_.SerializeToOstream(&out));
    return path.string();
  }

  Graph import(const ImportOptions& options = {}) const { return import_onnx(save(), options); }

 private:
  static void value_info(onnx::ValueInfoProto* info, const std::string& name, const std::vector<Dim>& shape, int elem) {
    info->set_name(name);
    auto* type = info->mutable_type()->mutable_tensor_type();
    type->set_elem_type(elem);
    auto* dims = type->mutable_shape();
    for (const auto& d : shape) {
      auto* dim = dims->add_dim();
      if (std::holds_alternative<int64_t>(d))
        dim->set_dim_value(std::get<int64_t>(d));
      else
        dim->set_dim_param(std::get<std::string>(d));
    }
  }

  onnx::ModelProto model_;
};

inline onnx::AttributeProto* new_attr(onnx::NodeProto& node, const std::string& name,
                                      onnx::AttributeProto::AttributeType type) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(type);
  return a;
}
inline void attr_int(onnx::NodeProto& node, const std::string& name, int64_t v) {
  new_attr(node, name, onnx::AttributeProto::INT)->set_i(v);
}
inline void attr_float(onnx::NodeProto& node, const std::string& name, float v) {
  new_attr(node, name, onnx::AttributeProto::FLOAT)->set_f(v);
}
inline void attr_string(onnx::NodeProto& node, const std::string& name, const std::string& v) {
  new_attr(node, name, onnx::AttributeProto::STRING)->set_s(v);
}
inline void attr_ints(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = new_attr(node, name, onnx::AttributeProto::INTS);
  for (auto x : v) a->add_ints(x);
}
inline void attr_floats(onnx::NodeProto& node, const std::string& name, const std::vector<float>& v) {
  auto* a = new_attr(node, name, onnx::AttributeProto::FLOATS);
  for (auto x : v) a->add_floats(x);
}
inline void attr_tensor_i64(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& dims,
                            const std::vector<int64_t>& values) {
  auto* t = new_attr(node, name, onnx::AttributeProto::TENSOR)->mutable_t();
  t->set_data_type(onnx::TensorProto::INT64);
  for (auto d : dims) t->add_dims(d);
  for (auto v : values) t->add_int64_data(v);
}
inline void attr_tensor_f32(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& dims,
                            const std::vector<float>& values) {
  auto* t = new_attr(node, name, onnx::AttributeProto::TENSOR)->mutable_t();
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (auto d : dims) t->add_dims(d);
  for (auto v : values) t->add_float_data(v);
}

// The node producing `tensor` (fails the test if none).
inline const Node& producer(const Graph& graph, const std::string& tensor) {
  for (const auto& node : graph.nodes)
    for (const auto& out : node.outputs)
      if (out == tensor) return node;
  FAIL("no node produces ", tensor);
  throw std::logic_error("unreachable");
}

inline std::vector<std::string> ops_of(const Graph& graph) {
  std::vector<std::string> ops;
  for (const auto& node : graph.nodes) ops.push_back(node.op);
  return ops;
}

template <typename T>
std::vector<T> constant_values(const Graph& graph, const std::string& name) {
  const TensorInfo& info = graph.tensor(name);
  REQUIRE(info.is_constant());
  REQUIRE(info.byte_size() == static_cast<size_t>(info.numel()) * sizeof(T));
  std::vector<T> values(static_cast<size_t>(info.numel()));
  if (!values.empty()) std::memcpy(values.data(), info.data.data(), info.byte_size());
  return values;
}

// Runs the graph on the reference backend with float32 inputs; returns output `index` as floats.
inline std::vector<float> run_graph(const Graph& graph, const std::vector<std::vector<float>>& inputs,
                                    size_t index = 0) {
  auto backend = make_reference_backend();
  auto plan = backend->plan(graph, {});
  REQUIRE(inputs.size() == graph.inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    REQUIRE(static_cast<int64_t>(inputs[i].size()) == graph.tensor(graph.inputs[i]).numel());
    plan->bind_input(i, inputs[i].data());
  }
  plan->run();
  const TensorInfo& out = graph.tensor(graph.outputs[index]);
  REQUIRE(out.dtype == DType::f32);
  const auto* data = static_cast<const float*>(plan->output_data(index));
  return {data, data + out.numel()};
}

inline void check_close(const std::vector<float>& actual, const std::vector<float>& expected, double tolerance = 1e-5) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    INFO("element ", i, ": got ", actual[i], ", expected ", expected[i]);
    CHECK(std::abs(static_cast<double>(actual[i]) - expected[i]) <= tolerance);
  }
}

// The Error an import throws (fails the test if it does not throw one).
inline Error import_error(const OnnxBuilder& builder, const ImportOptions& options = {}) {
  try {
    builder.import(options);
  } catch (const Error& e) {
    return e;
  }
  FAIL("the import did not fail");
  throw std::logic_error("unreachable");
}

// An initializer of any element type (elem, an onnx::TensorProto data type) from raw values of T.
template <typename T>
void init_typed(OnnxBuilder& b, const std::string& name, int elem, const std::vector<int64_t>& dims,
                const std::vector<T>& values) {
  auto* t = b.graph().add_initializer();
  t->set_name(name);
  t->set_data_type(elem);
  for (auto d : dims) t->add_dims(d);
  t->set_raw_data(values.data(), values.size() * sizeof(T));
}

}  // namespace mt::test
