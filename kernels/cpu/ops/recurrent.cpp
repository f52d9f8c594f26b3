// rnn, gru and lstm (lib/ops/ops_recurrent.cpp). The weights are repacked once, at planning when
// they are constants (else at the start of every run), into per-direction blocks that the portable
// gemm (engines/gemm.h) reads row-major: W^T [I, G*H], R^T [H, G*H], the input-side bias, the
// recurrent-side bias and the peepholes. A run then projects the whole input sequence in one GEMM
// (X [T*B, I] W^T + bias), and each step multiplies the batch's hidden states by R^T (one GEMM,
// split by columns across threads when large) before the gate arithmetic of each active sequence.
#include <algorithm>
#include <cstring>

#include "kernels/cpu/engines/gemm.h"
#include "kernels/cpu/engines/vec_math.h"
#include "kernels/cpu/ops/ops.h"
#include "kernels/cpu/plan/op_util.h"
#include "kernels/cpu/plan/parallel.h"
#include "lib/core/error.h"
#include "lib/ops/recurrent_params.h"

namespace mt::cpu {
namespace {

// Offsets (in floats) of one direction's block of packed weights.
struct PackedLayout {
  size_t wt = 0, rt = 0, input_bias = 0, recurrent_bias = 0, peephole = 0, floats = 0;

  explicit PackedLayout(const RecurrentParams& p) {
    const auto in = static_cast<size_t>(p.input_size), hs = static_cast<size_t>(p.hidden);
    const size_t gh = static_cast<size_t>(p.gates) * hs;
    rt = wt + in * gh;
    input_bias = rt + hs * gh;
    recurrent_bias = input_bias + gh;
    peephole = recurrent_bias + gh;
    floats = peephole + 3 * hs;
  }
};

// Packs direction d's weights into `out` (layout.floats floats). b and peephole may be null. The
// input-side bias is Wb + Rb, except for gru's h gate, whose Rbh is the recurrent-side bias: it is
// added to H Rh^T (linear_before_reset 1) or to (r . H) Rh^T (0), where the r gate reaches it.
void pack_direction(const RecurrentParams& p, int64_t d, const float* w, const float* r, const float* b,
                    const float* peephole, float* out) {
  const PackedLayout layout(p);
  const auto in = static_cast<size_t>(p.input_size), hs = static_cast<size_t>(p.hidden);
  const size_t gh = static_cast<size_t>(p.gates) * hs;
  const float* wd = w + static_cast<size_t>(d) * gh * in;
  const float* rd = r + static_cast<size_t>(d) * gh * hs;
  for (size_t row = 0; row < gh; ++row) {
    for (size_t k = 0; k < in; ++k) out[layout.wt + k * gh + row] = wd[row * in + k];
    for (size_t k = 0; k < hs; ++k) out[layout.rt + k * gh + row] = rd[row * hs + k];
  }
  float* input_bias = out + layout.input_bias;
  float* recurrent_bias = out + layout.recurrent_bias;
  std::fill(input_bias, input_bias + 2 * gh, 0.0f);
  if (b != nullptr) {
    const float* wb = b + static_cast<size_t>(d) * 2 * gh;
    const float* rb = wb + gh;
    for (size_t row = 0; row < gh; ++row) {
      const bool gru_h = p.kind == RecurrentKind::gru && row >= 2 * hs;
      input_bias[row] = gru_h ? wb[row] : wb[row] + rb[row];
      if (gru_h) recurrent_bias[row] = rb[row];
    }
  }
  float* packed_peephole = out + layout.peephole;
  if (peephole != nullptr) {
    std::copy_n(peephole + static_cast<size_t>(d) * 3 * hs, 3 * hs, packed_peephole);
  } else {
    std::fill(packed_peephole, packed_peephole + 3 * hs, 0.0f);
  }
}

// C[m, n] = A[m, k] B[k, n] + bias, split by blocks of columns across the pool when the product is
// large enough to pay for the dispatch; the split does not change any sum, so results do not depend
// on the thread count.
void gemm_by_columns(ThreadPool* pool, size_t m, size_t n, size_t k, const float* a, size_t lda, const float* b,
                     size_t ldb, float* c, size_t ldc, const float* bias) {
  constexpr size_t kBlock = 32;
  constexpr size_t kMinWork = size_t{1} << 15;  // multiply-adds worth a pthreadpool dispatch
  if (m * n * k < kMinWork) {
    gemm(m, n, k, a, lda, b, ldb, c, ldc, bias);
    return;
  }
  parallel_chunks(pool, (n + kBlock - 1) / kBlock, 1, [&](size_t begin, size_t end) {
    const size_t n0 = begin * kBlock, width = std::min(n, end * kBlock) - n0;
    gemm(m, width, k, a, lda, b + n0, ldb, c + n0, ldc, bias != nullptr ? bias + n0 : nullptr);
  });
}

// C[m, n] = A[m, k] B[k, n] + bias for many rows, split by blocks of rows across the pool.
void gemm_by_rows(ThreadPool* pool, size_t m, size_t n, size_t k, const float* a, const float* b, float* c,
                  const float* bias) {
  constexpr size_t kRowBlock = 16;
  parallel_chunks(pool, (m + kRowBlock - 1) / kRowBlock, 1, [&](size_t begin, size_t end) {
    const size_t r0 = begin * kRowBlock, rows = std::min(m, end * kRowBlock) - r0;
    gemm(rows, n, k, a + r0 * k, k, b, n, c + r0 * n, n, bias);
  });
}

// Where each pointer of the step is (-1: absent), and what the step knows from planning.
struct RecurrentRun {
  RecurrentParams p;
  std::string node_name, op;
  const float* prepacked = nullptr;  // the packed weights, when packed at planning
  int x = -1, w = -1, r = -1, b = -1, peephole = -1, lens = -1, h0 = -1, c0 = -1;
  int y = -1, y_h = -1, y_c = -1, scratch = -1;

