// Reference kernels of the reduce family's axis ops and newer reductions against hand-computed
// values: argmax/argmin (ties, select_last_index, NaN), hardmax, cumsum (exclusive, reverse),
// reduce_l1/l2/sum_square/log_sum/log_sum_exp (log_sum_exp without overflow); lrn.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "tests/unit/eval/kernel_test_util.h"

namespace mt::test {
namespace {

using Ints = std::vector<int64_t>;
using Floats = std::vector<float>;

TEST_CASE("argmax and argmin: axes, keepdims, ties, NaN") {
  const HostTensor x = f32({2, 2}, {2, 1, 3, 10});
  const HostTensor columns = run_op("argmax", {x});
  CHECK(columns.dtype == DType::i64);
  CHECK(columns.shape == Shape{1, 2});
  CHECK(columns.values<int64_t>() == Ints{1, 1});
  const HostTensor rows = run_op("argmin", {x}, {{"axis", int64_t{-1}}, {"keepdims", int64_t{0}}});
  CHECK(rows.shape == Shape{2});
  CHECK(rows.values<int64_t>() == Ints{1, 0});
  const HostTensor ties = f32({2, 3}, {5, 5, 1, 1, 1, 5});
  CHECK(run_op("argmax", {ties}, {{"axis", int64_t{1}}}).values<int64_t>() == Ints{0, 2});
  CHECK(run_op("argmax", {ties}, {{"axis", int64_t{1}}, {"select_last_index", int64_t{1}}}).values<int64_t>() ==
        Ints{1, 2});
  CHECK(run_op("argmin", {ties}, {{"axis", int64_t{1}}, {"select_last_index", int64_t{1}}}).values<int64_t>() ==
        Ints{2, 1});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(run_op("argmax", {f32({4}, {1, nan, 7, nan})}).values<int64_t>() == Ints{1});
  CHECK(run_op("argmin", {f32({3}, {1, -2, nan})}).values<int64_t>() == Ints{2});
}

TEST_CASE("hardmax: one-hot of the first maximum") {
  CHECK(run_op("hardmax", {f32({2, 4}, {3, 0, 1, 2, 2, 5, 5, 0})}).floats() == Floats{1, 0, 0, 0, 0, 1, 0, 0});
  CHECK(run_op("hardmax", {f32({2, 2}, {1, 4, 3, 2})}, {{"axis", int64_t{0}}}).floats() == Floats{0, 1, 1, 0});
}

TEST_CASE("cumsum: exclusive and reverse, float and integer") {
  const HostTensor x = f32({5}, {1, 2, 3, 4, 5});
  const Attributes axis0{{"axis", int64_t{0}}};
  CHECK(run_op("cumsum", {x}, axis0).floats() == Floats{1, 3, 6, 10, 15});
  CHECK(run_op("cumsum", {x}, {{"axis", int64_t{0}}, {"exclusive", int64_t{1}}}).floats() == Floats{0, 1, 3, 6, 10});
  CHECK(run_op("cumsum", {x}, {{"axis", int64_t{0}}, {"reverse", int64_t{1}}}).floats() == Floats{15, 14, 12, 9, 5});
  CHECK(run_op("cumsum", {x}, {{"axis", int64_t{0}}, {"reverse", int64_t{1}}, {"exclusive", int64_t{1}}}).floats() ==
        Floats{14, 12, 9, 5, 0});
  CHECK(run_op("cumsum", {i64({2, 3}, {1, 2, 3, 4, 5, 6})}, {{"axis", int64_t{-1}}}).values<int64_t>() ==
        Ints{1, 3, 6, 4, 9, 15});
  CHECK(run_op("cumsum", {i32({2, 3}, {1, 2, 3, 4, 5, 6})}, axis0).values<int32_t>() ==
        std::vector<int32_t>{1, 2, 3, 5, 7, 9});
}

TEST_CASE("reduce_l1, l2, sum_square, log_sum, log_sum_exp") {
  const HostTensor x = f32({2, 2}, {1, -2, 3, -4});
  check_close(run_op("reduce_l1", {x}).floats(), {10}, 1e-6);
  check_close(run_op("reduce_l2", {x}).floats(), {static_cast<float>(std::sqrt(30.0))}, 1e-6);
  check_close(run_op("reduce_sum_square", {x}, {{"axes", Ints{1}}}).floats(), {5, 25}, 1e-6);
  const HostTensor positive = f32({2, 2}, {1, 2, 3, 4});
  check_close(run_op("reduce_log_sum", {positive}, {{"axes", Ints{0}}}).floats(),
              {static_cast<float>(std::log(4.0)), static_cast<float>(std::log(6.0))}, 1e-6);
  check_close(run_op("reduce_log_sum_exp", {positive}, {{"axes", Ints{1}}}).floats(),
              {static_cast<float>(std::log(std::exp(1.0) + std::exp(2.0))),
               static_cast<float>(std::log(std::exp(3.0) + std::exp(4.0)))},
              1e-5);
  // exp(1000) overflows even double: the maximum comes out first.
  check_close(run_op("reduce_log_sum_exp", {f32({2}, {1000, 1000})}).floats(),
              {static_cast<float>(1000 + std::log(2.0))}, 1e-3);
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(run_op("reduce_log_sum_exp", {f32({2}, {-inf, -inf})}).floats() == Floats{-inf});
}

TEST_CASE("lrn: windows across the channels") {
  const HostTensor x = f32({1, 3, 1, 1}, {1, 2, 3});
  // alpha / size = 1, beta 1, bias 1: y = x / (1 + window sum of squares).
  check_close(run_op("lrn", {x}, {{"size", int64_t{3}}, {"alpha", 3.0}, {"beta", 1.0}, {"bias", 1.0}}).floats(),
              {1.0f / 6, 2.0f / 15, 3.0f / 14}, 1e-6);
  // An even size reaches one channel further forward than back: [c, c + 1].
  check_close(run_op("lrn", {x}, {{"size", int64_t{2}}, {"alpha", 2.0}, {"beta", 1.0}, {"bias", 1.0}}).floats(),
              {1.0f / 6, 2.0f / 14, 3.0f / 10}, 1e-6);
}

}  // namespace
}  // namespace mt::test
