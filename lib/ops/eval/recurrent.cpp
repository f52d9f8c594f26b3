// Reference kernels of the recurrent family (rnn, gru, lstm), float32 tensors computed in double,
// one sequence and one step at a time, as ONNX's operator documents write the equations:
//   rnn:  H = tanh(X W^T + H R^T + Wb + Rb)
//   gru:  z = sigmoid(X Wz^T + H Rz^T + Wbz + Rbz), r likewise,
//         n = tanh(X Wh^T + (r . H) Rh^T + Rbh + Wbh)            (linear_before_reset 0)
//         n = tanh(X Wh^T + r . (H Rh^T + Rbh) + Wbh)            (linear_before_reset 1)
//         H = (1 - z) . n + z . H
//   lstm: i = sigmoid(X Wi^T + H Ri^T + Pi . C + Wbi + Rbi), f likewise with Pf,
//         c = tanh(X Wc^T + H Rc^T + Wbc + Rbc), C = f . C + i . c,
//         o = sigmoid(X Wo^T + H Ro^T + Po . C + Wbo + Rbo), H = o . tanh(C)
// A sequence of length L (sequence_lens) runs L steps (backwards: from step L - 1 down to 0); Y is
// zero at its steps past L, and its final states are those after step L (the initial ones if L = 0).
#include <algorithm>
#include <cmath>
#include <vector>

#include "lib/ops/eval/kernel_util.h"
#include "lib/ops/eval/reference.h"
#include "lib/ops/recurrent_params.h"

namespace mt::reference {
namespace {

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// Row `row` of matrix m ([rows, k] row-major) times vector v (k values).
double dot_row(const float* m, int64_t row, int64_t k, const double* v) {
  double sum = 0;
  for (int64_t j = 0; j < k; ++j) sum += static_cast<double>(m[row * k + j]) * v[j];
  return sum;
}

// The sequence lengths: sequence_lens when given (each checked to be in [0, T]), else T each.
std::vector<int64_t> sequence_lengths(const Node& node, std::span<const ConstView> inputs, const RecurrentParams& p) {
  std::vector<int64_t> lengths(static_cast<size_t>(p.batch), p.seq_len);
  if (inputs.size() <= kRecurrentSeqLens || inputs[kRecurrentSeqLens].info == nullptr) return lengths;
  require_dtype(node, *inputs[kRecurrentSeqLens].info, DType::i32);
  const int32_t* given = inputs[kRecurrentSeqLens].as<int32_t>();
  for (int64_t b = 0; b < p.batch; ++b) {
    if (given[b] < 0 || given[b] > p.seq_len)
      invalid_input("node '{}' ({}): sequence_lens[{}] is {}, outside [0, {}] (the sequence length of X)", node.name,
                    node.op, b, given[b], p.seq_len);
    lengths[static_cast<size_t>(b)] = given[b];
  }
  return lengths;
}

const float* optional_input(std::span<const ConstView> inputs, size_t index) {
  return index < inputs.size() && inputs[index].info != nullptr ? inputs[index].as<float>() : nullptr;
}

void recurrent(const Node& node, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].info != nullptr && i != kRecurrentSeqLens) require_dtype(node, *inputs[i].info, DType::f32);
  const RecurrentParams p = recurrent_params(node, inputs[kRecurrentX].info->shape);
  const std::vector<int64_t> lengths = sequence_lengths(node, inputs, p);
  const int64_t hs = p.hidden, gh = p.gates * p.hidden, in = p.input_size, batch = p.batch;
  const float* x = inputs[kRecurrentX].as<float>();
  const float* bias = optional_input(inputs, kRecurrentB);
  const float* initial_h = optional_input(inputs, kRecurrentInitialH);
  const float* initial_c = p.kind == RecurrentKind::lstm ? optional_input(inputs, kRecurrentInitialC) : nullptr;
  const float* peephole = p.kind == RecurrentKind::lstm ? optional_input(inputs, kRecurrentPeephole) : nullptr;
  float* y = outputs[0].as<float>();
  float* y_h = outputs[1].as<float>();
  float* y_c = p.kind == RecurrentKind::lstm ? outputs[2].as<float>() : nullptr;
  std::fill(y, y + p.seq_len * p.directions * batch * hs, 0.0f);

