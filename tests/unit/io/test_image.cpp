// Image loading: PNG and JPEG decoded by stb_image, the bilinear resize checked against hand
// computed values, normalisation and both layouts, and errors for unreadable files and options.
#include <doctest/doctest.h>
#include <stb_image_write.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "lib/core/error.h"
#include "lib/io/image.h"

namespace mt {
namespace {

std::string temp_path(const std::string& name) { return "/tmp/mt_test_image_" + std::to_string(::getpid()) + "_" + name; }

// A 4x2 RGB image: pixel (y, x) = (10 * x + y, 100 + x, 200 - 50 * y).
std::vector<unsigned char> test_pixels() {
  std::vector<unsigned char> pixels;
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 4; ++x) {
      pixels.push_back(static_cast<unsigned char>(10 * x + y));
      pixels.push_back(static_cast<unsigned char>(100 + x));
      pixels.push_back(static_cast<unsigned char>(200 - 50 * y));
    }
  return pixels;
}

struct TempFile {
  std::string path;
  ~TempFile() { std::remove(path.c_str()); }
};

}  // namespace

TEST_CASE("load_image: PNG to NCHW and NHWC, with normalisation") {
  TempFile png{temp_path("rgb.png")};
  const auto pixels = test_pixels();
  REQUIRE(stbi_write_png(png.path.c_str(), 4, 2, 3, pixels.data(), 4 * 3));

  const HostArray nchw = load_image(png.path, {});
  CHECK(nchw.dtype == DType::f32);
  CHECK(nchw.shape == Shape{1, 3, 2, 4});
  const float* v = nchw.as<float>();
  CHECK(v[0 * 8 + 1 * 4 + 2] == doctest::Approx(21 / 255.0));   // R at y=1, x=2
  CHECK(v[1 * 8 + 0 * 4 + 3] == doctest::Approx(103 / 255.0));  // G at y=0, x=3
  CHECK(v[2 * 8 + 1 * 4 + 0] == doctest::Approx(150 / 255.0));  // B at y=1, x=0

  ImagePreprocess options;
  options.nhwc = true;
  options.mean = {0.5f, 0.25f, 0.0f};
  options.std = {0.5f, 2.0f, 1.0f};
  const HostArray nhwc = load_image(png.path, options);
  CHECK(nhwc.shape == Shape{1, 2, 4, 3});
  const float* w = nhwc.as<float>();
  const size_t p = 1 * 4 + 2;  // y=1, x=2
  CHECK(w[p * 3 + 0] == doctest::Approx((21 / 255.0 - 0.5) / 0.5));
  CHECK(w[p * 3 + 1] == doctest::Approx((102 / 255.0 - 0.25) / 2.0));
  CHECK(w[p * 3 + 2] == doctest::Approx(150 / 255.0));
}

TEST_CASE("load_image: grayscale from RGB and a JPEG") {
  TempFile png{temp_path("gray.png")};
  const std::vector<unsigned char> gray = {0, 255, 128, 64};
  REQUIRE(stbi_write_png(png.path.c_str(), 2, 2, 1, gray.data(), 2));
  ImagePreprocess options;
  options.channels = 1;
  const HostArray g = load_image(png.path, options);
  CHECK(g.shape == Shape{1, 1, 2, 2});
  CHECK(g.as<float>()[1] == doctest::Approx(1.0));
  CHECK(g.as<float>()[3] == doctest::Approx(64 / 255.0));
  // The same gray file asked for RGB gives three equal planes.
  const HostArray rgb = load_image(png.path, {});
  CHECK(rgb.shape == Shape{1, 3, 2, 2});
  CHECK(rgb.as<float>()[4 + 2] == doctest::Approx(128 / 255.0));

  TempFile jpg{temp_path("flat.jpg")};
  const std::vector<unsigned char> flat(8 * 8 * 3, 90);
  REQUIRE(stbi_write_jpg(jpg.path.c_str(), 8, 8, 3, flat.data(), 95));
  const HostArray j = load_image(jpg.path, {});
  CHECK(j.shape == Shape{1, 3, 8, 8});
  for (int i = 0; i < 3 * 64; ++i) CHECK(j.as<float>()[i] == doctest::Approx(90 / 255.0).epsilon(0.02));
}

