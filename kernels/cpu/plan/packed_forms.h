// Packed weights of the cpu backend, one table for planning and for mt-prepack: for each stored
// layout (lib/ir/stored_layout.h, CpuLayout), the kernel path that reads it and the packing function
// that makes it from a node's weights as the model stores them (the engine's one packing function,
// given the node's shapes and parameters). An op planner asks packed_weights() for the form its
// kernel reads: the model's own bytes, read in place from the memory map, when mt-prepack stored them
// so; else packed into plan memory by the same function mt-prepack uses. kernels/cpu/README.md
// ("Packed weights") says what a new engine adds.
#pragma once

#include <optional>
#include <string>

#include "kernels/cpu/plan/kernel_paths.h"
#include "kernels/cpu/plan/plan_builder.h"
#include "lib/ir/graph.h"
#include "lib/ir/stored_layout.h"

namespace mt::cpu {

// The layout the kernel a plan with `paths` picks for `node` reads its input `input` in; nullopt
// when that kernel reads the input as stored (XNNPACK's operators, run-time weights, row-major data)
// or the node is one the cpu backend does not run. `node_checked`: the node's kernel check has passed
// already (check_node, then planning), so it is not run again (a quarter of planning a small model).
std::optional<CpuLayout> weight_layout(const Graph& graph, const Node& node, size_t input, const KernelPaths& paths,
                                       bool node_checked = false);

// Writes `node`'s input `input` in `layout` into `memory` (stored_byte_size of the tensor in that
// layout, 64-byte aligned, zeroed), from the tensor as the model stores it: row-major, ohwi, or a
// layout `layout` is made from (the Winograd points for their packed GEMM form).
void pack_weights(const Graph& graph, const Node& node, size_t input, CpuLayout layout, void* memory);

// `layout` from the tensor's stored layout without a kernel that reads the stored one: whether the
// packing function takes it (row-major and ohwi always; the Winograd points for their GEMM form).
bool packs_from(CpuLayout layout, const TensorInfo& stored);

// The kernel path that reads `layout` (nullptr: every plan has it), the plan option and environment
// switch that turn it off, and, for refusals, what it is and which instructions it needs.
struct LayoutNeeds {
  bool KernelPaths::*path = nullptr;
  bool PlanOptions::*option = nullptr;
  const char* variable = "";      // "MT_CPU_AVX512_GEMM"
  const char* kernel = "";        // "the packed GEMM"
  const char* instructions = "";  // "AVX-512F"
};
LayoutNeeds layout_needs(CpuLayout layout);

// Input `input` of the node being planned in `layout`, for its steps to read at run time.
const void* packed_weights(NodeContext& context, size_t input, CpuLayout layout);

// nullopt when a plan with `paths` reads every packed weight of `graph` as stored (or packs it from
// there); else one line saying which weights it cannot read and why (the CPU lacks the instructions,
// a cap or a switch turns the kernel off), for Error(unsupported) before planning. Also refuses a
// graph output that is a constant in any layout (the plan returns constants row-major). For a graph
// whose every node has passed the backend's check_node (require_supported).
std::optional<std::string> check_packed_weights(const Graph& graph, const KernelPaths& paths,
                                                const PlanOptions& options);

}  // namespace mt::cpu
