#include <map>

#include "lib/import/translators.h"

namespace mt::onnx_import {
namespace {

using EntryMap = std::map<std::string, TranslatorEntry, std::less<>>;

EntryMap* g_building = nullptr;

EntryMap build_table() {
  EntryMap entries;
  g_building = &entries;
  TranslatorTable table;
  add_elementwise_translators(table);
  add_conv_translators(table);
  add_network_translators(table);
  add_shape_translators(table);
  add_resize_translators(table);
  add_folding_translators(table);
  add_quant_translators(table);
  add_integer_translators(table);
  add_control_translators(table);
  add_recurrent_translators(table);
  add_index_translators(table);
  add_einsum_translators(table);
  add_signal_translators(table);
  add_sample_translators(table);
  add_loop_translators(table);
  add_data_dependent_translators(table);
  g_building = nullptr;
  return entries;
}

const EntryMap& table() {
  static const EntryMap entries = build_table();
  return entries;
}

}  // namespace

void TranslatorTable::add(std::string_view onnx_op, Translator translate, std::string mt_op) {
  if (!g_building->emplace(std::string(onnx_op), TranslatorEntry{translate, std::move(mt_op)}).second)
    throw Error(ExitCode::failure, fmt::format("internal: ONNX op {} has two translators", onnx_op));
}

const TranslatorEntry* find_translator(std::string_view onnx_op) {
  auto it = table().find(onnx_op);
  return it == table().end() ? nullptr : &it->second;
}

std::vector<std::string> importable_onnx_ops() {
  std::vector<std::string> ops;
  for (const auto& [op, entry] : table()) ops.push_back(op);
  return ops;
}

void require_only_first_output(ImportContext& ctx, const OnnxNode& node, std::string_view what) {
  for (size_t i = 1; i < node.num_outputs(); ++i)
    if (!node.output(i).empty() && ctx.is_used(node.output(i)))
      node.unsupported("output {} ('{}', {}) is used, and mt computes only the first output", i, node.output(i), what);
}

const TensorInfo& input_of_rank(ImportContext& ctx, const OnnxNode& node, size_t i, size_t rank,
                                std::string_view what) {
  const TensorInfo& info = ctx.input_info(node, i);
  if (info.shape.size() != rank)
    node.unsupported("{} '{}' has shape {}; mt supports only rank {} here", what, node.input(i), shape_str(info.shape),
                     rank);
  return info;
}

void translate_as(ImportContext& ctx, const OnnxNode& node, const std::string& op_type,
                  const std::vector<std::string>& inputs, const std::string& output) {
  onnx::NodeProto proto;
  proto.set_op_type(op_type);
  for (const auto& input : inputs) proto.add_input(input);
  proto.add_output(output);
  *proto.mutable_attribute() = node.proto().attribute();
  const TranslatorEntry* entry = find_translator(op_type);
  entry->translate(ctx, OnnxNode(proto, node.name(), node.opset()), entry->mt_op);
}

int64_t node_axis(const OnnxNode& node, int64_t axis, size_t rank) {
  auto normalized = normalize_axis(axis, rank);
  if (!normalized) node.invalid("axis {} is out of range for rank {}", axis, rank);
  return *normalized;
}

}  // namespace mt::onnx_import
