// Tensor comparison and summaries: hand-computed errors, cosine, tolerance checks, special values.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "lib/runtime/compare.h"

namespace mt {

TEST_CASE("compare_values: errors, cosine and mismatches") {
  const std::vector<double> expected = {1, -2, 0, 4};
  const std::vector<double> actual = {1.1, -2, 0.05, 3.6};
  const Comparison c = compare_values(actual, expected, 0.06, 0.0);
  CHECK(c.count == 4);
  CHECK(c.max_abs_error == doctest::Approx(0.4));
  CHECK(c.worst_index == 3);
  CHECK(c.max_rel_error == doctest::Approx(0.1));  // 0.1 / 1 and 0.4 / 4; the 0 is skipped
  const double dot = 1.1 + 4 + 4 * 3.6;
  const double na = std::sqrt(1.21 + 4 + 0.0025 + 3.6 * 3.6), ne = std::sqrt(1 + 4 + 16);
  CHECK(c.cosine == doctest::Approx(dot / (na * ne)));
  CHECK(c.mismatches == 2);  // 0.1 and 0.4 exceed 0.06
  CHECK(c.first_mismatch == 0);
  CHECK(c.expected_min == -2);
  CHECK(c.expected_max == 4);
  CHECK(c.expected_range() == 6);
  // With rtol the first element passes (0.1 <= 0.11 + 0.05 * 1), the last does not (0.4 > 0.11 + 0.05 * 4);
  // with a larger rtol both pass (0.4 <= 0.06 + 0.1 * 4).
  const Comparison relative = compare_values(actual, expected, 0.11, 0.05);
  CHECK(relative.mismatches == 1);
  CHECK(relative.first_mismatch == 3);
  CHECK(compare_values(actual, expected, 0.06, 0.1).mismatches == 0);
  CHECK(compare_values(actual, expected, 0.4, 0.0).mismatches == 0);
}

TEST_CASE("compare_values: identical, zero and special values") {
  const std::vector<double> zeros = {0, 0};
  CHECK(compare_values(zeros, zeros, 0, 0).cosine == 1);
  CHECK(compare_values(zeros, std::vector<double>{1, 0}, 0, 0).cosine == 0);
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const std::vector<double> special = {nan, inf, 1};
  const Comparison same = compare_values(special, special, 0, 0);
  CHECK(same.max_abs_error == 0);
  CHECK(same.mismatches == 0);
  const Comparison different = compare_values(std::vector<double>{1, inf, 1}, special, 1e9, 0);
  CHECK(std::isinf(different.max_abs_error));
  CHECK(different.mismatches == 1);
  CHECK(different.first_mismatch == 0);
}

TEST_CASE("summarize and to_doubles") {
  const std::vector<double> values = {3, -1, std::numeric_limits<double>::quiet_NaN(), 2};
  const TensorSummary s = summarize(values);
  CHECK(s.count == 4);
  CHECK(s.min == -1);
  CHECK(s.max == 3);
  CHECK(s.mean == doctest::Approx(4.0 / 3));
  CHECK(s.nan_count == 1);
  CHECK(summary_str(s) == "min -1 max 3 mean 1.33333 (1 NaN)");

  const std::vector<uint16_t> halves = {0x3c00, 0xc000, 0x0001, 0x7c00, 0x3555};  // 1, -2, 2^-24, inf, ~1/3
  const auto h = to_doubles(DType::f16, halves.data(), halves.size());
  CHECK(h[0] == 1);
  CHECK(h[1] == -2);
  CHECK(h[2] == std::ldexp(1.0, -24));
  CHECK(std::isinf(h[3]));
  CHECK(h[4] == doctest::Approx(0.33325).epsilon(1e-4));
  const std::vector<int64_t> ints = {-5, 1LL << 40};
  CHECK(to_doubles(DType::i64, ints.data(), 2) == std::vector<double>{-5, static_cast<double>(1LL << 40)});
  const std::vector<uint8_t> bools = {0, 1};
  CHECK(to_doubles(DType::boolean, bools.data(), 2) == std::vector<double>{0, 1});
  const std::vector<int8_t> i8 = {-128, 127};
  CHECK(to_doubles(DType::i8, i8.data(), 2) == std::vector<double>{-128, 127});
}

TEST_CASE("index_str") {
  CHECK(index_str(0, {2, 3}) == "[0, 0]");
  CHECK(index_str(5, {2, 3}) == "[1, 2]");
  CHECK(index_str(7, {1, 2, 2, 2}) == "[0, 1, 1, 1]");
  CHECK(index_str(0, {}) == "[]");
}

}  // namespace mt
