// Numeric comparison and summary of tensors: the errors mt-run --compare prints, the check
// mt-fuse's verifier and mt-quantize's report make, and the one-line summaries of outputs.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "lib/core/dtype.h"
#include "lib/ir/shape.h"

namespace mt {

// Converts `count` elements of any dtype to double (float16 decoded, bool as 0/1).
std::vector<double> to_doubles(DType dtype, const void* data, size_t count);

struct TensorSummary {
  size_t count = 0;
  double min = 0;   // NaNs are skipped; 0 when there is no finite element
  double max = 0;
  double mean = 0;
  size_t nan_count = 0;
};
TensorSummary summarize(std::span<const double> values);

// How far `actual` is from `expected` (same element count).
struct Comparison {
  size_t count = 0;
  double max_abs_error = 0;      // max |a - e|; infinite when a NaN or infinity does not match
  double max_rel_error = 0;      // max |a - e| / |e| over elements with e != 0
  double cosine = 1;             // a.e / (|a| |e|); 1 when both are all zero, 0 when only one is
  size_t worst_index = 0;        // where |a - e| is largest
  double expected_min = 0;       // range of the expected values (for range-relative tolerances)
  double expected_max = 0;
  // Elements with |a - e| > atol + rtol * |e| (NaN matches only NaN, infinities only themselves).
  size_t mismatches = 0;
  size_t first_mismatch = 0;     // valid when mismatches > 0
  double expected_range() const { return expected_max - expected_min; }
};
Comparison compare_values(std::span<const double> actual, std::span<const double> expected, double atol, double rtol);

// "min -1.25 max 3.5 mean 0.0625" with compact numbers; "(2 NaN)" appended when present.
std::string summary_str(const TensorSummary& summary);

// Index -> "[0, 3, 1, 2]" coordinates in `shape` (row-major), for error messages.
std::string index_str(size_t flat_index, const Shape& shape);

}  // namespace mt