  std::vector<double> h(static_cast<size_t>(hs)), c(static_cast<size_t>(hs)), xv(static_cast<size_t>(in));
  std::vector<double> gates(static_cast<size_t>(gh)), rh(static_cast<size_t>(hs)), n(static_cast<size_t>(hs));
  for (int64_t d = 0; d < p.directions; ++d) {
    const float* w = inputs[kRecurrentW].as<float>() + d * gh * in;
    const float* r = inputs[kRecurrentR].as<float>() + d * gh * hs;
    const float* wb = bias != nullptr ? bias + d * 2 * gh : nullptr;
    const float* rb = bias != nullptr ? wb + gh : nullptr;
    const float* pd = peephole != nullptr ? peephole + d * 3 * hs : nullptr;
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t state = (d * batch + b) * hs;
      for (int64_t j = 0; j < hs; ++j) {
        h[j] = initial_h != nullptr ? initial_h[state + j] : 0.0;
        c[j] = initial_c != nullptr ? initial_c[state + j] : 0.0;
      }
      const int64_t length = lengths[static_cast<size_t>(b)];
      for (int64_t s = 0; s < length; ++s) {
        const int64_t t = p.backwards(d) ? length - 1 - s : s;
        for (int64_t k = 0; k < in; ++k) xv[k] = x[(t * batch + b) * in + k];
        // gates[g * H + j]: X W^T + Wb, plus H R^T + Rb except for gru's h gate.
        for (int64_t row = 0; row < gh; ++row) {
          gates[row] = dot_row(w, row, in, xv.data()) + (wb != nullptr ? wb[row] : 0.0);
          const bool gru_h = p.kind == RecurrentKind::gru && row >= 2 * hs;
          if (!gru_h) gates[row] += dot_row(r, row, hs, h.data()) + (rb != nullptr ? rb[row] : 0.0);
        }
        switch (p.kind) {
          case RecurrentKind::rnn:
            for (int64_t j = 0; j < hs; ++j) h[j] = std::tanh(gates[j]);
            break;
          case RecurrentKind::gru: {
            for (int64_t j = 0; j < 2 * hs; ++j) gates[j] = sigmoid(gates[j]);  // z, r
            const double* z = gates.data();
            const double* reset = gates.data() + hs;
            for (int64_t j = 0; j < hs; ++j) rh[j] = reset[j] * h[j];
            for (int64_t j = 0; j < hs; ++j) {
              const int64_t row = 2 * hs + j;
              const double rbh = rb != nullptr ? rb[row] : 0.0;
              const double recurrent_part = p.linear_before_reset ? reset[j] * (dot_row(r, row, hs, h.data()) + rbh)
                                                                  : dot_row(r, row, hs, rh.data()) + rbh;
              n[j] = std::tanh(gates[row] + recurrent_part);
            }
            for (int64_t j = 0; j < hs; ++j) h[j] = (1.0 - z[j]) * n[j] + z[j] * h[j];
            break;
          }
          case RecurrentKind::lstm:
            for (int64_t j = 0; j < hs; ++j) {
              const double pi = pd != nullptr ? pd[j] : 0.0, po = pd != nullptr ? pd[hs + j] : 0.0;
              const double pf = pd != nullptr ? pd[2 * hs + j] : 0.0;
              const double i_gate = sigmoid(gates[j] + pi * c[j]);
              const double f_gate = sigmoid(gates[2 * hs + j] + pf * c[j]);
              const double cell = std::tanh(gates[3 * hs + j]);
              c[j] = f_gate * c[j] + i_gate * cell;
              const double o_gate = sigmoid(gates[hs + j] + po * c[j]);
              h[j] = o_gate * std::tanh(c[j]);
            }
            break;
        }
        for (int64_t j = 0; j < hs; ++j) y[((t * p.directions + d) * batch + b) * hs + j] = static_cast<float>(h[j]);
      }
      for (int64_t j = 0; j < hs; ++j) {
        y_h[state + j] = static_cast<float>(h[j]);
        if (y_c != nullptr) y_c[state + j] = static_cast<float>(c[j]);
      }
    }
  }
}

}  // namespace

void register_recurrent_kernels(KernelTable& table) {
  table.add("rnn", recurrent);
  table.add("gru", recurrent);
  table.add("lstm", recurrent);
}

}  // namespace mt::reference
