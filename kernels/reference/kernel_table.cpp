#include <map>
#include <string>

#include "kernels/reference/reference.h"
#include "lib/core/error.h"

namespace mt::reference {
namespace {

using KernelMap = std::map<std::string, Kernel, std::less<>>;

KernelMap* g_building = nullptr;

KernelMap build_table() {
  KernelMap kernels;
  g_building = &kernels;
  KernelTable table;
  register_activation_kernels(table);
  register_binary_kernels(table);
  register_reduce_kernels(table);
  register_norm_kernels(table);
  register_linear_kernels(table);
  register_conv_kernels(table);
  register_pool_kernels(table);
  register_resize_kernels(table);
  register_shape_kernels(table);
  g_building = nullptr;
  return kernels;
}

}  // namespace

void KernelTable::add(std::string_view op, Kernel kernel) {
  if (!g_building->emplace(std::string(op), kernel).second)
    throw Error(ExitCode::failure, "internal: reference kernel registered twice: " + std::string(op));
}

Kernel find_kernel(std::string_view op) {
  static const KernelMap kernels = build_table();
  auto it = kernels.find(op);
  return it == kernels.end() ? nullptr : it->second;
}

}  // namespace mt::reference
