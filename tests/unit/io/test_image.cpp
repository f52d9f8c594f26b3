// Image loading: PNG, JPEG and PNM decoded (libpng, libjpeg-turbo, our PNM reader) to the
// tensors stb_image gave before them, the bilinear resize checked against hand computed values,
// normalisation and both layouts, and errors for hostile, unsupported and unreadable files.
#include <doctest/doctest.h>
#include <png.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <jpeglib.h>

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

// 8-bit gray (channels 1) or RGB (3) written by libpng's simplified API.
bool write_png(const std::string& path, int width, int height, int channels, const unsigned char* pixels) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(width);
  image.height = static_cast<png_uint_32>(height);
  image.format = channels == 1 ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB;
  return png_image_write_to_file(&image, path.c_str(), 0, pixels, 0, nullptr) != 0;
}

// RGB written by libjpeg-turbo at the given quality (its default error handler exits on failure).
void write_jpeg(const std::string& path, int width, int height, const unsigned char* pixels, int quality) {
  FILE* file = std::fopen(path.c_str(), "wb");
  REQUIRE(file != nullptr);
  jpeg_compress_struct cinfo{};
  jpeg_error_mgr errors{};
  cinfo.err = jpeg_std_error(&errors);
  jpeg_create_compress(&cinfo);
  jpeg_stdio_dest(&cinfo, file);
  cinfo.image_width = static_cast<JDIMENSION>(width);
  cinfo.image_height = static_cast<JDIMENSION>(height);
  cinfo.input_components = 3;
  cinfo.in_color_space = JCS_RGB;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, quality, TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = const_cast<unsigned char*>(pixels) + cinfo.next_scanline * width * 3;
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  std::fclose(file);
}

