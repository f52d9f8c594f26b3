// --size/--mean/--std/--layout as mt-run and mt-quantize parse them (lib/cli/image_flags).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "lib/cli/image_flags.h"
#include "lib/core/error.h"
#include "tests/unit/cli/cli_test_util.h"

using namespace mt;

namespace {

// Parses `args` the way a tool does and returns the validated settings.
ImagePreprocess parse_args(std::vector<std::string> args) {
  CLI::App app;
  cli::ImageFlags flags;
  flags.add_to(app);
  test::parse_in_order(app, std::move(args));
  return flags.parse();
}

std::string usage_error(std::vector<std::string> args) {
  return test::usage_error_of([&] { parse_args(std::move(args)); });
}

}  // namespace

TEST_CASE("image flags: defaults keep the input's size, no normalisation, NCHW") {
  const ImagePreprocess image = parse_args({});
  CHECK(image.height == 0);
  CHECK(image.width == 0);
  CHECK(image.mean.empty());
  CHECK(image.std.empty());
  CHECK_FALSE(image.nhwc);
}

TEST_CASE("image flags: values as given") {
  const ImagePreprocess image =
      parse_args({"--size", "224,160", "--mean", "0.485,0.456,0.406", "--std", "0.5", "--layout", "nhwc"});
  CHECK(image.height == 224);
  CHECK(image.width == 160);
  CHECK(image.mean == std::vector<float>{0.485f, 0.456f, 0.406f});
  CHECK(image.std == std::vector<float>{0.5f});
  CHECK(image.nhwc);
  const ImagePreprocess square = parse_args({"--size", "96"});
  CHECK(square.height == 96);
  CHECK(square.width == 96);
}

TEST_CASE("image flags: malformed values are usage errors naming the flag") {
  CHECK(usage_error({"--size", "0,4"}) == "--size 0,4: expected H,W (or one size for both) in 1..65536");
  CHECK(usage_error({"--size", "4.5"}) == "--size 4.5: expected H,W (or one size for both) in 1..65536");
  CHECK(usage_error({"--size", "1,2,3"}) == "--size 1,2,3: expected H,W (or one size for both) in 1..65536");
  CHECK(usage_error({"--size", "65537,4"}) == "--size 65537,4: expected H,W (or one size for both) in 1..65536");
  CHECK(usage_error({"--size", "4,"}) == "--size 4,: '' is not a number");
  CHECK(usage_error({"--mean", "0.5,x,0.5"}) == "--mean 0.5,x,0.5: 'x' is not a number");
  CHECK(usage_error({"--std", "1,nan,1"}) == "--std 1,nan,1: 'nan' is not a number");
  CHECK(usage_error({"--mean", "0.5,0.5"}) == "--mean takes 1 or 3 values, got 2");
  CHECK_THROWS_AS(parse_args({"--layout", "chw"}), CLI::ValidationError);
}
