#include <map>
#include <string>
#include <vector>

#include "lib/core/error.h"
#include "lib/ops/eval/reference.h"

namespace mt::reference {
namespace {

using KernelMap = std::map<std::string, Kernel, std::less<>>;

KernelMap* g_building = nullptr;

// int8 variants and the float kernels they sit beside, filled while building the table.
KernelMap& int8_kernels() {
  static KernelMap kernels;
  return kernels;
}
KernelMap& float_kernels() {
  static KernelMap kernels;
  return kernels;
}

void dispatch_by_dtype(const Node& node, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  // Quantized int8 (lib/quant's scheme) runs the int8 variant; plain int8 integers the float
  // kernel's integer arithmetic.
  const bool int8 = !inputs.empty() && inputs[0].info != nullptr && inputs[0].info->dtype == DType::i8 &&
                    inputs[0].info->quant.has_value();
  const KernelMap& kernels = int8 ? int8_kernels() : float_kernels();
  kernels.find(node.op)->second(node, inputs, outputs);
}

KernelMap build_table() {
  KernelMap kernels;
  g_building = &kernels;
  KernelTable table;
  register_activation_kernels(table);
  register_binary_kernels(table);
  register_logic_kernels(table);
  register_reduce_kernels(table);
  register_norm_kernels(table);
  register_linear_kernels(table);
  register_conv_kernels(table);
  register_pool_kernels(table);
  register_resize_kernels(table);
  register_shape_kernels(table);
  register_recurrent_kernels(table);
  register_index_kernels(table);
  register_sample_kernels(table);
  register_signal_kernels(table);
  register_quantized_kernels(table);
  register_quantized_elementwise_kernels(table);
  register_quantized_pool_kernels(table);
  g_building = nullptr;
  return kernels;
}

}  // namespace

void KernelTable::add(std::string_view op, Kernel kernel) {
  if (!g_building->emplace(std::string(op), kernel).second)
    throw Error(ExitCode::failure, "internal: reference kernel registered twice: " + std::string(op));
}

void KernelTable::add_int8(std::string_view op, Kernel kernel) {
  auto it = g_building->find(op);
  if (it == g_building->end() || !int8_kernels().emplace(std::string(op), kernel).second)
    throw Error(ExitCode::failure, "internal: int8 reference kernel without a float kernel, or twice: " + std::string(op));
  float_kernels().emplace(std::string(op), it->second);
  it->second = dispatch_by_dtype;
}

namespace {

const KernelMap& kernel_map() {
  static const KernelMap kernels = build_table();
  return kernels;
}

}  // namespace

bool has_int8_kernel(std::string_view op) {
  kernel_map();  // builds the table
  return int8_kernels().count(op) > 0;
}

Kernel find_kernel(std::string_view op) {
  const KernelMap& kernels = kernel_map();
  auto it = kernels.find(op);
  return it == kernels.end() ? nullptr : it->second;
}

std::vector<std::string> kernel_ops(bool int8) {
  kernel_map();  // builds the table
  std::vector<std::string> ops;
  for (const auto& [op, kernel] : int8 ? int8_kernels() : kernel_map()) ops.push_back(op);
  return ops;
}

}  // namespace mt::reference
