// The reference kernels: plain, obviously correct C++ for every op in the registry, on
// row-major (NCHW) tensors: mt's op semantics. The reference backend (kernels/reference) runs a
// graph with them, the oracle every backend is tested against; constant folding evaluates with
// them through evaluate.h. Nothing here depends on lib/runtime or a backend.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lib/ir/graph.h"

namespace mt::reference {

// A tensor as a kernel sees it: `info` gives dtype, shape and quantization; `data` its bytes,
// row-major. An absent optional input has info == nullptr.
struct ConstView {
  const TensorInfo* info = nullptr;
  const void* data = nullptr;
  template <typename T>
  const T* as() const { return static_cast<const T*>(data); }
};
struct MutView {
  const TensorInfo* info = nullptr;
  void* data = nullptr;
  template <typename T>
  T* as() const { return static_cast<T*>(data); }
};

// Computes one node. Output buffers are allocated by the caller with the inferred shapes.
// Kernels throw Error(unsupported) for a dtype or attribute value they do not implement.
using Kernel = void (*)(const Node& node, std::span<const ConstView> inputs, std::span<const MutView> outputs);

// The kernel of an op, or nullptr if there is none. For an op with an int8
// variant it dispatches on the dtype of the node's first input.
Kernel find_kernel(std::string_view op);
// True when the op has an int8 kernel (lib/ops/eval/quantized*.cpp).
bool has_int8_kernel(std::string_view op);
// The ops with a kernel (int8: with an int8 variant), sorted: what the op table's reference and
// reference_int8 columns must say (tests/unit/ops/test_op_table.cpp).
std::vector<std::string> kernel_ops(bool int8);

// Registration: each lib/ops/eval/<family>.cpp defines one of these; kernel_table.cpp
// calls them all.
class KernelTable {
 public:
  void add(std::string_view op, Kernel kernel);
  // The int8 variant of an op added before: inputs[0] of dtype int8 runs `kernel`.
  void add_int8(std::string_view op, Kernel kernel);
};
void register_activation_kernels(KernelTable& table);
void register_binary_kernels(KernelTable& table);
void register_logic_kernels(KernelTable& table);
void register_reduce_kernels(KernelTable& table);
void register_norm_kernels(KernelTable& table);
void register_linear_kernels(KernelTable& table);
void register_conv_kernels(KernelTable& table);
void register_pool_kernels(KernelTable& table);
void register_resize_kernels(KernelTable& table);
void register_shape_kernels(KernelTable& table);
void register_recurrent_kernels(KernelTable& table);
void register_index_kernels(KernelTable& table);
void register_sample_kernels(KernelTable& table);
void register_signal_kernels(KernelTable& table);
void register_quantized_kernels(KernelTable& table);
void register_quantized_elementwise_kernels(KernelTable& table);
void register_quantized_pool_kernels(KernelTable& table);

}  // namespace mt::reference
