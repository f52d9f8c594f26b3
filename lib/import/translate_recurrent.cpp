// Rules for ONNX's recurrent ops: RNN, GRU and LSTM become mt's rnn, gru and lstm, which take the
// same inputs in the same order at layout 0. Layout 1 (batch first) is layout 0 between transposes.
// What mt does not run is refused by name: activations other than the defaults (with their alpha and
// beta), clip, and LSTM's input_forget.
#include <fmt/ranges.h>

#include <string>
#include <vector>

#include "lib/import/translators.h"

namespace mt::onnx_import {
namespace {

// ONNX's default activation functions of one direction, in the order the `activations` list gives them.
std::vector<std::string> default_activations(const std::string& mt_op) {
  if (mt_op == "lstm") return {"Sigmoid", "Tanh", "Tanh"};
  if (mt_op == "gru") return {"Sigmoid", "Tanh"};
  return {"Tanh"};
}

void refuse_unsupported_attributes(const OnnxNode& node, const std::string& mt_op, int64_t directions) {
  if (const onnx::AttributeProto* attr = node.find("activations")) {
    const std::vector<std::string> one = default_activations(mt_op);
    std::vector<std::string> defaults;
    for (int64_t d = 0; d < directions; ++d) defaults.insert(defaults.end(), one.begin(), one.end());
    const std::vector<std::string> given(attr->strings().begin(), attr->strings().end());
    if (given != defaults)
      node.unsupported("activations [{}] are not supported; mt runs only the default [{}]", fmt::join(given, ", "),
                       fmt::join(defaults, ", "));
  }
  for (const char* name : {"activation_alpha", "activation_beta"})
    if (!node.attr_floats(name).empty())
      node.unsupported("attribute '{}' is not supported (it parameterizes non-default activations)", name);
  if (node.has_attr("clip")) node.unsupported("attribute 'clip' (cell clipping) is not supported");
  if (mt_op == "lstm" && node.attr_int("input_forget", 0) != 0)
    node.unsupported("input_forget=1 (coupled input and forget gates) is not supported");
}

void recurrent(ImportContext& ctx, const OnnxNode& node, const std::string& mt_op) {
  const bool lstm = mt_op == "lstm";
  const std::string direction = node.attr_string("direction", "forward");
  const int64_t layout = node.attr_int("layout", 0);
  if (layout != 0 && layout != 1) node.invalid("layout must be 0 or 1, got {}", layout);
  refuse_unsupported_attributes(node, mt_op, direction == "bidirectional" ? 2 : 1);
  for (size_t i = 0; i < 3; ++i)
    if (!node.has_input(i)) node.invalid("input {} is required", i);
  const size_t max_inputs = lstm ? 8 : 6;
  for (size_t i = max_inputs; i < node.num_inputs(); ++i)
    if (node.has_input(i))
      node.invalid("has {} inputs; {} takes at most {}", node.num_inputs(), node.op_type(), max_inputs);
  const size_t max_outputs = lstm ? 3 : 2;
  if (node.num_outputs() > max_outputs)
    node.invalid("has {} outputs; {} has at most {}", node.num_outputs(), node.op_type(), max_outputs);

  // Layout 1 puts the batch first: X [B, T, I] and the states [B, D, H] are transposed to layout 0.
  const bool batch_first = layout == 1;
  const Attributes swap_first_two{{"perm", std::vector<int64_t>{1, 0, 2}}};
  std::vector<std::string> inputs;
  for (size_t i = 0; i < max_inputs && i < node.num_inputs(); ++i) {
    std::string input = ctx.input(node, i);
    const bool batch_major = i == 0 || i == 5 || i == 6;  // X, initial_h, initial_c
    if (batch_first && batch_major && !input.empty())
      input = ctx.emit1(node, "transpose", {input}, swap_first_two, ctx.fresh_name(input + "/layout0"));
    inputs.push_back(input);
  }
  while (!inputs.empty() && inputs.back().empty()) inputs.pop_back();

  // hidden_size is optional in ONNX: R [D, gates * H, H] says it too (the schema checks they agree).
  const Shape& r_shape = ctx.input_info(node, 2).shape;
  if (!node.has_attr("hidden_size") && r_shape.size() != 3)
    node.invalid("R '{}' must have rank 3, got shape {}", node.input(2), shape_str(r_shape));
  const int64_t hidden_size = node.has_attr("hidden_size") ? node.attr_int("hidden_size", 0) : r_shape[2];
  Attributes attrs{{"hidden_size", hidden_size}, {"direction", direction}};
  if (mt_op == "gru") attrs["linear_before_reset"] = node.attr_int("linear_before_reset", 0);

  // mt's op always has all its outputs: those the ONNX node leaves out get fresh names.
  std::vector<std::string> outputs;
  for (size_t i = 0; i < max_outputs; ++i) {
    const bool named = i < node.num_outputs() && !node.output(i).empty();
    const std::string hint = node.name() + (i == 0 ? "/Y" : i == 1 ? "/Y_h" : "/Y_c");
    outputs.push_back(named && !batch_first ? node.output(i) : ctx.fresh_name(hint));
  }
  ctx.emit(node, mt_op, inputs, attrs, outputs);
  if (!batch_first) return;
  // Back to layout 1: Y [T, D, B, H] -> [B, T, D, H], Y_h and Y_c [D, B, H] -> [B, D, H].
  for (size_t i = 0; i < max_outputs && i < node.num_outputs(); ++i) {
    if (node.output(i).empty()) continue;
    const std::vector<int64_t> perm = i == 0 ? std::vector<int64_t>{2, 0, 1, 3} : std::vector<int64_t>{1, 0, 2};
    ctx.emit1(node, "transpose", {outputs[i]}, {{"perm", perm}}, node.output(i));
  }
}

}  // namespace

void add_recurrent_translators(TranslatorTable& table) {
  table.add("RNN", recurrent, "rnn");
  table.add("GRU", recurrent, "gru");
  table.add("LSTM", recurrent, "lstm");
}

}  // namespace mt::onnx_import
