// --device/--threads/--gpu/--precision as mt-run and mt-bench parse and cross-check them
// (lib/cli/device_flags).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "lib/cli/device_flags.h"
#include "lib/core/error.h"
#include "tests/unit/cli/cli_test_util.h"

using namespace mt;

namespace {

// Parses `args` the way a tool does, runs the cross-checks and returns the plan options built
// on `base`.
PlanOptions parse_args(std::vector<std::string> args, PlanOptions base = {}) {
  CLI::App app;
  cli::DeviceFlags flags;
  flags.add_to(app, "--list-devices");
  test::parse_in_order(app, std::move(args));
  flags.check();
  return flags.plan_options(base);
}

std::string usage_error(std::vector<std::string> args) {
  return test::usage_error_of([&] { parse_args(std::move(args)); });
}

}  // namespace

TEST_CASE("device flags: defaults are one cpu thread, GPU 0, the model's precision") {
  CHECK(cli::DeviceFlags{}.device == "cpu");
  const PlanOptions options = parse_args({});
  CHECK(options.threads == 1);
  CHECK(options.gpu_index == 0);
  CHECK(options.precision.empty());  // resolved by the caller once the model is read
}

TEST_CASE("device flags: values as given, on top of the base options' kernel paths") {
  PlanOptions base;
  base.winograd = false;
  base.int8_vnni = false;
  const PlanOptions cpu = parse_args({"--device", "cpu", "-t", "4"}, base);
  CHECK(cpu.threads == 4);
  CHECK_FALSE(cpu.winograd);
  CHECK(cpu.packed_gemm);
  CHECK_FALSE(cpu.int8_vnni);
  const PlanOptions vulkan = parse_args({"-d", "vulkan", "--gpu", "2", "--precision", "fp16"});
  CHECK(vulkan.gpu_index == 2);
  CHECK(vulkan.precision == "fp16");
  // Giving the defaults explicitly is still giving them: --gpu 0 is vulkan's too.
  CHECK(parse_args({"-d", "vulkan", "--gpu", "0"}).gpu_index == 0);
}

TEST_CASE("device flags: --gpu and --precision apply to --device vulkan only") {
  CHECK(usage_error({"--gpu", "1"}) == "--gpu applies to --device vulkan only");
  CHECK(usage_error({"--gpu", "0"}) == "--gpu applies to --device vulkan only");
  CHECK(usage_error({"-d", "reference", "--precision", "fp32"}) == "--precision applies to --device vulkan only");
  // Both given: the message names --gpu.
  CHECK(usage_error({"-d", "cpu", "--precision", "fp16", "--gpu", "1"}) == "--gpu applies to --device vulkan only");
  // --threads is only a warning on the reference backend.
  CHECK(parse_args({"-d", "reference", "-t", "2"}).threads == 2);
}

TEST_CASE("device flags: out-of-range values are rejected by the parser") {
  CHECK_THROWS_AS(parse_args({"--device", "tpu"}), CLI::ValidationError);
  CHECK_THROWS_AS(parse_args({"--threads", "0"}), CLI::ValidationError);
  CHECK_THROWS_AS(parse_args({"--threads", "257"}), CLI::ValidationError);
  CHECK_THROWS_AS(parse_args({"-d", "vulkan", "--gpu", "-1"}), CLI::ValidationError);
  CHECK_THROWS_AS(parse_args({"-d", "vulkan", "--precision", "bf16"}), CLI::ValidationError);
}
