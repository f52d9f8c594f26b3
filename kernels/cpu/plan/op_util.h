// Helpers shared by the cpu op planners: dtype checks with precise reasons, attributes converted
// to the types kernels take, and element counts as size_t.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "kernels/cpu/plan/plan_builder.h"
#include "lib/ops/registry.h"

namespace mt::cpu {

// nullopt if every present input and output of `node` has one of `allowed` dtypes, else
// "dtype int8 not supported". `inputs` limits the check to the first n inputs (the data inputs).
std::optional<std::string> check_dtypes(const Graph& graph, const Node& node, std::initializer_list<DType> allowed,
                                        size_t inputs = SIZE_MAX);
inline std::optional<std::string> check_float(const Graph& graph, const Node& node) {
  return check_dtypes(graph, node, {DType::f32});
}
// nullopt if input `index` is a constant, else "<what> must be constant".
std::optional<std::string> check_constant(const Graph& graph, const Node& node, size_t index, const char* what);

// A float attribute as float (FLT_MAX defaults stay finite).
float attr_f32(const Node& node, std::string_view name);
std::vector<int> attr_int_list(const Node& node, std::string_view name);

// A possibly negative axis attribute made positive; throws Error(invalid_input) naming the node.
int axis_of(const Node& node, int64_t axis, size_t rank);

inline size_t count_of(const Value& value) { return static_cast<size_t>(value.count()); }

}  // namespace mt::cpu
