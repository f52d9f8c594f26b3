// Reference kernels of the reduce family against hand-computed values.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "tests/unit/eval/kernel_test_util.h"

using namespace mt;
using namespace mt::test;

namespace {

Attributes axes(std::vector<int64_t> list, int64_t keepdims = 1) {
  return {{"axes", std::move(list)}, {"keepdims", keepdims}};
}

// [[1, 2, 3], [4, 5, 6]]
HostTensor matrix() { return f32({2, 3}, {1, 2, 3, 4, 5, 6}); }

}  // namespace

TEST_CASE("reference reduce: 2-D over each axis and over all") {
  HostTensor sum_rows = run_op("reduce_sum", {matrix()}, axes({1}));
  CHECK(sum_rows.shape == Shape{2, 1});
  check_close(sum_rows.floats(), {6, 15}, 0);
  HostTensor mean_cols = run_op("reduce_mean", {matrix()}, axes({0}, 0));
  CHECK(mean_cols.shape == Shape{3});
  check_close(mean_cols.floats(), {2.5f, 3.5f, 4.5f}, 1e-7);
  HostTensor max_all = run_op("reduce_max", {matrix()});
  CHECK(max_all.shape == Shape{1, 1});
  check_close(max_all.floats(), {6}, 0);
  HostTensor min_last = run_op("reduce_min", {matrix()}, axes({-1}, 0));
  CHECK(min_last.shape == Shape{2});
  check_close(min_last.floats(), {1, 4}, 0);
  check_close(run_op("reduce_mean", {matrix()}, axes({}, 0)).floats(), {3.5f}, 1e-7);
}

TEST_CASE("reference reduce: non-adjacent axes of a 3-D tensor") {
  // x[i][j][k] = 100 i + 10 j + k, shape [2, 3, 2].
  std::vector<float> values;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k) values.push_back(static_cast<float>(100 * i + 10 * j + k));
  HostTensor x = f32({2, 3, 2}, values);
  // Sum over i and k for each j: (0+1+100+101) + 40 j.
  HostTensor sum = run_op("reduce_sum", {x}, axes({0, 2}));
  CHECK(sum.shape == Shape{1, 3, 1});
  check_close(sum.floats(), {202, 242, 282}, 0);
  HostTensor mean = run_op("reduce_mean", {x}, axes({1}, 0));
  CHECK(mean.shape == Shape{2, 2});
  check_close(mean.floats(), {10, 11, 110, 111}, 1e-6);
  check_close(run_op("reduce_max", {x}, axes({0, 1}, 0)).floats(), {120, 121}, 0);
  check_close(run_op("reduce_min", {x}, axes({2, 1}, 0)).floats(), {0, 100}, 0);
}

TEST_CASE("reference reduce: long sums accumulate in double") {
  // 2^24 + 1 is not a float: adding 1.0f to 16777216.0f one element at a time in float would
  // lose every 1; the double accumulator keeps them.
  std::vector<float> values(1001, 1.0f);
  values[0] = 16777216.0f;
  HostTensor sum = run_op("reduce_sum", {f32({1001}, values)}, axes({0}, 0));
  check_close(sum.floats(), {16778216.0f}, 0);
}

TEST_CASE("reference reduce: NaN propagates through max and min; empty axes") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(std::isnan(run_op("reduce_max", {f32({3}, {1, nan, 2})}).floats()[0]));
  CHECK(std::isnan(run_op("reduce_min", {f32({3}, {nan, 1, 2})}).floats()[0]));
  // Reducing an empty axis: sum 0, mean NaN, max -inf, min +inf.
  HostTensor empty = f32({2, 0}, {});
  check_close(run_op("reduce_sum", {empty}, axes({1}, 0)).floats(), {0, 0}, 0);
  CHECK(std::isnan(run_op("reduce_mean", {empty}, axes({1}, 0)).floats()[0]));
  check_close(run_op("reduce_max", {empty}, axes({1}, 0)).floats(),
              {-std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()}, 0);
  // An empty kept axis: an empty result.
  CHECK(run_op("reduce_sum", {empty}, axes({0})).shape == Shape{1, 0});
}

TEST_CASE("reference softmax: [1, 2, 3] and log_softmax") {
  check_close(run_op("softmax", {f32({3}, {1, 2, 3})}).floats(), {0.0900305732f, 0.2447284711f, 0.6652409558f}, 1e-7);
  check_close(run_op("log_softmax", {f32({3}, {1, 2, 3})}).floats(), {-2.4076059644f, -1.4076059644f, -0.4076059644f},
              1e-6);
  // Large inputs do not overflow (softmax is shift invariant).
  check_close(run_op("softmax", {f32({3}, {1001, 1002, 1003})}).floats(), {0.0900305732f, 0.2447284711f, 0.6652409558f},
              1e-7);
  check_close(run_op("softmax", {f32({2}, {-1e30f, 0})}).floats(), {0, 1}, 0);
}

TEST_CASE("reference softmax: along a middle axis and along axis 0") {
  // Shape [2, 2, 2]; softmax along axis 1 pairs x[i][0][k] with x[i][1][k].
  HostTensor x = f32({2, 2, 2}, {0, 0, std::log(3.0f), 1, 5, 5, 5, 5});
  HostTensor y = run_op("softmax", {x}, {{"axis", int64_t{1}}});
  const float e = 1.0f / (1.0f + std::exp(1.0f));  // softmax([0, 1])[0]
  check_close(y.floats(), {0.25f, e, 0.75f, 1 - e, 0.5f, 0.5f, 0.5f, 0.5f}, 1e-6);
  HostTensor z = run_op("softmax", {f32({2, 2}, {0, 1, 0, 1})}, {{"axis", int64_t{0}}});
  check_close(z.floats(), {0.5f, 0.5f, 0.5f, 0.5f}, 1e-7);
  HostTensor log_z = run_op("log_softmax", {f32({2, 2}, {0, 1, 2, 1})}, {{"axis", int64_t{-2}}});
  const float l = -std::log1p(std::exp(2.0f));  // log_softmax([0, 2])[0]
  check_close(log_z.floats(), {l, -std::log(2.0f), 2.0f + l, -std::log(2.0f)}, 1e-6);
}
