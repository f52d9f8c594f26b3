#include "kernels/cpu/plan/op_util.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>

#include "lib/core/error.h"

namespace mt::cpu {

std::optional<std::string> check_dtypes(const Graph& graph, const Node& node, std::initializer_list<DType> allowed,
                                        size_t inputs) {
  auto bad = [&](const std::string& name) -> std::optional<std::string> {
    if (name.empty() || !graph.has_tensor(name)) return std::nullopt;
    const DType dtype = graph.tensor(name).dtype;
    if (std::find(allowed.begin(), allowed.end(), dtype) != allowed.end()) return std::nullopt;
    return fmt::format("dtype {} not supported", dtype_name(dtype));
  };
  for (size_t i = 0; i < node.inputs.size() && i < inputs; ++i)
    if (auto reason = bad(node.inputs[i])) return reason;
  for (const auto& name : node.outputs)
    if (auto reason = bad(name)) return reason;
  return std::nullopt;
}

std::optional<std::string> check_constant(const Graph& graph, const Node& node, size_t index, const char* what) {
  if (index >= node.inputs.size() || node.inputs[index].empty()) return std::nullopt;
  if (graph.tensor(node.inputs[index]).is_constant()) return std::nullopt;
  return fmt::format("{} must be constant", what);
}

float attr_f32(const Node& node, std::string_view name) {
  const double value = attr_float(node, name);
  return static_cast<float>(std::clamp(value, -3.4028234663852886e38, 3.4028234663852886e38));
}

int axis_of(const Node& node, int64_t axis, size_t rank) {
  if (auto normalized = normalize_axis(axis, rank)) return *normalized;
  invalid_input("node '{}' ({}): axis {} out of range for rank {}", node.name, node.op, axis, rank);
}

std::vector<int> attr_int_list(const Node& node, std::string_view name) {
  const auto& values = attr_ints(node, name);
  return std::vector<int>(values.begin(), values.end());
}

}  // namespace mt::cpu

namespace mt::cpu {

bool cpu_has_avx2_fma() {
#if defined(__x86_64__)
  static const bool supported = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return supported;
#else
  return false;
#endif
}

}  // namespace mt::cpu
