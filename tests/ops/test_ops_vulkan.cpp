// The op harness for the vulkan backend in fp16 (--precision fp16): every case vulkan accepts, run
// with fp16 storage and arithmetic (fp32 accumulation) and compared with the reference within the
// per-op tolerances below. fp32 vulkan runs in test_ops.cpp with every other backend.
//
// Without a Vulkan device the test is skipped (saying why), except with MT_REQUIRE_VULKAN=1 (scripts/test.sh,
// CI), where it fails.
// MT_OPS=conv2d,resize restricts the run to some ops.
#include <doctest/doctest.h>

#include <cstdlib>
#include <map>
#include <set>

#include "kernels/reference/reference_backend.h"
#include "lib/core/error.h"
#include "lib/runtime/backend_registry.h"
#include "tests/ops/op_runner.h"

namespace mt::optest {
namespace {

// Allowed max abs error relative to max(1, range of the reference output), as OpCase::tolerance.
// fp16 keeps 11 significant bits: a value is stored within 2^-11 (4.9e-4) of itself, so copies and
// selections (shape ops, relu, max pooling, nearest resize) get 3e-3, enough for values up to 6 times
// the output's range. Element-wise arithmetic rounds its inputs and its result (4e-3). floor and ceil
// move by 1 when rounding carries an input across an integer (the cases span 7 to 8 integers). Sums,
// convolutions and matrix products accumulate in fp32 but read fp16-rounded inputs and weights: the
// error of an N-term sum grows like sqrt(N), 1e-2 covers N up to several hundred here. Softmax of
// logits as large as 90 (stored within 0.03) moves probabilities by up to 3% of their value (2e-2).
constexpr double kCopy = 3e-3, kArithmetic = 4e-3, kSum = 1e-2;
const std::map<std::string, double, std::less<>> kFp16Tolerance = {
    {"add", kArithmetic},     {"sub", kArithmetic},        {"mul", kArithmetic},      {"div", kArithmetic},
    {"pow", kArithmetic},     {"prelu", kArithmetic},      {"max", kCopy},            {"min", kCopy},
    {"relu", kCopy},          {"clamp", kCopy},            {"leaky_relu", kArithmetic}, {"neg", kCopy},
    {"abs", kCopy},           {"sigmoid", kArithmetic},    {"tanh", kArithmetic},     {"hardswish", kArithmetic},
    {"hardsigmoid", kArithmetic}, {"silu", kArithmetic},   {"gelu", kArithmetic},     {"elu", kArithmetic},
    {"exp", kArithmetic},     {"log", kArithmetic},        {"sqrt", kArithmetic},     {"reciprocal", kArithmetic},
    {"erf", kArithmetic},     {"softplus", kArithmetic},   {"floor", 0.15},           {"ceil", 0.15},
    {"reduce_mean", kSum},    {"reduce_sum", kSum},        {"reduce_max", kCopy},     {"reduce_min", kCopy},
    {"softmax", 2e-2},        {"log_softmax", 2e-2},       {"batch_norm", kArithmetic}, {"layer_norm", kSum},
    {"linear", kSum},         {"matmul", kSum},            {"conv2d", kSum},          {"conv_transpose2d", kSum},
    {"max_pool2d", kCopy},    {"avg_pool2d", kSum},        {"global_avg_pool", kSum}, {"global_max_pool", kCopy},
    {"resize", kArithmetic},  {"pad", kCopy},              {"reshape", kCopy},        {"flatten", kCopy},
    {"squeeze", kCopy},       {"unsqueeze", kCopy},        {"identity", kCopy},       {"transpose", kCopy},
    {"concat", kCopy},        {"split", kCopy},            {"slice", kCopy},          {"expand", kCopy},
    {"gather", kCopy},
};

}  // namespace

TEST_CASE("vulkan in fp16 matches the reference within the per-op fp16 tolerances") {
  const Backend* vulkan = find_backend("vulkan");
  if (vulkan == nullptr) return;  // not built
  const auto reference = make_reference_backend();
  const std::set<std::string> only = selected_ops();
  PlanOptions fp16;
  fp16.precision = "fp16";
  // Whether this machine has a Vulkan device with fp16: plan an empty graph.
  try {
    vulkan->plan(Graph{}, fp16);
  } catch (const Error& e) {
    if (vulkan_required()) FAIL("MT_REQUIRE_VULKAN=1 but vulkan fp16 cannot run: " << std::string(e.what()));
    MESSAGE("SKIP: vulkan fp16 not tested: " << std::string(e.what()));
    return;
  }
  size_t compared = 0;
  for (const auto& [op, cases] : case_table().all()) {
    if (!only.empty() && !only.count(op)) continue;
    for (const OpCase& c : cases) {
      const std::string where = fmt::format("op {}, case '{}'", op, c.name);
      CaseGraph built;
      std::vector<HostArray> expected;
      try {
        built = build_case(op, c, case_seed(op, c));
        if (vulkan->check_node(built.graph, built.graph.nodes[0])) continue;
        expected = run_case(*reference, built, 1);
      } catch (const std::exception&) {
        continue;  // test_ops.cpp reports cases the reference cannot run
      }
      auto tolerance = kFp16Tolerance.find(op);
      if (tolerance == kFp16Tolerance.end()) {
        FAIL_CHECK(where << ": vulkan runs op " << op << " but it has no fp16 tolerance in tests/ops/test_ops_vulkan.cpp");
        continue;
      }
      std::vector<HostArray> actual;
      try {
        actual = run_case(*vulkan, built, fp16);
      } catch (const std::exception& e) {
        FAIL_CHECK("vulkan fp16, " << where << ": " << e.what());
        continue;
      }
      ++compared;
      for (size_t o = 0; o < expected.size(); ++o)
        if (auto mismatch = first_mismatch(actual[o], expected[o], tolerance->second, c.integer_tolerance))
          FAIL_CHECK("vulkan fp16, " << where << ", output " << o << ": " << *mismatch);
    }
  }
  MESSAGE("vulkan fp16: " << compared << " cases compared with the reference");
}

}  // namespace mt::optest
