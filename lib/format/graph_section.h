// The JSON graph section of an .mt file (man/mt-format.5), read into a Graph with every check of
// the format: streamed through nlohmann's SAX parser into the graph's own structures, with no
// document tree in between (building and freeing one cost more than the parse itself).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "lib/ir/graph.h"

namespace mt {

// What the graph section's constants point into: the data section, kept alive by `owner`.
struct DataSection {
  std::shared_ptr<const void> owner;
  const std::byte* bytes = nullptr;
  uint64_t size = 0;
};

// Decodes `size` bytes of graph JSON. Throws Error(invalid_input) "SOURCE: what is wrong" for the first
// problem (a tensor's before the graph inputs', those before a node's), or Error(unsupported) for an op
// this mt does not know. Graph::validate() is left to the caller.
Graph decode_graph_section(const char* text, size_t size, const DataSection& data, const std::string& source);

}  // namespace mt
