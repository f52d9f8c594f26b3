// The table from ONNX op types to translation rules. Each rule reads one ONNX node and emits
// mt nodes (or constants) through the ImportContext; the table is the list of what mt imports.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "lib/import/import_context.h"

namespace mt::onnx_import {

// A rule, given the mt op it maps to when one rule serves several ops ("relu" for Relu).
using Translator = void (*)(ImportContext& ctx, const OnnxNode& node, const std::string& mt_op);

struct TranslatorEntry {
  Translator translate = nullptr;
  std::string mt_op;
};

class TranslatorTable {
 public:
  void add(std::string_view onnx_op, Translator translate, std::string mt_op = {});
};

// The rule for an op type of the default ONNX domain, or nullptr when mt cannot import it.
const TranslatorEntry* find_translator(std::string_view onnx_op);
// Every importable ONNX op type, sorted.
std::vector<std::string> importable_onnx_ops();

// Registration, one per translate_<family>.cpp.
void add_elementwise_translators(TranslatorTable& table);
void add_conv_translators(TranslatorTable& table);
void add_network_translators(TranslatorTable& table);
void add_shape_translators(TranslatorTable& table);
void add_resize_translators(TranslatorTable& table);
void add_folding_translators(TranslatorTable& table);
void add_quant_translators(TranslatorTable& table);
void add_integer_translators(TranslatorTable& table);
void add_control_translators(TranslatorTable& table);
void add_recurrent_translators(TranslatorTable& table);
void add_index_translators(TranslatorTable& table);
void add_einsum_translators(TranslatorTable& table);
void add_signal_translators(TranslatorTable& table);
void add_sample_translators(TranslatorTable& table);
void add_loop_translators(TranslatorTable& table);
void add_data_dependent_translators(TranslatorTable& table);

// Helpers shared by the rules.
// Fails (unsupported) when any output after the first is consumed: mt has no equivalent.
void require_only_first_output(ImportContext& ctx, const OnnxNode& node, std::string_view what);
// The node's input i, present and of rank `rank`.
const TensorInfo& input_of_rank(ImportContext& ctx, const OnnxNode& node, size_t i, size_t rank, std::string_view what);
// Runs the rule of ONNX op `op_type` on a node like `node` whose inputs are `inputs` (ONNX or mt
// names) and whose output is `output`, attributes copied: QLinearConv and ConvInteger reuse Conv's.
void translate_as(ImportContext& ctx, const OnnxNode& node, const std::string& op_type,
                  const std::vector<std::string>& inputs, const std::string& output);
// Translates the nodes of `subgraph`, a graph attribute (`branch`: "then_branch", ...) of node
// `owner`, into the graph being built, as if they stood in the main graph at `owner`'s place; its
// outputs are then the ONNX names its output list gives. Names its nodes "OWNER/BRANCH/NODE".
void translate_subgraph(ImportContext& ctx, const onnx::GraphProto& subgraph, const OnnxNode& owner,
                        const std::string& branch);
// Input `value_i` of `node`, an int8 or uint8 tensor, minus its zero point (input `zero_i`, absent
// for 0) as float32: exact integers. The zero point is one value or one per index of axis `axis`
// of the value (-1: one value only), constant or computed at run time; the value a constant, an
// int8 tensor mt quantized (uint8 held shifted) or a plain integer tensor (translate_integer.cpp).
std::string integer_operand(ImportContext& ctx, const OnnxNode& node, size_t value_i, size_t zero_i, int64_t axis,
                            const std::string& hint);
// `values`, one per index of axis `axis` of a tensor of rank `rank` ([n]), reshaped to [n, 1, ...]
// so that it broadcasts along that axis; as is when it holds one value or `axis` is -1.
std::string along_axis(ImportContext& ctx, const OnnxNode& node, const std::string& values, int64_t axis, size_t rank,
                       const std::string& hint);
// ReduceMean, ReduceSum, ...: the reduction `mt_op` over the node's axes (an attribute, or from
// opset 13 for ReduceSum and 18 for the others an input that must be known at conversion).
void translate_reduce(ImportContext& ctx, const OnnxNode& node, const std::string& mt_op);
// An axis normalised against `rank` (invalid_input naming the node when out of range).
int64_t node_axis(const OnnxNode& node, int64_t axis, size_t rank);

}  // namespace mt::onnx_import
