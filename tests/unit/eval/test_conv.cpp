// Reference conv2d and conv_transpose2d against PyTorch goldens (groups, depthwise, dilation,
// asymmetric pads, output_padding, fused clamp) and a few hand-computed cases.
#include <doctest/doctest.h>

#include <limits>

#include "tests/unit/eval/golden_spatial.inc"
#include "tests/unit/eval/kernel_test_util.h"

namespace mt::test {
namespace {

using Ints = std::vector<int64_t>;

TEST_CASE("conv2d and conv_transpose2d match PyTorch") {
  REQUIRE(golden::kConvCases.size() >= 10);
  for (const golden::ConvCase& c : golden::kConvCases) {
    INFO("case: ", c.name);
    Attributes attrs{{"strides", c.strides}, {"pads", c.pads},       {"dilations", c.dilations},
                     {"group", c.group},     {"act_min", c.act_min}, {"act_max", c.act_max}};
    if (c.transposed) attrs["output_padding"] = c.output_padding;
    std::vector<std::optional<HostTensor>> inputs{f32(c.x_shape, c.x), f32(c.w_shape, c.w)};
    if (!c.bias.empty()) inputs.push_back(f32({static_cast<int64_t>(c.bias.size())}, c.bias));
    const HostTensor y = run_op(c.transposed ? "conv_transpose2d" : "conv2d", inputs, attrs);
    CHECK(y.shape == Shape(c.y_shape));
    check_close(y.floats(), c.y, 1e-5);
  }
}

TEST_CASE("conv2d by hand: padding contributes nothing, bias and clamp apply everywhere") {
  // 2x2 all-ones kernel over a 2x2 input [1 2; 3 4] with pads 1: each output sums the taps
  // that land on the input.
  const HostTensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  const HostTensor w = f32({1, 1, 2, 2}, {1, 1, 1, 1});
  CHECK(run_op("conv2d", {x, w}, {{"pads", Ints{1, 1, 1, 1}}}).floats() ==
        std::vector<float>{1, 3, 2, 4, 10, 6, 3, 7, 4});
  // With bias 0.5 and a clamp to [2, 6].
  CHECK(run_op("conv2d", {x, w, f32({1}, {0.5f})}, {{"pads", Ints{1, 1, 1, 1}}, {"act_min", 2.0}, {"act_max", 6.0}})
            .floats() == std::vector<float>{2, 3.5f, 2.5f, 4.5f, 6, 6, 3.5f, 6, 4.5f});
}

TEST_CASE("conv2d with the default act_min/act_max lets overflow reach infinity") {
  const float inf = std::numeric_limits<float>::infinity();
  const HostTensor x = f32({1, 1, 1, 2}, {3e38f, -3e38f});
  const HostTensor w = f32({1, 1, 1, 1}, {10});
  CHECK(run_op("conv2d", {x, w}).floats() == std::vector<float>{inf, -inf});
  CHECK(run_op("conv_transpose2d", {x, w}).floats() == std::vector<float>{inf, -inf});
}

TEST_CASE("conv_transpose2d by hand: stride 2 scatters the kernel") {
  // Each input element stamps x * kernel at (2i, 2j); stamps overlap in the middle row/column.
  const HostTensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  const HostTensor w = f32({1, 1, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1});
  const HostTensor y = run_op("conv_transpose2d", {x, w}, {{"strides", Ints{2, 2}}});
  REQUIRE(y.shape == Shape{1, 1, 5, 5});
  CHECK(y.floats() == std::vector<float>{1, 1, 3,  2, 2,  //
                                         1, 1, 3,  2, 2,  //
                                         4, 4, 10, 6, 6,  //
                                         3, 3, 7,  4, 4,  //
                                         3, 3, 7,  4, 4});
}

TEST_CASE("conv kernels support float32 only") {
  const HostTensor x = i64({1, 1, 2, 2}, {1, 2, 3, 4});
  const HostTensor w = i64({1, 1, 1, 1}, {1});
  for (const char* op : {"conv2d", "conv_transpose2d"}) {
    INFO("op: ", op);
    try {
      run_op(op, {x, w});
      FAIL("expected an error");
    } catch (const Error& error) {
      CHECK(error.code() == ExitCode::unsupported);
    }
  }
}

}  // namespace
}  // namespace mt::test
