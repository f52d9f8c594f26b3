#include "lib/runtime/prepack.h"

#include "lib/core/error.h"

namespace mt {

std::optional<std::string> packed_backend(const Graph& graph) {
  const auto it = graph.metadata.find("backend");
  if (it == graph.metadata.end()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object() && it->contains("name") && (*it)["name"].is_string()) return (*it)["name"].get<std::string>();
  invalid_input("metadata 'backend' is neither a name nor an object with one: {}", it->dump());
}

std::optional<std::string> packed_precision(const Graph& graph) {
  if (packed_backend(graph) != "vulkan") return std::nullopt;
  const auto& entry = graph.metadata.at("backend");
  const auto it = entry.is_object() ? entry.find("precision") : entry.end();
  if (it == entry.end() || !it->is_string() || (*it != "fp32" && *it != "fp16"))
    invalid_input("metadata 'backend' of a model prepacked for vulkan has no precision fp32 or fp16: {}", entry.dump());
  return it->get<std::string>();
}

std::string default_precision(const Graph& graph) { return packed_precision(graph).value_or("fp32"); }

Shape caller_shape(const TensorInfo& info) {
  if (info.layout.empty()) return info.shape;
  if (info.layout == kLayoutNhwc && info.shape.size() == 4)
    return {info.shape[0], info.shape[2], info.shape[3], info.shape[1]};
  unsupported("input '{}' ({}) has layout '{}', which callers cannot supply", info.name, shape_str(info.shape),
              info.layout);
}

}  // namespace mt
