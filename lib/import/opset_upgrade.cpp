#include "lib/import/opset_upgrade.h"

#include <map>
#include <optional>
#include <set>
#include <utility>

#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include "lib/core/error.h"

namespace mt::onnx_import {
namespace {

// The converter's messages may span lines and start with the failed assertion's place
// ("./onnx/version_converter/BaseConverter.h:66: adapter_lookup: Assertion `false` failed: ").
std::string converter_reason(const std::string& text) {
  std::string reason = text;
  if (const size_t at = reason.find("failed: "); at != std::string::npos) reason = reason.substr(at + 8);
  for (char& c : reason)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  while (!reason.empty() && reason.back() == ' ') reason.pop_back();
  return reason.empty() ? "(no reason given)" : reason;
}

// The converter builds its own graph IR and dereferences the producer of every name it meets without
// checking that one exists (a mutated file whose output no node produces crashed it), and ONNX's checker
// does not catch that. So: every node input must be a graph input, an initializer, an outer-scope name
// or the output of an earlier node, and every graph output must be one of those; subgraphs likewise.
void check_names_defined(const onnx::GraphProto& graph, std::set<std::string> visible, const std::string& source) {
  for (const auto& input : graph.input()) visible.insert(input.name());
  for (const auto& initializer : graph.initializer()) visible.insert(initializer.name());
  for (const auto& node : graph.node()) {
    for (const auto& name : node.input())
      if (!name.empty() && !visible.count(name))
        invalid_input("{}: node '{}' ({}) reads '{}', which no earlier node, input or initializer defines", source,
                      node.name(), node.op_type(), name);
    for (const auto& attribute : node.attribute()) {
      if (attribute.has_g()) check_names_defined(attribute.g(), visible, source);
      for (const auto& subgraph : attribute.graphs()) check_names_defined(subgraph, visible, source);
    }
    for (const auto& name : node.output()) visible.insert(name);
  }
  for (const auto& output : graph.output())
    if (!visible.count(output.name()))
      invalid_input("{}: graph output '{}' is defined by no node, input or initializer", source, output.name());
}

// The rank and dim 1 of tensor `name` where the (shape-inferred) graph declares them.
std::optional<std::pair<int, int64_t>> rank_and_channels(const onnx::GraphProto& graph, const std::string& name) {
  auto lookup = [&](const auto& values) -> std::optional<std::pair<int, int64_t>> {
    for (const auto& value : values) {
      if (value.name() != name || !value.type().tensor_type().has_shape()) continue;
      const auto& shape = value.type().tensor_type().shape();
      if (shape.dim_size() < 2 || !shape.dim(1).has_dim_value()) return std::nullopt;
      return std::pair{shape.dim_size(), shape.dim(1).dim_value()};
    }
    return std::nullopt;
  };
  if (auto found = lookup(graph.input())) return found;
  return lookup(graph.value_info());
}

// Before opset 7, PRelu's exporters (PyTorch, Caffe2) wrote a slope of C values for a per-channel
// slope (channels on dim 1), which opset 7's numpy broadcasting would align with the last dim; the
// converter keeps the slope as it is. So a 1-D constant slope of X's channel count, read by that
// PRelu alone, becomes [C, 1, ..., 1], which broadcasts along dim 1 under either rule.
void prelu_slopes_per_channel(onnx::ModelProto& model) {
  onnx::GraphProto& graph = *model.mutable_graph();
  std::map<std::string, int> readers;
  for (const auto& node : graph.node())
    for (const auto& name : node.input()) ++readers[name];
  for (const auto& node : graph.node()) {
    if (node.op_type() != "PRelu" || node.input_size() != 2 || readers[node.input(1)] != 1) continue;
    const auto shape = rank_and_channels(graph, node.input(0));
    if (!shape || shape->first < 3) continue;
    for (auto& initializer : *graph.mutable_initializer()) {
      if (initializer.name() != node.input(1) || initializer.dims_size() != 1 || initializer.dims(0) != shape->second)
        continue;
      for (int d = 2; d < shape->first; ++d) initializer.add_dims(1);
      // Old files list initializers among the graph inputs too: their declared shape follows.
      for (auto& input : *graph.mutable_input())
        if (input.name() == initializer.name())
          for (int d = 2; d < shape->first; ++d)
            input.mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(1);
    }
  }
}

}  // namespace

onnx::ModelProto upgrade_opset(const onnx::ModelProto& model, int from_opset, int to_opset, const std::string& source) {
  // The adapters of broadcasting ops (Add and Gemm before opset 7, say) need the shapes of their
  // inputs, which old exporters seldom wrote: ONNX's shape inference adds them first, where it can.
  check_names_defined(model.graph(), {}, source);
  onnx::ModelProto shaped = model;
  try {
    onnx::shape_inference::InferShapes(shaped);
  } catch (const std::exception&) {
    shaped = model;  // the converter then says which op lacks shapes
  }
  if (from_opset < 7) prelu_slopes_per_channel(shaped);
  // Opset 8's Scan has a batch axis and sequence_lens, and the converter's adapter drops that axis
  // from the model's inputs and outputs: the model it writes reads other shapes.
  for (const auto& node : shaped.graph().node())
    if (node.op_type() == "Scan" && from_opset < 9)
      unsupported(
          "{}: {}Scan of opset {} (a batch axis and sequence_lens), which ONNX's version converter cannot "
          "upgrade without changing the model's shapes; export at opset 9 or later",
          source, node.name().empty() ? "" : fmt::format("node '{}': ", node.name()), from_opset);
  try {
    return onnx::version_conversion::ConvertVersion(shaped, to_opset);
  } catch (const std::exception& e) {
    unsupported("{}: opset {} is older than {}, and ONNX's version converter cannot upgrade it: {}", source, from_opset,
                to_opset, converter_reason(e.what()));
  }
}

}  // namespace mt::onnx_import