  size_t gh() const { return static_cast<size_t>(p.gates * p.hidden); }
  size_t packed_floats() const { return static_cast<size_t>(p.directions) * PackedLayout(p).floats; }
  // Scratch: the packed weights (when packed per run), X W^T + bias for every step, H R^T, H, C, r . H.
  size_t scratch_floats() const {
    const auto tb = static_cast<size_t>(p.seq_len * p.batch), bh = static_cast<size_t>(p.batch * p.hidden);
    return (prepacked == nullptr ? packed_floats() : 0) + tb * gh() + static_cast<size_t>(p.batch) * gh() + 3 * bh;
  }

  void run(Pointers ptr, ThreadPool* pool) const;
  void run_direction(Pointers ptr, int64_t d, const float* packed, float* work, ThreadPool* pool) const;
};

void RecurrentRun::run(Pointers ptr, ThreadPool* pool) const {
  if (lens >= 0) {
    const auto* given = static_cast<const int32_t*>(ptr[lens]);
    for (int64_t bi = 0; bi < p.batch; ++bi)
      if (given[bi] < 0 || given[bi] > p.seq_len)
        invalid_input("node '{}' ({}): sequence_lens[{}] is {}, outside [0, {}] (the sequence length of X)", node_name,
                      op, bi, given[bi], p.seq_len);
    // Steps past a sequence's length are never written: they are zero.
    auto* y_data = static_cast<float*>(ptr[y]);
    std::fill(y_data, y_data + p.seq_len * p.directions * p.batch * p.hidden, 0.0f);
  }
  auto* work = static_cast<float*>(ptr[scratch]);
  const float* packed = prepacked;
  if (packed == nullptr) {
    const auto* bias = b >= 0 ? static_cast<const float*>(ptr[b]) : nullptr;
    const auto* peep = peephole >= 0 ? static_cast<const float*>(ptr[peephole]) : nullptr;
    for (int64_t d = 0; d < p.directions; ++d)
      pack_direction(p, d, static_cast<const float*>(ptr[w]), static_cast<const float*>(ptr[r]), bias, peep,
                     work + static_cast<size_t>(d) * PackedLayout(p).floats);
    packed = work;
    work += packed_floats();
  }
  for (int64_t d = 0; d < p.directions; ++d)
    run_direction(ptr, d, packed + static_cast<size_t>(d) * PackedLayout(p).floats, work, pool);
}

void RecurrentRun::run_direction(Pointers ptr, int64_t d, const float* packed, float* work, ThreadPool* pool) const {
  const PackedLayout layout(p);
  const auto batch = static_cast<size_t>(p.batch), hs = static_cast<size_t>(p.hidden);
  const auto steps = static_cast<size_t>(p.seq_len), in = static_cast<size_t>(p.input_size);
  const size_t g = gh(), directions = static_cast<size_t>(p.directions), dir = static_cast<size_t>(d);
  float* xw = work;                    // [T * B, G*H]
  float* hr = xw + steps * batch * g;  // [B, G*H]
  float* h = hr + batch * g;           // [B, H]
  float* c = h + batch * hs;           // [B, H]
  float* rh = c + batch * hs;          // [B, H]
  const float* wt = packed + layout.wt;
  const float* rt = packed + layout.rt;
  const float* recurrent_bias = packed + layout.recurrent_bias;
  const float* peep = packed + layout.peephole;
  const bool gru = p.kind == RecurrentKind::gru, lstm = p.kind == RecurrentKind::lstm;
  const bool reset_first = gru && !p.linear_before_reset;  // (r . H) Rh^T needs r before the h gate's GEMM

  gemm_by_rows(pool, steps * batch, g, in, static_cast<const float*>(ptr[x]), wt, xw, packed + layout.input_bias);
  const size_t state = dir * batch * hs;
  if (h0 >= 0) std::copy_n(static_cast<const float*>(ptr[h0]) + state, batch * hs, h);
  else std::fill(h, h + batch * hs, 0.0f);
  if (c0 >= 0) std::copy_n(static_cast<const float*>(ptr[c0]) + state, batch * hs, c);
  else std::fill(c, c + batch * hs, 0.0f);

  const auto* given = lens >= 0 ? static_cast<const int32_t*>(ptr[lens]) : nullptr;
  auto length = [&](size_t bi) { return given != nullptr ? static_cast<size_t>(given[bi]) : steps; };
  size_t longest = 0;
  for (size_t bi = 0; bi < batch; ++bi) longest = std::max(longest, length(bi));
  auto* y_data = static_cast<float*>(ptr[y]);

  for (size_t s = 0; s < longest; ++s) {
    // H R^T (+ gru's Rbh) for every sequence; finished ones' rows go unused.
    const size_t columns = reset_first ? 2 * hs : g;
    gemm_by_columns(pool, batch, columns, hs, h, hs, rt, g, hr, g, gru ? recurrent_bias : nullptr);
    if (reset_first) {
      for (size_t bi = 0; bi < batch; ++bi) {
        if (s >= length(bi)) continue;
        const size_t t = p.backwards(d) ? length(bi) - 1 - s : s;
        const float* xg = xw + (t * batch + bi) * g;
        float* hg = hr + bi * g;
        for (size_t j = 0; j < 2 * hs; ++j) hg[j] = vm::sigmoid(xg[j] + hg[j]);  // z, r
        for (size_t j = 0; j < hs; ++j) rh[bi * hs + j] = hg[hs + j] * h[bi * hs + j];
      }
      gemm_by_columns(pool, batch, hs, hs, rh, hs, rt + 2 * hs, g, hr + 2 * hs, g, recurrent_bias + 2 * hs);
    }
    for (size_t bi = 0; bi < batch; ++bi) {
      if (s >= length(bi)) continue;
      const size_t t = p.backwards(d) ? length(bi) - 1 - s : s;
      const float* xg = xw + (t * batch + bi) * g;
      const float* hg = hr + bi * g;
      float* hb = h + bi * hs;
      float* cb = c + bi * hs;
      switch (p.kind) {
        case RecurrentKind::rnn:
          for (size_t j = 0; j < hs; ++j) hb[j] = vm::tanh(xg[j] + hg[j]);
          break;
        case RecurrentKind::gru:
          for (size_t j = 0; j < hs; ++j) {
            // reset_first: hg holds sigmoid(z), sigmoid(r) and (r . H) Rh^T + Rbh; else the raw sums.
            const float z = reset_first ? hg[j] : vm::sigmoid(xg[j] + hg[j]);
            const float n = reset_first
                                ? vm::tanh(xg[2 * hs + j] + hg[2 * hs + j])
                                : vm::tanh(xg[2 * hs + j] + vm::sigmoid(xg[hs + j] + hg[hs + j]) * hg[2 * hs + j]);
            hb[j] = (1.0f - z) * n + z * hb[j];
          }
          break;
        case RecurrentKind::lstm:
          for (size_t j = 0; j < hs; ++j) {
            const float i_gate = vm::sigmoid(xg[j] + hg[j] + peep[j] * cb[j]);
            const float f_gate = vm::sigmoid(xg[2 * hs + j] + hg[2 * hs + j] + peep[2 * hs + j] * cb[j]);
            const float cell = vm::tanh(xg[3 * hs + j] + hg[3 * hs + j]);
            cb[j] = f_gate * cb[j] + i_gate * cell;
            const float o_gate = vm::sigmoid(xg[hs + j] + hg[hs + j] + peep[hs + j] * cb[j]);
            hb[j] = o_gate * vm::tanh(cb[j]);
          }
          break;
      }
      std::copy_n(hb, hs, y_data + ((t * directions + dir) * batch + bi) * hs);
    }
  }
  std::copy_n(h, batch * hs, static_cast<float*>(ptr[y_h]) + state);
  if (lstm) std::copy_n(c, batch * hs, static_cast<float*>(ptr[y_c]) + state);
}

}  // namespace

std::optional<std::string> check_recurrent(const Graph& graph, const Node& node) {
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (node.inputs[i].empty()) continue;
    const DType want = i == kRecurrentSeqLens ? DType::i32 : DType::f32;
    const DType dtype = graph.tensor(node.inputs[i]).dtype;
    if (dtype != want) return fmt::format("input {} dtype {} not supported", i, dtype_name(dtype));
  }
  return check_dtypes(graph, node, {DType::f32}, 0);
}