TEST_CASE("resize_bilinear: upscale, downscale and identity") {
  // 1x2 -> 1x4 upscale: output centres at 0.25, 0.75, 1.25, 1.75 source pixels (edges at integers);
  // weights from the triangle of half-width 1, clamped at the borders.
  const std::vector<float> row = {0, 8};
  const auto up = resize_bilinear(row, 1, 2, 1, 1, 4);
  REQUIRE(up.size() == 4);
  CHECK(up[0] == doctest::Approx(0));  // only pixel 0 is within reach
  CHECK(up[1] == doctest::Approx(2));  // 0.75 * 0 + 0.25 * 8
  CHECK(up[2] == doctest::Approx(6));
  CHECK(up[3] == doctest::Approx(8));
  // 1x4 -> 1x2 downscale by 2: triangle of half-width 2 centred at 1.0 and 3.0: pixel weights
  // (0.75, 0.75, 0.25) / 1.75 for output 0 over source pixels 0..2.
  const std::vector<float> four = {0, 4, 8, 12};
  const auto down = resize_bilinear(four, 1, 4, 1, 1, 2);
  CHECK(down[0] == doctest::Approx((0.75 * 0 + 0.75 * 4 + 0.25 * 8) / 1.75));
  CHECK(down[1] == doctest::Approx((0.25 * 4 + 0.75 * 8 + 0.75 * 12) / 1.75));
  const std::vector<float> two_channels = {1, 2, 3, 4, 5, 6, 7, 8};  // 2x2, 2 channels
  CHECK(resize_bilinear(two_channels, 2, 2, 2, 2, 2) == two_channels);
}

TEST_CASE("load_image: resize through --size") {
  TempFile png{temp_path("resize.png")};
  const auto pixels = test_pixels();
  REQUIRE(stbi_write_png(png.path.c_str(), 4, 2, 3, pixels.data(), 4 * 3));
  ImagePreprocess options;
  options.height = 4;
  options.width = 2;
  const HostArray resized = load_image(png.path, options);
  CHECK(resized.shape == Shape{1, 3, 4, 2});
  // Green depends only on x: 100..103, averaged pairwise by the 2x horizontal shrink.
  const float* green = resized.as<float>() + 8;
  CHECK(green[0] == doctest::Approx((0.75 * 100 + 0.75 * 101 + 0.25 * 102) / 1.75 / 255.0));
}

TEST_CASE("load_image errors") {
  auto expect_error = [](const std::string& path, const ImagePreprocess& options, const std::string& fragment) {
    try {
      load_image(path, options);
      FAIL("expected an error containing: " << fragment);
    } catch (const Error& e) {
      const std::string message = e.what();
    INFO(message);
      CHECK(e.code() == ExitCode::invalid_input);
      CHECK(std::string(e.what()).find(fragment) != std::string::npos);
    }
  };
  expect_error(temp_path("missing.png"), {}, "no such file");
  TempFile junk{temp_path("junk.png")};
  std::ofstream(junk.path) << "this is not an image";
  expect_error(junk.path, {}, "cannot decode image");
  ImagePreprocess four_channels;
  four_channels.channels = 4;
  expect_error(junk.path, four_channels, "needs 4 channels");
  ImagePreprocess bad_mean;
  bad_mean.mean = {0.1f, 0.2f};
  expect_error(junk.path, bad_mean, "1 or 3 values, got 2");
  ImagePreprocess zero_std;
  zero_std.std = {0.0f};
  expect_error(junk.path, zero_std, "non-zero");
}

}  // namespace mt
