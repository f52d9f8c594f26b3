// Reference resize against PyTorch (and, for the ONNX modes PyTorch lacks, numpy from the ONNX
// formulas), the shared coordinate helpers, and pad by hand.
#include <doctest/doctest.h>

#include <numeric>

#include "lib/ops/resize_coords.h"
#include "tests/unit/eval/golden_spatial.inc"
#include "tests/unit/eval/kernel_test_util.h"

namespace mt::test {
namespace {

using Ints = std::vector<int64_t>;

TEST_CASE("resize matches PyTorch and the ONNX formulas in every mode") {
  REQUIRE(golden::kResizeCases.size() >= 80);
  for (const golden::ResizeCase& c : golden::kResizeCases) {
    INFO("case: ", c.name, " (", c.source, ")");
    const Attributes attrs{{"sizes", c.sizes},
                           {"scales", c.scales},
                           {"mode", std::string(c.mode)},
                           {"coordinate_transformation_mode", std::string(c.coordinate_transformation_mode)},
                           {"nearest_mode", std::string(c.nearest_mode)},
                           {"cubic_coeff_a", c.cubic_coeff_a},
                           {"exclude_outside", c.exclude_outside}};
    const HostTensor y = run_op("resize", {f32(c.x_shape, c.x)}, attrs);
    CHECK(y.shape == Shape(c.sizes));
    check_close(y.floats(), c.y, 1e-5);
  }
}

TEST_CASE("resize coordinate helpers") {
  // Ties: 1.5 goes to 1 (prefer floor) or 2 (prefer ceil); results clamp to the axis.
  CHECK(nearest_index(NearestMode::round_prefer_floor, 1.5, 4) == 1);
  CHECK(nearest_index(NearestMode::round_prefer_ceil, 1.5, 4) == 2);
  CHECK(nearest_index(NearestMode::round_prefer_floor, 1.6, 4) == 2);
  CHECK(nearest_index(NearestMode::round_prefer_ceil, 1.4, 4) == 1);
  CHECK(nearest_index(NearestMode::floor, 1.9, 4) == 1);
  CHECK(nearest_index(NearestMode::ceil, 1.1, 4) == 2);
  CHECK(nearest_index(NearestMode::ceil, 3.5, 4) == 3);
  CHECK(nearest_index(NearestMode::round_prefer_floor, -0.5, 4) == 0);
  CHECK(nearest_index(NearestMode::floor, 1e30, 4) == 3);
  // 4 -> 8: scale 2.
  CHECK(source_coordinate(CoordinateMode::half_pixel, 0, 2.0, 4, 8) == -0.25);
  CHECK(source_coordinate(CoordinateMode::pytorch_half_pixel, 3, 2.0, 4, 8) == 1.25);
  CHECK(source_coordinate(CoordinateMode::pytorch_half_pixel, 0, 0.25, 4, 1) == 0.0);
  CHECK(source_coordinate(CoordinateMode::half_pixel, 0, 0.25, 4, 1) == 1.5);
  CHECK(source_coordinate(CoordinateMode::align_corners, 7, 2.0, 4, 8) == 3.0);
  CHECK(source_coordinate(CoordinateMode::align_corners, 0, 0.25, 4, 1) == 0.0);
  CHECK(source_coordinate(CoordinateMode::asymmetric, 3, 2.0, 4, 8) == 1.5);
  CHECK(source_coordinate(CoordinateMode::tf_half_pixel_for_nn, 3, 2.0, 4, 8) == 1.75);
  // Cubic weights sum to 1 and interpolate: t = 0 picks the centre tap.
  for (double t : {0.0, 0.25, 0.5, 0.9}) {
    const auto w = cubic_coefficients(t, -0.75);
    CHECK(std::accumulate(w.begin(), w.end(), 0.0) == doctest::Approx(1.0).epsilon(1e-12));
  }
  const auto centre = cubic_coefficients(0.0, -0.5);
  CHECK(centre[0] == 0.0);
  CHECK(centre[1] == 1.0);
  CHECK(centre[2] == 0.0);
  CHECK(centre[3] == 0.0);
}

TEST_CASE("resize copies axes that keep their size") {
  // Only W changes; N and C are copied even under a mode that would shift them.
  const HostTensor x = f32({1, 2, 1, 2}, {1, 2, 3, 4});
  const HostTensor y = run_op("resize", {x},
                              {{"sizes", Ints{1, 2, 1, 4}},
                               {"coordinate_transformation_mode", std::string("tf_half_pixel_for_nn")},
                               {"nearest_mode", std::string("ceil")}});
  // W: 2 -> 4, scale 2, x = (o + 0.5) / 2 = 0.25, 0.75, 1.25, 1.75 -> ceil 1, 1, 2 -> 1, 2 -> 1.
  CHECK(y.floats() == std::vector<float>{2, 2, 2, 2, 4, 4, 4, 4});
}

TEST_CASE("pad constant, reflect and edge") {
  const HostTensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  const Ints pads{1, 2, 0, 1};  // one row above, two columns left, one column right
  CHECK(run_op("pad", {x}, {{"pads", pads}, {"value", 9.0}}).floats() == std::vector<float>{9, 9, 9, 9, 9, 9,  //
                                                                                            9, 9, 1, 2, 3, 9,  //
                                                                                            9, 9, 4, 5, 6, 9});
  CHECK(run_op("pad", {x}, {{"pads", pads}, {"mode", std::string("reflect")}}).floats() ==
        std::vector<float>{6, 5, 4, 5, 6, 5,  //
                           3, 2, 1, 2, 3, 2,  //
                           6, 5, 4, 5, 6, 5});
  CHECK(run_op("pad", {x}, {{"pads", pads}, {"mode", std::string("edge")}}).floats() ==
        std::vector<float>{1, 1, 1, 2, 3, 3,  //
                           1, 1, 1, 2, 3, 3,  //
                           4, 4, 4, 5, 6, 6});
}

TEST_CASE("pad crops with negative pads and works on integer dtypes") {
  const HostTensor x = i64({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  // Drop the first column and pad one at the end, drop the last row.
  CHECK(run_op("pad", {x}, {{"pads", Ints{0, -1, -1, 1}}, {"value", -1.0}}).values<int64_t>() == Ints{2, 3, 4, -1});
  // Crop and reflect on the same axis: the reflection is of the full axis.
  CHECK(run_op("pad", {x}, {{"pads", Ints{0, -2, 0, 2}}, {"mode", std::string("reflect")}}).values<int64_t>() ==
        Ints{3, 4, 3, 2, 7, 8, 7, 6});
  const HostTensor bytes = HostTensor::of<uint8_t>(DType::u8, {3}, {7, 8, 9});
  CHECK(run_op("pad", {bytes}, {{"pads", Ints{2, 1}}, {"value", 255.0}}).values<uint8_t>() ==
        std::vector<uint8_t>{255, 255, 7, 8, 9, 255});
  CHECK(run_op("pad", {f32({}, {5})}, {{"pads", Ints{}}}).floats() == std::vector<float>{5});
}

TEST_CASE("resize supports float32 only") {
  try {
    run_op("resize", {i64({2}, {1, 2})}, {{"sizes", Ints{4}}});
    FAIL("expected an error");
  } catch (const Error& error) {
    CHECK(error.code() == ExitCode::unsupported);
  }
}

}  // namespace
}  // namespace mt::test
