#include "lib/runtime/compare.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace mt {
namespace {

double half_to_double(uint16_t bits) {
  const int sign = bits >> 15;
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  double value;
  if (exponent == 0) value = std::ldexp(mantissa, -24);  // subnormal
  else if (exponent == 31) value = mantissa ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else value = std::ldexp(mantissa + 1024, exponent - 25);
  return sign ? -value : value;
}

template <typename T>
void widen(const void* data, size_t count, std::vector<double>& out) {
  for (size_t i = 0; i < count; ++i) {
    T value;
    std::memcpy(&value, static_cast<const std::byte*>(data) + i * sizeof(T), sizeof(T));
    out[i] = static_cast<double>(value);
  }
}

bool same_special(double a, double e) {
  return (std::isnan(a) && std::isnan(e)) || (std::isinf(a) && a == e);
}

}  // namespace

std::vector<double> to_doubles(DType dtype, const void* data, size_t count) {
  std::vector<double> out(count);
  switch (dtype) {
    case DType::f32: widen<float>(data, count, out); break;
    case DType::i8: widen<int8_t>(data, count, out); break;
    case DType::u8: widen<uint8_t>(data, count, out); break;
    case DType::i32: widen<int32_t>(data, count, out); break;
    case DType::i64: widen<int64_t>(data, count, out); break;
    case DType::boolean: widen<uint8_t>(data, count, out); break;
    case DType::f16:
      for (size_t i = 0; i < count; ++i) {
        uint16_t bits;
        std::memcpy(&bits, static_cast<const std::byte*>(data) + i * 2, 2);
        out[i] = half_to_double(bits);
      }
      break;
  }
  return out;
}

TensorSummary summarize(std::span<const double> values) {
  TensorSummary summary;
  summary.count = values.size();
  double sum = 0;
  size_t counted = 0;
  for (double v : values) {
    if (std::isnan(v)) {
      ++summary.nan_count;
      continue;
    }
    if (counted == 0) summary.min = summary.max = v;
    summary.min = std::min(summary.min, v);
    summary.max = std::max(summary.max, v);
    sum += v;
    ++counted;
  }
  summary.mean = counted ? sum / static_cast<double>(counted) : 0;
  return summary;
}

Comparison compare_values(std::span<const double> actual, std::span<const double> expected, double atol, double rtol) {
  Comparison result;
  result.count = std::min(actual.size(), expected.size());
  double dot = 0, norm_a = 0, norm_e = 0;
  bool have_range = false;
  for (size_t i = 0; i < result.count; ++i) {
    const double a = actual[i], e = expected[i];
    if (std::isfinite(e)) {
      if (!have_range) result.expected_min = result.expected_max = e;
      result.expected_min = std::min(result.expected_min, e);
      result.expected_max = std::max(result.expected_max, e);
      have_range = true;
    }
    double error;
    if (same_special(a, e)) error = 0;
    else if (!std::isfinite(a) || !std::isfinite(e)) error = std::numeric_limits<double>::infinity();
    else error = std::abs(a - e);
    if (error > result.max_abs_error) {
      result.max_abs_error = error;
      result.worst_index = i;
    }
    if (e != 0 && std::isfinite(e)) result.max_rel_error = std::max(result.max_rel_error, error / std::abs(e));
    if (error > atol + rtol * (std::isfinite(e) ? std::abs(e) : 0.0)) {
      if (result.mismatches == 0) result.first_mismatch = i;
      ++result.mismatches;
    }
    if (std::isfinite(a) && std::isfinite(e)) {
      dot += a * e;
      norm_a += a * a;
      norm_e += e * e;
    }
  }
  if (norm_a == 0 && norm_e == 0) result.cosine = 1;
  else if (norm_a == 0 || norm_e == 0) result.cosine = 0;
  else result.cosine = dot / (std::sqrt(norm_a) * std::sqrt(norm_e));
  return result;
}

std::string summary_str(const TensorSummary& summary) {
  std::string text = fmt::format("min {:.6g} max {:.6g} mean {:.6g}", summary.min, summary.max, summary.mean);
  if (summary.nan_count) text += fmt::format(" ({} NaN)", summary.nan_count);
  return text;
}

std::string index_str(size_t flat_index, const Shape& shape) {
  std::vector<int64_t> coords(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    const auto dim = static_cast<size_t>(std::max<int64_t>(shape[d], 1));
    coords[d] = static_cast<int64_t>(flat_index % dim);
    flat_index /= dim;
  }
  return fmt::format("[{}]", fmt::join(coords, ", "));
}

}  // namespace mt
