#include "lib/ops/eval/evaluate.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "lib/core/error.h"
#include "lib/ops/eval/reference.h"
#include "lib/ops/valid_rows.h"

namespace mt {

bool fold_size_allowed(int64_t input_elements, int64_t output_elements) {
  return output_elements <= std::max(kFoldMaxGrowth * input_elements, kFoldSmallElements);
}

bool can_evaluate(std::string_view op) { return reference::find_kernel(op) != nullptr && !writes_valid_row_count(op); }

std::optional<std::vector<ConstData>> evaluate_node(const Node& node, std::span<const TensorInfo* const> inputs,
                                                    std::span<const TensorInfo* const> outputs) {
  const reference::Kernel kernel = reference::find_kernel(node.op);
  if (kernel == nullptr || writes_valid_row_count(node.op)) return std::nullopt;
  std::vector<reference::ConstView> in_views;
  for (const TensorInfo* in : inputs) in_views.push_back({in, in != nullptr ? in->data.data() : nullptr});
  std::vector<ConstData> results;
  std::vector<reference::MutView> out_views;
  for (const TensorInfo* out : outputs) {
    results.push_back(ConstData::allocate(out->byte_size()));
    out_views.push_back({out, results.back().mutable_data()});
  }
  try {
    kernel(node, in_views, out_views);
  } catch (const Error& error) {
    if (error.code() != ExitCode::unsupported) throw;
    spdlog::debug("not folding node '{}' ({}): {}", node.name, node.op, error.what());
    return std::nullopt;
  }
  return results;
}

}  // namespace mt
