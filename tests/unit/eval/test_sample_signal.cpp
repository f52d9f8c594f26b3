// The sample and signal loops (lib/ops/sample_loops.h, signal_loops.h) on hostile data, which the
// op harness's random cases do not reach: grid points that are NaN, infinite or far away in every
// padding mode read padding, not memory (and convert no out-of-range float to an integer); regions
// of interest that are NaN or far larger than any image, batch indices, unpooling positions and
// sequence lengths out of range are refused with Error(invalid_input) naming the node before
// anything is written.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "lib/core/error.h"
#include "lib/ops/sample_loops.h"
#include "lib/ops/signal_loops.h"

namespace mt {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST_CASE("grid_sample: NaN, infinite and far grid points read padding in every mode") {
  const std::vector<float> image = {1, 2, 3, 4, 5, 6};                                        // 1x1x2x3
  const std::vector<float> grid = {kNaN, 0, kInf, 0, -kInf, 1e30f, 3e9f, -3e9f, 0.5f, kNaN};  // 1x1x5x2
  for (SampleMode mode : {SampleMode::bilinear, SampleMode::nearest, SampleMode::bicubic})
    for (SamplePadding padding : {SamplePadding::zeros, SamplePadding::border, SamplePadding::reflection}) {
      INFO("mode ", static_cast<int>(mode), ", padding ", static_cast<int>(padding));
      const GridSampleParams params{1, 1, 2, 3, 1, 5, mode, padding, false};
      std::vector<float> y(5, -99.0f);
      grid_sample_rows(params, image.data(), grid.data(), y.data(), 0, 1);
      for (float v : y) CHECK(v != -99.0f);  // written
      if (padding == SamplePadding::zeros)
        for (size_t k = 1; k < 4; ++k) CHECK(y[k] == 0.0f);  // the infinite and far points
    }
}

TEST_CASE("roi_align: regions that are NaN or too large to sample, and bad batch indices, are refused") {
  const RoiAlignParams params{1, 1, 4, 4, 1, 2, 2, 0, 1.0f, true, false};
  const int64_t batch[1] = {0};
  const IndexData indices{batch, true};
  const float fine[4] = {0, 0, 3, 3}, nan[4] = {0, kNaN, 3, 3}, huge[4] = {0, 0, 1e9f, 3};
  CHECK_NOTHROW(roi_align_check(params, "roi", fine, indices));
  for (const float* roi : {nan, huge}) {
    try {
      roi_align_check(params, "roi", roi, indices);
      FAIL("expected an error");
    } catch (const Error& e) {
      CHECK(e.code() == ExitCode::invalid_input);
      CHECK(std::string(e.what()).find("node 'roi' (roi_align): region 0 has bins of") != std::string::npos);
    }
  }
  // A fixed sampling ratio samples a huge region in bounded time: far points read zeros.
  RoiAlignParams fixed = params;
  fixed.sampling_ratio = 2;
  CHECK_NOTHROW(roi_align_check(fixed, "roi", huge, indices));
  const std::vector<float> image(16, 1.0f);
  std::vector<float> y(4, -99.0f);
  roi_align_rois(fixed, image.data(), huge, indices, y.data(), 0, 1);
  for (float v : y) CHECK(v == 0.0f);  // every sample far to the image's right
  const int64_t bad[1] = {1};
  CHECK_THROWS_AS(roi_align_check(params, "roi", fine, IndexData{bad, true}), Error);
}

TEST_CASE("max_unpool and reverse_sequence refuse positions and lengths out of range, writing nothing") {
  const float x[2] = {5, 6};
  const int64_t positions[2] = {3, 4};  // 4 is past a 2x2 output
  std::vector<float> y(4, -99.0f);
  CHECK_THROWS_AS(max_unpool({2, {1, 1, 2, 2}, {1, 1, 2, 2}}, "unpool", x, {positions, true}, y.data()), Error);
  CHECK(y[3] == -99.0f);

  const ReverseSequenceParams params{3, 2, 1, false, 4};
  const float data[6] = {1, 2, 3, 4, 5, 6};
  const int32_t lengths[2] = {3, 4};  // 4 steps of a 3-step sequence
  std::vector<float> out(6, -99.0f);
  CHECK_THROWS_AS(reverse_sequence(params, "reverse", data, {lengths, false}, out.data()), Error);
  CHECK(out[0] == -99.0f);
}

}  // namespace
}  // namespace mt
