// Small graphs for the bench tests: a conv2d -> relu network with constant weights, built by
// hand and shape-inferred through the op registry, and a temporary model file holding it.
#pragma once

#include <filesystem>
#include <string>
#include <unistd.h>

#include "lib/format/model_file.h"
#include "lib/ir/graph.h"

namespace mt::bench::test {

inline TensorInfo constant(const std::string& name, const Shape& shape, float value) {
  TensorInfo info{.name = name, .dtype = DType::f32, .shape = shape};
  info.data = ConstData::allocate(info.byte_size());
  auto* values = reinterpret_cast<float*>(info.data.mutable_data());
  for (int64_t i = 0; i < info.numel(); ++i) values[i] = value * static_cast<float>(i % 7 - 3);
  return info;
}

// x [1, 3, 8, 8] -> conv2d (4 filters of 3x3, pads 1) -> relu -> y [1, 4, 8, 8].
inline Graph conv_relu_graph() {
  Graph graph;
  graph.add_tensor({.name = "x", .dtype = DType::f32, .shape = {1, 3, 8, 8}});
  graph.add_tensor(constant("w", {4, 3, 3, 3}, 0.1f));
  graph.add_tensor(constant("b", {4}, 0.01f));
  graph.add_tensor({.name = "c", .dtype = DType::f32});
  graph.add_tensor({.name = "y", .dtype = DType::f32});
  graph.nodes.push_back({.name = "conv", .op = "conv2d", .inputs = {"x", "w", "b"}, .outputs = {"c"},
                         .attrs = {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}});
  graph.nodes.push_back({.name = "act", .op = "relu", .inputs = {"c"}, .outputs = {"y"}});
  graph.inputs = {"x"};
  graph.outputs = {"y"};
  graph.infer_shapes();
  graph.validate();
  return graph;
}

// A file in the temporary directory, removed when the object goes away.
class TempFile {
 public:
  explicit TempFile(const std::string& stem)
      : path_((std::filesystem::temp_directory_path() / (stem + "." + std::to_string(getpid()))).string()) {}
  ~TempFile() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace mt::bench::test
