// Rules for ONNX's control flow: If. mt plans one static graph, so an If is inlined:
// - a condition constant after folding picks its branch at import (the other is not translated);
// - a condition computed at run time: both branches are translated, and each output is
//   where(condition, then-output, else-output). Both branches run and the condition selects the
//   result, which equals running the chosen branch alone since branches have no side effects; it
//   costs the other branch's time. The two outputs must have the same shape and element type.
// Loop and Scan are unrolled (translate_loop.cpp).
#include "lib/import/constant_values.h"
#include "lib/import/translators.h"

namespace mt::onnx_import {
namespace {

const onnx::GraphProto& branch_of(const OnnxNode& node, const char* name) {
  const onnx::AttributeProto* attribute = node.find(name);
  if (attribute == nullptr || !attribute->has_g()) node.invalid("attribute '{}' (a graph) is required", name);
  const onnx::GraphProto& branch = attribute->g();
  if (static_cast<size_t>(branch.output_size()) != node.num_outputs())
    node.invalid("{} has {} outputs, the node {}", name, branch.output_size(), node.num_outputs());
  return branch;
}

void if_(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  const onnx::GraphProto& then_branch = branch_of(node, "then_branch");
  const onnx::GraphProto& else_branch = branch_of(node, "else_branch");
  const TensorInfo& condition = ctx.input_info(node, 0);
  if (condition.dtype != DType::boolean)
    node.invalid("condition '{}' is {}, not bool", node.input(0), dtype_name(condition.dtype));
  if (numel(condition.shape) != 1)
    node.invalid("condition '{}' has shape {}; it must hold one value", node.input(0), shape_str(condition.shape));

  if (condition.is_constant()) {
    const bool then = read_ints(condition).at(0) != 0;
    const onnx::GraphProto& branch = then ? then_branch : else_branch;
    translate_subgraph(ctx, branch, node, then ? "then_branch" : "else_branch");
    for (size_t k = 0; k < node.num_outputs(); ++k)
      ctx.alias(node.output(k), ctx.tensor_name(branch.output(static_cast<int>(k)).name()));
    return;
  }

  translate_subgraph(ctx, then_branch, node, "then_branch");
  translate_subgraph(ctx, else_branch, node, "else_branch");
  // The condition as a scalar, so that it broadcasts to every output shape unchanged.
  std::string select = ctx.input(node, 0);
  if (!condition.shape.empty())
    select = ctx.emit1(node, "reshape", {select}, {{"shape", std::vector<int64_t>{}}},
                       ctx.fresh_name(node.input(0) + "/scalar"));
  for (size_t k = 0; k < node.num_outputs(); ++k) {
    const std::string then_out = ctx.tensor_name(then_branch.output(static_cast<int>(k)).name());
    const std::string else_out = ctx.tensor_name(else_branch.output(static_cast<int>(k)).name());
    const TensorInfo& a = ctx.graph().tensor(then_out);
    const TensorInfo& b = ctx.graph().tensor(else_out);
    if (a.shape != b.shape || a.dtype != b.dtype)
      node.unsupported("its condition is computed at run time and output {} differs between the branches ({} {} and "
                       "{} {}): mt plans one static graph, which needs both the same",
                       k, dtype_name(a.dtype), shape_str(a.shape), dtype_name(b.dtype), shape_str(b.shape));
    ctx.emit1(node, "where", {select, then_out, else_out}, {}, node.output(k));
  }
}

}  // namespace

void add_control_translators(TranslatorTable& table) { table.add("If", if_); }

}  // namespace mt::onnx_import
