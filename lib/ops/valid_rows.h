// Tensors whose number of valid rows is known only at run time. mt plans every shape once, so an
// op whose output size depends on the data is planned at its largest size: non_max_suppression
// writes its selected boxes to the first rows (axis 0) of an output of nms_capacity() rows, and
// the number written to its second output, a scalar int64 (lib/ops/non_max_suppression.h).
//
// Ops that keep rows apart, computing row i of their output from row i of such an input alone,
// give a tensor with the same count: element-wise ops (the activation, binary, logic and quant
// families) whose other operands broadcast along axis 0; gather along another axis, or along axis
// 0 by such indices; slice, concat and split that leave axis 0 whole; reshape, flatten, squeeze,
// unsqueeze and identity that keep its length; transpose that keeps it first. Their padding rows
// hold values computed from padding, which nothing reads. Any other op reading such a tensor would
// read rows that hold no data, and is refused.
//
// mt-run and the C API give the valid rows of an output; a graph output with a data-dependent
// row count has its count among the graph outputs too (the importer adds it).
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "lib/core/error.h"
#include "lib/ir/graph.h"

namespace mt {

// Whether `op` writes a run-time count of valid rows: its output 1 counts the rows of its output 0
// (non_max_suppression). Such a node is never folded into constants, which could not say which rows
// hold data.
bool writes_valid_row_count(std::string_view op);

// Every tensor of `graph` whose valid rows are counted at run time, with the name of the scalar
// int64 tensor holding the count. Throws Error(`code`) naming the first node that reads such a
// tensor and is not row-wise (or mixes two counts), and, with `require_output_counts`, a graph
// output whose count is not a graph output.
std::map<std::string, std::string> valid_row_counts(const Graph& graph, ExitCode code,
                                                    bool require_output_counts = true);

}  // namespace mt
