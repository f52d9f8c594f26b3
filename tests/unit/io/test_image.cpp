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

// Found by tests/fuzz/fuzz_image: stb_image converts a 16-bit PNM to fewer or more channels with
// its 8-bit routine and then reads twice the buffer it has (SEGV on this 19-byte file asked for
// grayscale), reads 16-bit PNM samples in host byte order, and leaves the pixels of a truncated PNM
// uninitialised. 16-bit PNM is refused (unsupported), a truncated PNM is invalid input.
TEST_CASE("load_image: PNM, 16-bit and truncated (fuzz regressions)") {
  auto write = [](const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; };
  auto expect_error = [](const std::string& path, const ImagePreprocess& options, ExitCode code, const std::string& fragment) {
    try {
      load_image(path, options);
      FAIL("expected an error containing: " << fragment);
    } catch (const Error& e) {
      INFO(e.what());
      CHECK(e.code() == code);
      CHECK(std::string(e.what()).find(fragment) != std::string::npos);
    }
  };
  ImagePreprocess gray;
  gray.channels = 1;
  TempFile crash{temp_path("crash.ppm")};
  write(crash.path, "P6375 6375 6587 ] \n");
  expect_error(crash.path, gray, ExitCode::unsupported, "16-bit PNM images (maxval 6587) are not supported");
  expect_error(crash.path, {}, ExitCode::unsupported, "16-bit PNM images (maxval 6587) are not supported");
  TempFile pgm16{temp_path("16.pgm")};
  write(pgm16.path, std::string("P5\n# 16 bits\n2 1\n1000\n") + std::string("\x03\xe8\x00\x10", 4));
  expect_error(pgm16.path, {}, ExitCode::unsupported, "maxval 1000");

  TempFile short_ppm{temp_path("short.ppm")};
  write(short_ppm.path, std::string("P6\n2 2\n255\n") + std::string(11, '\x40'));
  expect_error(short_ppm.path, {}, ExitCode::invalid_input, "truncated PNM image: 2x2 needs 12 bytes of pixels, the file has 11");
  TempFile no_pixels{temp_path("header.pgm")};
  write(no_pixels.path, "P5 4 4 255");
  expect_error(no_pixels.path, {}, ExitCode::invalid_input, "4x4 needs 16 bytes of pixels, the file has 0");

  // Complete 8-bit files still decode: a PGM with a comment, as RGB (three equal planes), and a PPM
  // as gray: (200 * 77 + 100 * 150 + 50 * 29) >> 8 = 124.
  TempFile pgm{temp_path("8.pgm")};
  write(pgm.path, std::string("P5\n# comment\n2 1\n255\n") + std::string("\x40\xc8", 2));
  const HostArray planes = load_image(pgm.path, {});
  CHECK(planes.shape == Shape{1, 3, 1, 2});
  for (int c = 0; c < 3; ++c) {
    CHECK(planes.as<float>()[c * 2] == doctest::Approx(0x40 / 255.0));
    CHECK(planes.as<float>()[c * 2 + 1] == doctest::Approx(0xc8 / 255.0));
  }
  TempFile ppm{temp_path("8.ppm")};
  write(ppm.path, std::string("P6 1 1 255 ") + std::string("\xc8\x64\x32", 3));
  const HostArray g = load_image(ppm.path, gray);
  CHECK(g.shape == Shape{1, 1, 1, 1});
  CHECK(g.as<float>()[0] == doctest::Approx(124 / 255.0));
}

// Found by tests/fuzz/fuzz_image (files in tests/data/fuzz/image): DHT segments declaring more than
// 256 codes made stb_image write past its Huffman tables, in the frame (decoding) and before it
// (already while reading the header); a GIF's declared screen size made it allocate 1.6 GB; a
// 62-byte BMP declaring 25 million pixels and a 31-byte TGA declaring 9.6 million decoded (to
// zeros) instead of being refused.
TEST_CASE("load_image: hostile JPEG and GIF headers (fuzz regressions)") {
  const std::string dir = std::string(MT_SOURCE_DIR) + "/tests/data/fuzz/image/";
  CHECK_THROWS_WITH_AS(load_image(dir + "jpeg_huffman_overflow.jpg", {}),
                       doctest::Contains("corrupt JPEG: a Huffman table at byte 430 declares 421 codes"), Error);
  CHECK_THROWS_WITH_AS(load_image(dir + "jpeg_huffman_overflow_before_frame.jpg", {}),
                       doctest::Contains("corrupt JPEG: a Huffman table at byte 243 declares 477 codes"), Error);
  CHECK_THROWS_WITH_AS(load_image(dir + "jpeg_huffman_overflow_fill_bytes.jpg", {}),  // 0xFF fill before the SOI marker
                       doctest::Contains("corrupt JPEG: a Huffman table at byte 189 declares 692 codes"), Error);
  CHECK_THROWS_WITH_AS(load_image(dir + "bmp_truncated_huge.bmp", {}),
                       doctest::Contains("truncated BMP image: 8388611x3 at 24 bits needs 75497508 bytes of pixels from byte 54, the file has 62"),
                       Error);
  CHECK_THROWS_WITH_AS(load_image(dir + "tga_truncated_rle.tga", {}),
                       doctest::Contains("truncated TGA image: 196x48901 needs at least 74880 bytes of pixels from byte 67, the file has 31"),
                       Error);
  CHECK_THROWS_WITH_AS(load_image(dir + "gif_huge_screen.gif", {}), doctest::Contains("image dimensions 7967x22815 are not supported"),
                       Error);
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
