#include "lib/ops/signal_loops.h"

#include <cmath>
#include <cstring>
#include <numbers>

#include "lib/core/error.h"

namespace mt {

DftParams dft_params(const Shape& x, size_t axis, int64_t length, bool onesided, bool inverse) {
  DftParams p;
  for (size_t d = 0; d < axis; ++d) p.outer *= x[d];
  p.samples = x[axis];
  for (size_t d = axis + 1; d + 1 < x.size(); ++d) p.inner *= x[d];
  p.length = length;
  p.out_length = onesided ? length / 2 + 1 : length;
  p.complex_input = x.back() == 2;
  p.inverse = inverse;
  p.cosines.resize(static_cast<size_t>(length));
  p.sines.resize(static_cast<size_t>(length));
  for (int64_t j = 0; j < length; ++j) {
    const double angle = 2.0 * std::numbers::pi * static_cast<double>(j) / static_cast<double>(length);
    p.cosines[static_cast<size_t>(j)] = std::cos(angle);
    p.sines[static_cast<size_t>(j)] = std::sin(angle);
  }
  return p;
}

void dft(const DftParams& p, const float* x, float* y, int64_t begin, int64_t end) {
  const int64_t channels = p.complex_input ? 2 : 1;
  const int64_t used = std::min(p.samples, p.length);  // points beyond the input are zeros
  const double sign = p.inverse ? 1.0 : -1.0;
  const double scale = p.inverse ? 1.0 / static_cast<double>(p.length) : 1.0;
  for (int64_t s = begin; s < end; ++s) {
    const int64_t o = s / p.inner, i = s % p.inner;
    const float* in = x + (o * p.samples * p.inner + i) * channels;
    float* out = y + (o * p.out_length * p.inner + i) * 2;
    for (int64_t k = 0; k < p.out_length; ++k) {
      double re = 0.0, im = 0.0;
      for (int64_t n = 0; n < used; ++n) {
        const auto j = static_cast<size_t>((k * n) % p.length);
        const double c = p.cosines[j], w = sign * p.sines[j];
        const double a = in[n * p.inner * channels];
        const double b = p.complex_input ? in[n * p.inner * channels + 1] : 0.0;
        re += a * c - b * w;
        im += a * w + b * c;
      }
      out[k * p.inner * 2] = static_cast<float>(re * scale);
      out[k * p.inner * 2 + 1] = static_cast<float>(im * scale);
    }
  }
}

void reverse_sequence(const ReverseSequenceParams& p, const std::string& node, const void* x, IndexData lengths,
                      void* y) {
  for (int64_t b = 0; b < p.batch; ++b)
    if (lengths[b] < 0 || lengths[b] > p.steps)
      invalid_input("node '{}' (reverse_sequence): length {} of sequence {} is outside [0, {}]", node, lengths[b], b,
                    p.steps);
  const size_t row = static_cast<size_t>(p.inner) * p.element;
  auto offset = [&](int64_t t, int64_t b) {
    return static_cast<size_t>(p.batch_major ? b * p.steps + t : t * p.batch + b) * row;
  };
  const auto* in = static_cast<const std::byte*>(x);
  auto* out = static_cast<std::byte*>(y);
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t t = 0; t < p.steps; ++t) {
      const int64_t from = t < lengths[b] ? lengths[b] - 1 - t : t;
      std::memcpy(out + offset(t, b), in + offset(from, b), row);
    }
}

}  // namespace mt
