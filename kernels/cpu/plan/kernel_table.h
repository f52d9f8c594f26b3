// The cpu backend's op table: for each op it runs, a check (can this node run here, and if not,
// why) and a planner (choose kernels, create XNNPACK operators, declare buffers and steps).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "kernels/cpu/plan/plan_builder.h"

namespace mt::cpu {

// nullopt if the node can run; otherwise the reason in a few words.
using CheckFn = std::optional<std::string> (*)(const Graph& graph, const Node& node);
using PlanFn = void (*)(NodeContext& context);

struct CpuKernel {
  std::string_view op;
  CheckFn check;
  PlanFn plan;
};

// The float entry for `op`, or nullptr if the cpu backend does not implement it.
const CpuKernel* find_cpu_kernel(std::string_view op);
// True for a node of lib/quant's int8 scheme: its first input is int8 with quantization parameters
// (dequantize excepted). Plain int8 tensors (cast, gather indices) stay with the float table.
bool is_int8_node(const Graph& graph, const Node& node);
// The entry that runs `node`: the int8 one (ops_int8.h) for an int8 node, else the float one.
const CpuKernel* find_cpu_kernel(const Graph& graph, const Node& node);
std::span<const CpuKernel> cpu_kernels();
std::span<const CpuKernel> cpu_int8_kernels();

}  // namespace mt::cpu
