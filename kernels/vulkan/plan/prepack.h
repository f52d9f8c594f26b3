// mt-prepack --backend vulkan: the weights and biases of conv2d, conv_transpose2d and linear stored
// as the shaders read them (weight_layout.h), in fp32 or fp16 (int8 weights of int8 nodes as int8,
// whatever the precision), so that planning copies them to the device as they are. Also which of
// those layouts a node may read (check_node, no device needed).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "lib/ir/graph.h"
#include "lib/ir/stored_layout.h"
#include "lib/runtime/prepack.h"

namespace mt::vulkan {

// conv2d takes its depthwise path: one input and one output channel per group, more than one group.
bool is_depthwise(const Graph& graph, const Node& node);

// The vulkan layout the planner of `node` would pack its input `input` into, or nullopt when it
// reads that input some other way (or packs it for more than one group, which stays row-major).
std::optional<VulkanLayout> packable_layout(const Graph& graph, const Node& node, size_t input);

// nullopt when `node` reads its input `input` in the vulkan layout that tensor is stored in; else why not.
std::optional<std::string> check_stored_layout(const Graph& graph, const Node& node, size_t input);

struct PrepackStats {
  size_t weights_packed = 0;  // constants stored in a vulkan layout
};

// Rewrites every packable constant (float32 or int8 weights, row-major, read only in one vulkan
// layout, not a graph output) into its vulkan layout and records backend, precision and what was done in the metadata.
// The caller has checked that the backend runs every node. Throws Error(usage) for an input layout
// other than nchw or a precision other than fp32 and fp16.
PrepackStats prepack_graph(Graph& graph, const PrepackOptions& options);

}  // namespace mt::vulkan
