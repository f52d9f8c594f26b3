// The loops of the signal family (dft, reverse_sequence) over row-major tensors. The reference
// kernels and the cpu backend both run these, so they agree exactly; parameters that depend only
// on shapes and attributes (the DFT's twiddle factors included) are computed once into the
// *Params structs. reverse_sequence's lengths are checked on every run before anything is written:
// Error(invalid_input) naming the node.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "lib/ir/shape.h"
#include "lib/ops/index_loops.h"

namespace mt {

// dft (ONNX DFT): X [outer..., N, inner..., 1 or 2] (real, or complex as (re, im) pairs) along axis
// `axis`, zero-padded or truncated to `length` points; Y [outer..., L, inner..., 2] with L = length,
// or length / 2 + 1 when one-sided. y[k] = sum_n x[n] e^(-+2 pi i k n / length) (+ and / length when
// inverse), summed in double, every twiddle reduced to k n mod length first.
struct DftParams {
  int64_t outer = 1, samples = 0, inner = 1;  // samples: N, the input's extent along the axis
  int64_t length = 0, out_length = 0;
  bool complex_input = false, inverse = false;
  std::vector<double> cosines, sines;  // of 2 pi j / length, j in [0, length)
};
DftParams dft_params(const Shape& x, size_t axis, int64_t length, bool onesided, bool inverse);
// The signals [begin, end) of outer * inner.
void dft(const DftParams& params, const float* x, float* y, int64_t begin, int64_t end);

// reverse_sequence (ONNX ReverseSequence): X [time, batch, ...] (or [batch, time, ...]); the first
// lengths[b] steps of sequence b reversed, the rest copied.
struct ReverseSequenceParams {
  int64_t steps = 0, batch = 0, inner = 1;  // inner: elements per (step, sequence)
  bool batch_major = false;                 // batch_axis 0, time_axis 1
  size_t element = 4;                       // bytes
};
void reverse_sequence(const ReverseSequenceParams& params, const std::string& node, const void* x, IndexData lengths,
                      void* y);

}  // namespace mt
