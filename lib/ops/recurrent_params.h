// The geometry of the recurrent ops (rnn, gru, lstm: ONNX's RNN, GRU and LSTM, layout 0) read from
// a node and its X shape, shared by their schema, the reference kernels and the cpu kernels so that
// all agree on the input order, the gate count and which way each direction runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "lib/ir/graph.h"

namespace mt {

enum class RecurrentKind { rnn, gru, lstm };

// The inputs, in ONNX's order (initial_c and P exist for lstm only).
inline constexpr size_t kRecurrentX = 0;
inline constexpr size_t kRecurrentW = 1;         // [D, gates * H, I]
inline constexpr size_t kRecurrentR = 2;         // [D, gates * H, H]
inline constexpr size_t kRecurrentB = 3;         // [D, 2 * gates * H]: W's biases, then R's
inline constexpr size_t kRecurrentSeqLens = 4;   // [B] int32
inline constexpr size_t kRecurrentInitialH = 5;  // [D, B, H]
inline constexpr size_t kRecurrentInitialC = 6;  // [D, B, H]
inline constexpr size_t kRecurrentPeephole = 7;  // [D, 3 * H]: i, o, f

struct RecurrentParams {
  RecurrentKind kind = RecurrentKind::rnn;
  int64_t seq_len = 0;               // T
  int64_t batch = 0;                 // B
  int64_t input_size = 0;            // I
  int64_t hidden = 0;                // H
  int64_t directions = 1;            // D: 2 when bidirectional
  int64_t gates = 1;                 // rnn 1, gru 3 (z, r, h), lstm 4 (i, o, f, c)
  bool reverse = false;              // direction "reverse": the one direction runs from the last step
  bool linear_before_reset = false;  // gru: r (.) (h R^T + Rb) instead of (r (.) h) R^T + Rb

  // Whether direction d walks the sequence backwards (reverse, or the second of bidirectional).
  bool backwards(int64_t d) const { return reverse || d == 1; }
};

// The kind of op `op` ("rnn", "gru" or "lstm"); throws Error(failure) for any other op.
RecurrentKind recurrent_kind(std::string_view op);

// The node's parameters for input X of shape `x` ([T, B, I]). Throws Error(invalid_input) naming
// the node for a direction other than forward, reverse or bidirectional, a hidden_size outside [1, 2^40], a
// linear_before_reset other than 0 or 1, or an X that is not of rank 3.
RecurrentParams recurrent_params(const Node& node, const Shape& x);

}  // namespace mt