void plan_recurrent(NodeContext& c) {
  const Node& node = c.node();
  RecurrentRun run;
  run.p = recurrent_params(node, c.input_info(kRecurrentX).shape);
  run.node_name = node.name;
  run.op = node.op;
  const bool lstm = run.p.kind == RecurrentKind::lstm;
  const bool prepack = c.is_constant(kRecurrentW) && c.is_constant(kRecurrentR) &&
                       (!c.has_input(kRecurrentB) || c.is_constant(kRecurrentB)) &&
                       (!lstm || !c.has_input(kRecurrentPeephole) || c.is_constant(kRecurrentPeephole));
  std::vector<Value> values;
  auto add = [&](size_t input) {
    const Value value = c.input(input, identity_layout(c.input_info(input).shape.size()));
    values.push_back(value);
    return static_cast<int>(values.size() - 1);
  };
  run.x = add(kRecurrentX);
  if (prepack) {
    auto* packed = static_cast<float*>(c.keep(run.packed_floats() * sizeof(float)));
    const float* bias = c.has_input(kRecurrentB) ? c.constant(kRecurrentB).as<float>().data() : nullptr;
    const float* peep =
        lstm && c.has_input(kRecurrentPeephole) ? c.constant(kRecurrentPeephole).as<float>().data() : nullptr;
    for (int64_t d = 0; d < run.p.directions; ++d)
      pack_direction(run.p, d, c.constant(kRecurrentW).as<float>().data(), c.constant(kRecurrentR).as<float>().data(),
                     bias, peep, packed + static_cast<size_t>(d) * PackedLayout(run.p).floats);
    run.prepacked = packed;
  } else {
    run.w = add(kRecurrentW);
    run.r = add(kRecurrentR);
    if (c.has_input(kRecurrentB)) run.b = add(kRecurrentB);
    if (lstm && c.has_input(kRecurrentPeephole)) run.peephole = add(kRecurrentPeephole);
  }
  if (c.has_input(kRecurrentSeqLens)) run.lens = add(kRecurrentSeqLens);
  if (c.has_input(kRecurrentInitialH)) run.h0 = add(kRecurrentInitialH);
  if (lstm && c.has_input(kRecurrentInitialC)) run.c0 = add(kRecurrentInitialC);
  auto add_output = [&](size_t output) {
    values.push_back(c.output(output, identity_layout(c.output_info(output).shape.size())));
    return static_cast<int>(values.size() - 1);
  };
  run.y = add_output(0);
  run.y_h = add_output(1);
  if (lstm) run.y_c = add_output(2);
  values.push_back(c.scratch(run.scratch_floats() * sizeof(float)));
  run.scratch = static_cast<int>(values.size() - 1);
  c.add_kernel(values, [run](Pointers ptr, ThreadPool* pool) { run.run(ptr, pool); });
}

}  // namespace mt::cpu
