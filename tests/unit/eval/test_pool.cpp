// Reference pooling kernels against PyTorch goldens (ceil_mode, count_include_pad, dilation,
// asymmetric pads) and hand-computed global pooling.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "tests/unit/eval/golden_spatial.inc"
#include "tests/unit/eval/kernel_test_util.h"

namespace mt::test {
namespace {

using Ints = std::vector<int64_t>;

TEST_CASE("max_pool2d and avg_pool2d match PyTorch") {
  REQUIRE(golden::kPoolCases.size() >= 10);
  for (const golden::PoolCase& c : golden::kPoolCases) {
    INFO("case: ", c.name, " (", c.source, ")");
    Attributes attrs{
        {"kernel_shape", c.kernel_shape}, {"strides", c.strides}, {"pads", c.pads}, {"ceil_mode", c.ceil_mode}};
    if (std::string(c.op) == "max_pool2d")
      attrs["dilations"] = c.dilations;
    else
      attrs["count_include_pad"] = c.count_include_pad;
    const HostTensor y = run_op(c.op, {f32(c.x_shape, c.x)}, attrs);
    CHECK(y.shape == Shape(c.y_shape));
    check_close(y.floats(), c.y, 1e-5);
  }
}

TEST_CASE("pooling by hand: padding is -inf for max and excluded from the mean by default") {
  const HostTensor x = f32({1, 1, 2, 2}, {-1, -2, -3, -4});
  const Attributes attrs{{"kernel_shape", Ints{2, 2}}, {"pads", Ints{1, 1, 0, 0}}};
  CHECK(run_op("max_pool2d", {x}, attrs).floats() == std::vector<float>{-1, -1, -1, -1});
  CHECK(run_op("avg_pool2d", {x}, attrs).floats() == std::vector<float>{-1, -1.5f, -2, -2.5f});
  Attributes include = attrs;
  include["count_include_pad"] = int64_t{1};
  CHECK(run_op("avg_pool2d", {x}, include).floats() == std::vector<float>{-0.25f, -0.75f, -1, -2.5f});
}

TEST_CASE("max_pool2d propagates NaN") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const HostTensor y = run_op("max_pool2d", {f32({1, 1, 2, 2}, {1, nan, 3, 4})}, {{"kernel_shape", Ints{1, 2}}});
  REQUIRE(y.floats().size() == 2);
  CHECK(std::isnan(y.floats()[0]));
  CHECK(y.floats()[1] == 4);
}

TEST_CASE("global pooling reduces every spatial axis") {
  // Two planes of a 1x2x2x3 tensor.
  const HostTensor x = f32({1, 2, 2, 3}, {1, 2, 3, 4, 5, 6, -1, -7, 0.5f, 2, -3, 1});
  const HostTensor avg = run_op("global_avg_pool", {x});
  CHECK(avg.shape == Shape{1, 2, 1, 1});
  check_close(avg.floats(), {3.5f, -1.25f}, 1e-6);
  CHECK(run_op("global_max_pool", {x}).floats() == std::vector<float>{6, 2});
  // Rank 3 and rank 5.
  CHECK(run_op("global_avg_pool", {f32({2, 1, 2}, {1, 2, 3, 5})}).floats() == std::vector<float>{1.5f, 4});
  CHECK(run_op("global_max_pool", {f32({1, 1, 2, 1, 2}, {1, 9, 3, 5})}).floats() == std::vector<float>{9});
}

TEST_CASE("pool kernels support float32 only") {
  for (const char* op : {"max_pool2d", "global_avg_pool"}) {
    INFO("op: ", op);
    Attributes attrs;
    if (std::string(op) == "max_pool2d") attrs["kernel_shape"] = Ints{1, 1};
    try {
      run_op(op, {i32({1, 1, 1, 1}, {1})}, attrs);
      FAIL("expected an error");
    } catch (const Error& error) {
      CHECK(error.code() == ExitCode::unsupported);
    }
  }
}

}  // namespace
}  // namespace mt::test
