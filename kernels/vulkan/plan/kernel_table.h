// The Vulkan backend's op table: for each op it runs, a check that needs no device (can this node
// run here, and if not, exactly why) and a planner that emits the node's dispatches.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "kernels/vulkan/plan/plan_builder.h"

namespace mt::vulkan {

// nullopt if the node can run; otherwise the reason in a few words.
using CheckFn = std::optional<std::string> (*)(const Graph& graph, const Node& node);
using PlanFn = void (*)(NodeContext& context);

struct VulkanKernel {
  std::string_view op;
  CheckFn check;  // nullptr: every node of the op runs (dtypes and ranks are checked for all ops)
  PlanFn plan;
};

// The entry for `op`, or nullptr if the Vulkan backend does not implement it.
const VulkanKernel* find_vulkan_kernel(std::string_view op);
std::span<const VulkanKernel> vulkan_kernels();
// The same for int8 nodes (ops/ops.h: is_int8_node), whose kernels differ: the op table's
// vulkan_int8 column.
const VulkanKernel* find_vulkan_int8_kernel(std::string_view op);
std::span<const VulkanKernel> vulkan_int8_kernels();
// The entry that runs `node`: from the int8 table for int8 nodes; nullptr if there is none.
const VulkanKernel* find_vulkan_kernel(const Graph& graph, const Node& node);

}  // namespace mt::vulkan
