// The state of one ONNX import: the mt graph being built, what each ONNX tensor became (a
// static type, and its value when constant), fresh names, and emission with constant folding.
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "lib/import/onnx_node.h"
#include "lib/import/onnx_tensor.h"
#include "lib/ir/graph.h"

namespace mt::onnx_import {

// The shape computations of translate_folding.cpp (Shape, ConstantOfShape, Range, and the
// comparisons and Where on constants) are evaluated at import; they never create a constant larger
// than this (in elements): a bound on what a small hostile model can make the importer allocate. Optional folding of ops
// that also run at run time is bounded by fold_size_allowed() (lib/ops/eval/evaluate.h) instead.
inline constexpr int64_t kMaxShapeOpElements = int64_t{1} << 24;

class ImportContext {
 public:
  ImportContext(Graph& graph, const onnx::GraphProto& onnx_graph, ExternalFiles& external);

  Graph& graph() { return graph_; }
  ExternalFiles& external_files() { return external_; }

  // Registers the names of a subgraph made during the import (an unrolled Loop or Scan body): its
  // initializers load on use, its tensors count as used and taken, as the model's own do.
  void add_subgraph_names(const onnx::GraphProto& subgraph) { add_names(subgraph); }

  // A unique node name for an ONNX node: `candidate`, or it suffixed "_1", "_2", ... if taken.
  std::string reserve_node_name(const std::string& candidate);

  // --- ONNX tensors ------------------------------------------------------------------------
  // The mt tensor an ONNX tensor became (following renames); loads an initializer on first use.
  // Throws Error(invalid_input) if it was never defined.
  const std::string& tensor_name(const std::string& onnx_name);
  // The mt name of the node's input i; "" when the input is absent.
  std::string input(const OnnxNode& node, size_t i);
  // The node's input i, which must be present.
  const TensorInfo& input_info(const OnnxNode& node, size_t i);
  // Whether an ONNX tensor is consumed by a node or is a graph output.
  bool is_used(const std::string& onnx_name) const { return used_.count(onnx_name) != 0; }
  // Whether an ONNX tensor is an output of the main graph.
  bool is_graph_output(const std::string& onnx_name) const { return graph_outputs_.count(onnx_name) != 0; }

  // --- constant operands ------------------------------------------------------------------
  // The values of the node's input i, which must be present and constant (else
  // Error(unsupported) naming the input and `what` it is: "shape", "axes", ...).
  std::vector<int64_t> const_ints(const OnnxNode& node, size_t i, std::string_view what);
  std::vector<double> const_floats(const OnnxNode& node, size_t i, std::string_view what);
  bool is_constant(const std::string& mt_name) const { return graph_.tensor(mt_name).is_constant(); }
  // Operands that must be known at conversion (a shape, axes, sizes): input `index`, `what` it is.
  struct Operand {
    size_t index;
    std::string_view what;
  };
  // Refuses the node (Error unsupported) when any of `operands` is present and computed at run time,
  // naming all such operands and the graph inputs they are computed from (which --input-value can
  // pin; they are recorded for value_inputs_needed()), or else the node computing each, which mt
  // does not evaluate at conversion. Rules whose node has several such operands call it first, so
  // that one refusal names them all.
  void require_known(const OnnxNode& node, std::initializer_list<Operand> operands);
  [[noreturn]] void refuse_runtime_operand(const OnnxNode& node, size_t i, std::string_view what);
  // The graph inputs that refused operands are computed from, in the order they were first met.
  const std::vector<std::string>& value_inputs_needed() const { return value_inputs_needed_; }

  // --- definitions ------------------------------------------------------------------------
  // The ONNX tensor `onnx_name` is the mt tensor `mt_name` (Identity, Dropout, no-op Cast).
  void alias(const std::string& onnx_name, const std::string& mt_name);
  // Adds a constant; its name must be fresh or the ONNX output it defines.
  const std::string& add_constant(TensorInfo info);
  // A name used by no ONNX tensor and no mt tensor so far, derived from `hint`.
  std::string fresh_name(const std::string& hint);
  // A float32 scalar constant (rank 0) with a fresh name.
  std::string scalar(const OnnxNode& node, double value, DType dtype = DType::f32);

  // Adds mt node `op` for ONNX `node`, or, when every input is constant, the reference kernels
  // implement the op and fold_size_allowed() (lib/ops/eval/evaluate.h) agrees, computes it now and
  // defines its outputs as constants. Outputs are typed by the op registry. The mt node is named
  // after the ONNX node (suffixed "/op" when it produces none of the node's ONNX outputs).
  void emit(const OnnxNode& node, const std::string& op, std::vector<std::string> inputs, Attributes attrs,
            std::vector<std::string> outputs);
  // emit() for a single output; returns its name.
  std::string emit1(const OnnxNode& node, const std::string& op, std::vector<std::string> inputs, Attributes attrs,
                    const std::string& output);

  // --- pre-quantized (QDQ) models -----------------------------------------------------------
  // A float32 constant that DequantizeLinear made from integer constant `integers` (int8 or
  // int32 bytes with their QuantParams): the QDQ fold (fold_qdq.h) takes the integers back.
  void note_dequantized_constant(const std::string& mt_name, TensorInfo integers);
  const TensorInfo* dequantized_origin(const std::string& mt_name) const;
  // int8 tensors that hold an ONNX uint8 tensor shifted by -128 (QuantizeLinear with a uint8
  // zero point): a Cast of one to uint8 is the identity.
  void mark_shifted_uint8(const std::string& mt_name) { shifted_uint8_.insert(mt_name); }
  bool is_shifted_uint8(const std::string& mt_name) const { return shifted_uint8_.count(mt_name) != 0; }

 private:
  void add_names(const onnx::GraphProto& onnx_graph);
  bool try_fold(const Node& mt_node, const std::vector<const TensorInfo*>& inputs);
  void transpose_dequantized_origin(const Node& transpose);
  std::string node_name(const OnnxNode& node, const std::string& op, const std::vector<std::string>& outputs);

  Graph& graph_;
  ExternalFiles& external_;
  std::unordered_map<std::string, const onnx::TensorProto*> initializers_;
  std::unordered_map<std::string, std::string> aliases_;  // ONNX name -> mt name
  std::unordered_set<std::string> reserved_;              // every ONNX tensor name
  std::unordered_set<std::string> used_;
  std::unordered_set<std::string> graph_outputs_;
  std::set<std::string> reserved_node_names_;  // the ONNX nodes' names
  std::set<std::string> emitted_node_names_;
  size_t fresh_counter_ = 0;
  std::map<std::string, TensorInfo> dequantized_origins_;  // mt float32 constant -> its integers
  std::set<std::string> shifted_uint8_;
  std::vector<std::string> value_inputs_needed_;
};

}  // namespace mt::onnx_import
