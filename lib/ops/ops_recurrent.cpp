// Op schemas of the recurrent family: rnn, gru and lstm with ONNX's semantics (RNN, GRU, LSTM at
// layout 0, default activations): X [T, B, I], weights with the gates stacked along dim 1, optional
// biases, per-batch sequence lengths and initial states; outputs Y [T, D, B, H] (every step's hidden
// state, zero past a sequence's length) and the final states Y_h (and Y_c) [D, B, H].
#include "lib/ops/infer_helpers.h"
#include "lib/ops/recurrent_params.h"
#include "lib/ops/registry.h"

namespace mt {
namespace {

// Fails unless input `index`, when present, has exactly `shape`.
void require_input_shape(const InferContext& context, size_t index, const Shape& shape, std::string_view what) {
  if (!context.has_input(index)) return;
  const TensorInfo& info = context.input(index);
  if (info.shape != shape)
    context.fail("{} '{}' must have shape {}, got {}", what, context.node().inputs[index], shape_str(shape),
                 shape_str(info.shape));
}

std::vector<TensorType> infer_recurrent(const InferContext& context) {
  require_rank(context, kRecurrentX, 3, 3);
  const TensorInfo& x = context.input(kRecurrentX);
  if (x.dtype != DType::f32)
    context.fail("X '{}' must be float32, got {}", context.node().inputs[0], dtype_name(x.dtype));
  const RecurrentParams p = recurrent_params(context.node(), x.shape);  // its errors name the node
  const int64_t d = p.directions, h = p.hidden, g = p.gates;
  require_input_shape(context, kRecurrentW, {d, g * h, p.input_size}, "W");
  require_input_shape(context, kRecurrentR, {d, g * h, h}, "R");
  require_input_shape(context, kRecurrentB, {d, 2 * g * h}, "B");
  require_input_shape(context, kRecurrentSeqLens, {p.batch}, "sequence_lens");
  require_input_shape(context, kRecurrentInitialH, {d, p.batch, h}, "initial_h");
  if (p.kind == RecurrentKind::lstm) {
    require_input_shape(context, kRecurrentInitialC, {d, p.batch, h}, "initial_c");
    require_input_shape(context, kRecurrentPeephole, {d, 3 * h}, "P");
  }
  for (size_t i = 1; i < context.num_inputs(); ++i) {
    if (!context.has_input(i)) continue;
    if (i == kRecurrentSeqLens) {
      if (context.input(i).dtype != DType::i32)
        context.fail("sequence_lens '{}' must be int32, got {}", context.node().inputs[i],
                     dtype_name(context.input(i).dtype));
    } else {
      require_same_dtype(context, i, kRecurrentX);
    }
  }
  std::vector<TensorType> outputs{{x.dtype, {p.seq_len, d, p.batch, h}}, {x.dtype, {d, p.batch, h}}};
  if (p.kind == RecurrentKind::lstm) outputs.push_back({x.dtype, {d, p.batch, h}});
  return outputs;
}

std::vector<AttrSpec> recurrent_attrs(bool gru) {
  std::vector<AttrSpec> attrs{{"hidden_size", AttrType::integer, std::nullopt},
                              {"direction", AttrType::string, Attribute{std::string("forward")}}};
  if (gru) attrs.push_back({"linear_before_reset", AttrType::integer, Attribute{int64_t{0}}});
  return attrs;
}

}  // namespace

void register_recurrent_ops(OpRegistry& registry) {
  registry.add(OpSchema{"rnn",
                        "Elman RNN (ONNX RNN, tanh): H_t = tanh(X_t W^T + H_t-1 R^T + Wb + Rb); outputs Y, Y_h",
                        {"X", "W", "R", "B?", "sequence_lens?", "initial_h?"},
                        false,
                        2,
                        recurrent_attrs(false),
                        infer_recurrent});
  registry.add(OpSchema{"gru",
                        "GRU (ONNX GRU, gates z r h, sigmoid/tanh, linear_before_reset 0 or 1); outputs Y, Y_h",
                        {"X", "W", "R", "B?", "sequence_lens?", "initial_h?"},
                        false,
                        2,
                        recurrent_attrs(true),
                        infer_recurrent});
  registry.add(OpSchema{"lstm",
                        "LSTM (ONNX LSTM, gates i o f c, sigmoid/tanh/tanh, optional peepholes); outputs Y, Y_h, Y_c",
                        {"X", "W", "R", "B?", "sequence_lens?", "initial_h?", "initial_c?", "P?"},
                        false,
                        3,
                        recurrent_attrs(false),
                        infer_recurrent});
}

}  // namespace mt
