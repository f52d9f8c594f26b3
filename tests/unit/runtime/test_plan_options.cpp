// PlanOptions::from_environment: MT_CPU_WINOGRAD, MT_CPU_AVX512_GEMM, MT_CPU_INT8_VNNI,
// MT_CPU_DEPTHWISE, MT_CPU_STEM_CONV and MT_CPU_CONV_FUSION set the cpu kernel-path fields,
// MT_CPU_TARGET the cap on the instructions (mt-run(1) ENVIRONMENT); anything but 0 or 1, or a
// target name, is a usage error naming the variable.
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include "lib/core/error.h"
#include "lib/runtime/plan_options.h"

namespace mt {
namespace {

// Sets one variable for the scope of a test and restores the unset state.
struct ScopedEnv {
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }
  const char* name_;
};

constexpr const char* kVariables[] = {"MT_CPU_WINOGRAD",  "MT_CPU_AVX512_GEMM", "MT_CPU_INT8_VNNI",
                                      "MT_CPU_DEPTHWISE", "MT_CPU_STEM_CONV",   "MT_CPU_CONV_FUSION"};

int paths_on(const PlanOptions& o) {
  return o.winograd + o.packed_gemm + o.int8_vnni + o.depthwise + o.stem_conv + o.conv_fusion;
}

}  // namespace

TEST_CASE("plan options: every kernel path is on by default, with or without the environment") {
  for (const char* name : kVariables) unsetenv(name);
  unsetenv("MT_CPU_TARGET");
  for (const PlanOptions& options : {PlanOptions{}, PlanOptions::from_environment()}) {
    CHECK(options.winograd);
    CHECK(options.packed_gemm);
    CHECK(options.int8_vnni);
    CHECK(options.depthwise);
    CHECK(options.stem_conv);
    CHECK(options.conv_fusion);
    CHECK(options.threads == 1);
    CHECK(options.gpu_index == 0);
    CHECK(options.precision == "fp32");
    CHECK_FALSE(options.profile);
    CHECK_FALSE(options.cpu_target.has_value());
  }
}

TEST_CASE("plan options: MT_CPU_TARGET caps the instructions; another value is a usage error") {
  for (const char* name : {"generic", "avx2", "avx512"}) {
    ScopedEnv target("MT_CPU_TARGET", name);
    const PlanOptions options = PlanOptions::from_environment();
    REQUIRE(options.cpu_target.has_value());
    CHECK(cpu_target_name(*options.cpu_target) == name);
    CHECK(options.winograd + options.packed_gemm + options.int8_vnni == 3);
  }
  for (const char* value : {"", "AVX512", "sse4"}) {
    ScopedEnv bad("MT_CPU_TARGET", value);
    try {
      (void)PlanOptions::from_environment();
      FAIL("accepted");
    } catch (const Error& error) {
      CHECK(error.code() == ExitCode::usage);
      CHECK(std::string(error.what()) ==
            std::string("MT_CPU_TARGET must be generic, avx2 or avx512, got '") + value + "'");
    }
  }
}

TEST_CASE("plan options: each variable sets its own field only") {
  struct Case {
    const char* name;
    bool PlanOptions::*field;
  };
  for (const Case& c :
       {Case{"MT_CPU_WINOGRAD", &PlanOptions::winograd}, Case{"MT_CPU_AVX512_GEMM", &PlanOptions::packed_gemm},
        Case{"MT_CPU_INT8_VNNI", &PlanOptions::int8_vnni}, Case{"MT_CPU_DEPTHWISE", &PlanOptions::depthwise},
        Case{"MT_CPU_CONV_FUSION", &PlanOptions::conv_fusion}}) {
    INFO(c.name);
    {
      ScopedEnv off(c.name, "0");
      const PlanOptions options = PlanOptions::from_environment();
      CHECK_FALSE(options.*c.field);
      CHECK(paths_on(options) == 5);
    }
    ScopedEnv on(c.name, "1");
    const PlanOptions options = PlanOptions::from_environment();
    CHECK(paths_on(options) == 6);
  }
}

TEST_CASE("plan options: a value other than 0 or 1 is a usage error naming the variable") {
  for (const char* name : kVariables) {
    for (const char* value : {"yes", "", "01", "true"}) {
      INFO(name, "=", value);
      ScopedEnv bad(name, value);
      try {
        (void)PlanOptions::from_environment();
        FAIL("accepted");
      } catch (const Error& error) {
        CHECK(error.code() == ExitCode::usage);
        CHECK(std::string(error.what()) == std::string(name) + " must be 0 or 1, got '" + value + "'");
      }
    }
  }
}

}  // namespace mt