// Loading `path` fails with Error(code) whose message contains `fragment` (with `whole`, is it).
void expect_refused(const std::string& path, const ImagePreprocess& options, ExitCode code, const std::string& fragment,
                    bool whole = false) {
  INFO(path);
  try {
    load_image(path, options);
    FAIL("expected an error containing: " << fragment);
  } catch (const Error& e) {
    const std::string message = e.what();
    INFO(message);
    CHECK(e.code() == code);
    if (whole) CHECK(message == fragment);
    else CHECK(message.find(fragment) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("load_image: PNG to NCHW and NHWC, with normalisation") {
  TempFile png{temp_path("rgb.png")};
  const auto pixels = test_pixels();
  REQUIRE(write_png(png.path, 4, 2, 3, pixels.data()));

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
  REQUIRE(write_png(png.path, 2, 2, 1, gray.data()));
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
  write_jpeg(jpg.path, 8, 8, flat.data(), 95);
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
  REQUIRE(write_png(png.path, 4, 2, 3, pixels.data()));
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
  auto write = [](const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary) << bytes;
  };
  ImagePreprocess gray;
  gray.channels = 1;
  TempFile crash{temp_path("crash.ppm")};
  write(crash.path, "P6375 6375 6587 ] \n");
  expect_refused(crash.path, gray, ExitCode::unsupported, "16-bit PNM images (maxval 6587) are not supported");
  expect_refused(crash.path, {}, ExitCode::unsupported, "16-bit PNM images (maxval 6587) are not supported");
  TempFile pgm16{temp_path("16.pgm")};
  write(pgm16.path, std::string("P5\n# 16 bits\n2 1\n1000\n") + std::string("\x03\xe8\x00\x10", 4));
  expect_refused(pgm16.path, {}, ExitCode::unsupported, "maxval 1000");

  TempFile short_ppm{temp_path("short.ppm")};
  write(short_ppm.path, std::string("P6\n2 2\n255\n") + std::string(11, '\x40'));
  expect_refused(short_ppm.path, {}, ExitCode::invalid_input,
                 "truncated PNM image: 2x2 needs 12 bytes of pixels, the file has 11");
  TempFile no_pixels{temp_path("header.pgm")};
  write(no_pixels.path, "P5 4 4 255");
  expect_refused(no_pixels.path, {}, ExitCode::invalid_input, "4x4 needs 16 bytes of pixels, the file has 0");

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

// The tensors of the images in tests/data/image, captured from the stb_image loader before libpng
// and libjpeg-turbo replaced it (tests/data/image/make_images.py). PNG and PNM decode identically;
// the one exception is a 16-bit RGB PNG asked for as gray, which stb_image converted to gray before
// dropping the low byte and we after (at most 1/255 apart). JPEG decoders differ in their IDCT,
// chroma upsampling and YCbCr conversion rounding: libjpeg-turbo's pixels are within 2/255 of
// stb_image's, 0.2/255 on average.
TEST_CASE("load_image: the same tensors as stb_image gave") {
  const std::string dir = std::string(MT_SOURCE_DIR) + "/tests/data/image/";
  struct Expected {
    const char* file;
    double max_difference;   // in 1/255 steps
    double mean_difference;
  };
  for (const Expected& expected : std::vector<Expected>{{"rgb.png", 0, 0},       {"gray.png", 0, 0},       {"rgba.png", 0, 0},
                                                         {"gray_alpha.png", 0, 0}, {"palette.png", 0, 0},    {"bilevel.png", 0, 0},
                                                         {"gray16.png", 0, 0},     {"rgb16.png", 1, 0.3},    {"interlaced.png", 0, 0},
                                                         {"rgb_trns.png", 0, 0},   {"rgb.ppm", 0, 0},        {"gray.pgm", 0, 0},
                                                         {"rgb420.jpg", 2, 0.2},   {"rgb444.jpg", 2, 0.2},   {"progressive.jpg", 2, 0.2},
                                                         {"gray.jpg", 1, 0.1}})
    for (int channels : {3, 1}) {
      INFO(expected.file, " as ", channels, " channels");
      ImagePreprocess options;
      options.channels = channels;
      const HostArray got = load_image(dir + expected.file, options);
      const HostArray want = read_npy(dir + expected.file + (channels == 3 ? ".rgb.npy" : ".gray.npy"));
      REQUIRE(got.shape == want.shape);
      const size_t n = static_cast<size_t>(numel(want.shape));
      double max_difference = 0, total = 0;
      for (size_t i = 0; i < n; ++i) {
        const double difference = std::abs(got.as<float>()[i] - want.as<float>()[i]) * 255;
        max_difference = std::max(max_difference, difference);
        total += difference;
      }
      const bool lossless = expected.max_difference == 0 || (channels == 3 && std::string(expected.file) == "rgb16.png");
      if (lossless) CHECK(max_difference == 0);
      CHECK(max_difference <= expected.max_difference + 1e-3);
      CHECK(total / static_cast<double>(n) <= expected.mean_difference + 1e-6);
    }
}

// Hostile files are refused with one line naming the file and what is wrong, before anything is
// allocated for what their headers declare. tests/data/image/hostile: headers declaring more
// pixels than the limit, truncated files, formats mt does not read. tests/data/fuzz/image: found by
// fuzzing stb_image and replayed against the new readers: DHT segments declaring more than 256
// codes (stb_image wrote past its Huffman tables), the same behind 0xFF fill bytes before the
// start-of-image marker (which libjpeg does not accept), a GIF declaring a 1.6 GB screen, a 62-byte
// BMP declaring 25 million pixels and a 31-byte TGA declaring 9.6 million.
TEST_CASE("load_image: hostile, truncated and unsupported files, and fuzz regressions") {
  const std::string hostile = std::string(MT_SOURCE_DIR) + "/tests/data/image/hostile/";
  const std::string fuzz = std::string(MT_SOURCE_DIR) + "/tests/data/fuzz/image/";
  const std::string not_read = "cannot decode image: not a PNG, JPEG or binary PNM (P5, P6) file";
  const std::string unsupported = "BMP, GIF, PSD and HDR images are not supported; convert it to PNG";
  struct Refusal {
    std::string path;
    ExitCode code;
    std::string message;
  };
  const std::vector<Refusal> refusals{
      {hostile + "huge_header.png", ExitCode::invalid_input, "image dimensions 100000x100000 are not supported"},
      {hostile + "huge_header.jpg", ExitCode::invalid_input, "image dimensions 60000x60000 are not supported"},
      {hostile + "truncated.png", ExitCode::invalid_input, "cannot decode image: PNG: truncated file"},
      {hostile + "truncated.jpg", ExitCode::invalid_input, "cannot decode image: JPEG: Premature end of JPEG file"},
      {hostile + "cmyk.jpg", ExitCode::unsupported, "CMYK JPEG images are not supported; convert it to RGB"},
      {hostile + "rgb.bmp", ExitCode::unsupported, unsupported},
      // 896 valid progressive scans (make_images.py): refused at the 501st.
      {hostile + "many_scans.jpg", ExitCode::invalid_input, "cannot decode image: JPEG: more than 500 scans"},
      {fuzz + "jpeg_huffman_overflow.jpg", ExitCode::invalid_input,
       "cannot decode image: JPEG: Bogus Huffman table definition"},
      {fuzz + "jpeg_huffman_overflow_before_frame.jpg", ExitCode::invalid_input,
       "cannot decode image: JPEG: Bogus Huffman table definition"},
      {fuzz + "jpeg_huffman_overflow_fill_bytes.jpg", ExitCode::invalid_input, not_read},
      {fuzz + "tga_truncated_rle.tga", ExitCode::invalid_input, not_read},
      {fuzz + "bmp_truncated_huge.bmp", ExitCode::unsupported, unsupported},
      {fuzz + "gif_huge_screen.gif", ExitCode::unsupported, unsupported},
  };
  for (const Refusal& refusal : refusals)
    expect_refused(refusal.path, {}, refusal.code, refusal.path + ": " + refusal.message, true);

  // The first 30 scans of many_scans.jpg alone decode, to the flat gray (128) the coefficients code.
  ImagePreprocess gray;
  gray.channels = 1;
  const HostArray few = load_image(std::string(MT_SOURCE_DIR) + "/tests/data/image/few_scans.jpg", gray);
  REQUIRE(few.shape == Shape{1, 1, 8, 8});
  for (int i = 0; i < 64; ++i) CHECK(few.as<float>()[i] == doctest::Approx(128 / 255.0));
}

TEST_CASE("load_image errors") {
  auto expect_error = [](const std::string& path, const ImagePreprocess& options, const std::string& fragment) {
    expect_refused(path, options, ExitCode::invalid_input, fragment);
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
