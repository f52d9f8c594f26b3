// The op table (op_table.inc) as data: for each op its family, what the quantizer does with it,
// its flop count, whether it carries a fused clamp, and which backends have a kernel for it. The
// registry, lib/quant, lib/passes and the profiler read these instead of keeping their own lists.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "lib/ir/graph.h"

namespace mt {

enum class OpFamily : uint8_t {
#define MT_OP_FAMILY(family) family,
#include "lib/ops/op_table.inc"
};

// What lib/quant does with an op (op_table.inc explains each).
enum class QuantRole : uint8_t { float_only, int8_compute, int8_data_movement };

// Backends with a kernel for an op: the bits of OpInfo::kernels.
namespace op_kernels {
enum : uint8_t {
  reference = 1 << 0,
  reference_int8 = 1 << 1,
  cpu = 1 << 2,
  cpu_int8 = 1 << 3,
  vulkan = 1 << 4,
  vulkan_int8 = 1 << 5
};
}

// Floating-point operations of one run of a node (lib/ops/flops.h).
using FlopsFn = double (*)(const Graph& graph, const Node& node);

struct OpInfo {
  std::string_view name;
  OpFamily family;
  QuantRole quant;
  FlopsFn flops;  // nullptr: the op has no count
  bool clamp;     // carries act_min/act_max
  uint8_t kernels;

  bool has_kernel(uint8_t backend) const { return (kernels & backend) != 0; }
};

// Every op, in op_table.inc's order.
std::span<const OpInfo> op_table();
// The op's line, or nullptr if mt does not know it.
const OpInfo* find_op_info(std::string_view op);
// "activation", "binary", ... (the X of lib/ops/ops_X.cpp).
std::string_view family_name(OpFamily family);

}  // namespace mt
