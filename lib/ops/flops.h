// Floating-point operation counts of the compute-heavy ops, so profiles can report GFLOP/s. One
// multiply-add counts as two operations. The op table (op_table.inc, flops column) says which op
// counts with which function.
#pragma once

#include <cstdint>
#include <optional>

#include "lib/ir/graph.h"

namespace mt {

// Operations one run of `node` performs, from the shapes recorded in `graph` (which must be
// valid). Bias additions and fused clamps are not counted: they are a rounding error next to
// the multiply-adds. nullopt for ops without a count (elementwise, shape, pooling, ...).
std::optional<double> node_flops(const Graph& graph, const Node& node);

// The counts the op table names, one per op kind.
double conv2d_flops(const Graph& graph, const Node& node);
double conv_transpose2d_flops(const Graph& graph, const Node& node);
double linear_flops(const Graph& graph, const Node& node);
double matmul_flops(const Graph& graph, const Node& node);
double recurrent_flops(const Graph& graph, const Node& node);

}  // namespace mt
