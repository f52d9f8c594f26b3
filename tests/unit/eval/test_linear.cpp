// Reference kernels of the linear family against hand-computed products.
#include <doctest/doctest.h>

#include <limits>

#include "tests/unit/eval/kernel_test_util.h"

using namespace mt;
using namespace mt::test;

TEST_CASE("reference linear: X W^T + B") {
  HostTensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  HostTensor w = f32({2, 3}, {1, 0, -1, 0.5f, 0.5f, 0.5f});
  HostTensor b = f32({2}, {10, -1});
  HostTensor y = run_op("linear", {x, w, b});
  CHECK(y.shape == Shape{2, 2});
  check_close(y.floats(), {8, 2, 8, 6.5f}, 1e-6);
  check_close(run_op("linear", {x, w}).floats(), {-2, 3, -2, 7.5f}, 1e-6);
  check_close(run_op("linear", {x, w, b}, {{"act_min", 0.0}, {"act_max", 7.0}}).floats(), {7, 2, 7, 6.5f}, 1e-6);
  check_close(run_op("linear", {x, w}, {{"act_min", 0.0}}).floats(), {0, 3, 0, 7.5f}, 1e-6);
}

TEST_CASE("reference linear: leading dims and 1-D X") {
  // X [2, 1, 2] is two rows of [..., K=2].
  HostTensor x = f32({2, 1, 2}, {1, 2, 3, 4});
  HostTensor w = f32({3, 2}, {1, 0, 0, 1, 1, 1});
  HostTensor y = run_op("linear", {x, w});
  CHECK(y.shape == Shape{2, 1, 3});
  check_close(y.floats(), {1, 2, 3, 3, 4, 7}, 0);
  HostTensor v = run_op("linear", {f32({2}, {1, 2}), w, f32({3}, {0.5f, 0.5f, 0.5f})});
  CHECK(v.shape == Shape{3});
  check_close(v.floats(), {1.5f, 2.5f, 3.5f}, 0);
}

TEST_CASE("reference linear: act bounds at FLT_MAX do not clamp overflow") {
  const float big = std::numeric_limits<float>::max();
  HostTensor y = run_op("linear", {f32({2}, {big, big}), f32({1, 2}, {1, 1})});
  CHECK(y.floats()[0] == std::numeric_limits<float>::infinity());
  HostTensor relu_fused = run_op("linear", {f32({2}, {big, big}), f32({1, 2}, {1, 1})}, {{"act_min", 0.0}});
  CHECK(relu_fused.floats()[0] == std::numeric_limits<float>::infinity());
}

TEST_CASE("reference matmul: 2-D and 1-D promotion") {
  HostTensor a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  HostTensor b = f32({3, 2}, {1, 0, 0, 1, 1, 1});
  HostTensor ab = run_op("matmul", {a, b});
  CHECK(ab.shape == Shape{2, 2});
  check_close(ab.floats(), {4, 5, 10, 11}, 0);
  HostTensor row = run_op("matmul", {f32({2}, {1, 2}), a});
  CHECK(row.shape == Shape{3});
  check_close(row.floats(), {9, 12, 15}, 0);
  HostTensor col = run_op("matmul", {a, f32({3}, {1, 1, 1})});
  CHECK(col.shape == Shape{2});
  check_close(col.floats(), {6, 15}, 0);
  HostTensor dot = run_op("matmul", {f32({3}, {1, 2, 3}), f32({3}, {4, 5, 6})});
  CHECK(dot.shape == Shape{});
  check_close(dot.floats(), {32}, 0);
}

TEST_CASE("reference matmul: batch dims broadcast") {
  // A [2, 2, 2] times one B [2, 2] for each batch.
  HostTensor a = f32({2, 2, 2}, {1, 2, 3, 4, 0, 1, 1, 0});
  HostTensor b = f32({2, 2}, {5, 6, 7, 8});
  HostTensor y = run_op("matmul", {a, b});
  CHECK(y.shape == Shape{2, 2, 2});
  check_close(y.floats(), {19, 22, 43, 50, 7, 8, 5, 6}, 0);
  // One A [2, 2] times B [2, 2, 1].
  HostTensor z = run_op("matmul", {f32({2, 2}, {1, 2, 3, 4}), f32({2, 2, 1}, {1, 0, 0, 1})});
  CHECK(z.shape == Shape{2, 2, 1});
  check_close(z.floats(), {1, 3, 2, 4}, 0);
  // Both broadcast: A [2, 1, 1, 2] and B [3, 2, 1] give batch [2, 3]; A_i B_j = a_i0 * j + a_i1.
  HostTensor p = f32({2, 1, 1, 2}, {1, 2, 3, 4});
  HostTensor q = f32({3, 2, 1}, {0, 1, 1, 1, 2, 1});
  HostTensor r = run_op("matmul", {p, q});
  CHECK(r.shape == Shape{2, 3, 1, 1});
  check_close(r.floats(), {2, 3, 4, 4, 7, 10}, 0);
}

TEST_CASE("reference matmul: accumulates in double") {
  // 1e8 + 1 - 1e8 in float would give 0; the double accumulator keeps the 1.
  HostTensor y = run_op("matmul", {f32({1, 3}, {1e8f, 1, -1e8f}), f32({3, 1}, {1, 1, 1})});
  check_close(y.floats(), {1}, 0);
}
