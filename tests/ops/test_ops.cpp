// The op harness: every op of the registry, every case of tests/ops/cases_*.cpp, on every built
// backend, compared with the reference backend. An op without cases fails, so new ops cannot
// land untested; a backend that must run every op (cpu) fails when it accepts no case of one.
//
// MT_OPS=conv2d,resize restricts the run to some ops; MT_OPS_VERBOSE=1 lists skipped cases.
#include <doctest/doctest.h>

#include <cstdlib>
#include <set>

#include "kernels/reference/reference_backend.h"
#include "lib/ops/registry.h"
#include "lib/runtime/backend_registry.h"
#include "tests/ops/op_runner.h"

namespace mt::optest {
namespace {

// Backends that must accept at least one case of every op (the issue's "harness passes for every
// registered op on cpu and reference").
const std::set<std::string> kMustRunEveryOp = {"reference", "cpu"};

size_t nan_count(const HostArray& array) {
  if (array.dtype != DType::f32) return 0;
  size_t n = 0;
  for (int64_t i = 0; i < array.numel(); ++i) n += std::isnan(array.as<float>()[i]) ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("every registered op has cases, and they are valid") {
  const CaseTable& table = case_table();
  std::set<std::string> registered;
  for (const OpSchema* schema : all_ops()) {
    registered.insert(schema->name);
    const auto* cases = table.find(schema->name);
    if (cases == nullptr || cases->empty()) FAIL_CHECK("op '" << schema->name << "' has no cases in tests/ops/cases_*.cpp");
  }
  for (const auto& [op, cases] : table.all())
    if (!registered.count(op)) FAIL_CHECK("tests/ops has cases for op '" << op << "', which is not registered");
}

TEST_CASE("every backend matches the reference on every op case") {
  const std::set<std::string> only = selected_ops();
  const bool verbose = std::getenv("MT_OPS_VERBOSE") != nullptr;
  const auto reference = make_reference_backend();
  std::vector<const Backend*> others;
  for (const auto& name : backend_names()) {
    if (name == "reference") continue;
    // A backend this machine cannot run (vulkan without a device) is skipped, saying why, unless
    // MT_REQUIRE_VULKAN=1 (scripts/test.sh, CI), where that is a failure.
    try {
      find_backend(name)->plan(Graph{}, PlanOptions{});
    } catch (const Error& e) {
      if (name == "vulkan" && vulkan_required()) FAIL_CHECK("MT_REQUIRE_VULKAN=1 but backend 'vulkan' cannot run: " << std::string(e.what()));
      else MESSAGE("SKIP: backend '" << name << "' not tested: " << std::string(e.what()));
      continue;
    }
    others.push_back(find_backend(name));
  }

  size_t compared = 0, skipped = 0, ran = 0;
  for (const auto& [op, cases] : case_table().all()) {
    if (!only.empty() && !only.count(op)) continue;
    std::map<std::string, size_t> accepted;  // backend -> cases it ran
    for (const OpCase& c : cases) {
      const std::string where = fmt::format("op {}, case '{}'", op, c.name);
      INFO(where);
      CaseGraph built;
      std::vector<HostArray> expected;
      try {
        built = build_case(op, c, case_seed(op, c));
        expected = run_case(*reference, built, 1);
      } catch (const std::exception& e) {
        FAIL_CHECK(where << ": reference: " << std::string(e.what()));
        continue;
      }
      ++ran;
      ++accepted["reference"];
      for (size_t o = 0; o < expected.size(); ++o)
        if (const size_t nans = nan_count(expected[o]))
          FAIL_CHECK(where << ": reference output " << o << " has " << nans << " NaN (the case's inputs are out of the op's domain)");

      for (const Backend* backend : others) {
        if (auto reason = backend->check_node(built.graph, built.graph.nodes[0])) {
          ++skipped;
          if (verbose) MESSAGE(backend->name() << " skips " << where << ": " << *reason);
          continue;
        }
        ++accepted[std::string(backend->name())];
        // Thread counts only matter to the cpu backend; one run each elsewhere (lavapipe is slow).
        const std::vector<int> thread_counts = backend->name() == "cpu" ? std::vector<int>{1, 2} : std::vector<int>{1};
        for (int threads : thread_counts) {
          std::vector<HostArray> actual;
          try {
            actual = run_case(*backend, built, threads);
          } catch (const std::exception& e) {
            FAIL_CHECK(backend->name() << " (" << threads << " threads), " << where << ": " << std::string(e.what()));
            continue;
          }
          ++compared;
          for (size_t o = 0; o < expected.size(); ++o)
            if (auto mismatch = first_mismatch(actual[o], expected[o], c.tolerance, c.integer_tolerance))
              FAIL_CHECK(backend->name() << " (" << threads << " threads), " << where << ", output " << o << ": " << *mismatch);
        }
      }
    }
    for (const auto& name : backend_names())
      if (kMustRunEveryOp.count(name) && accepted[name] == 0)
        FAIL_CHECK("backend '" << name << "' accepts none of the " << cases.size() << " cases of op '" << op << "'");
  }
  MESSAGE("op harness: " << ran << " cases on the reference, " << compared << " backend runs compared, " << skipped
                         << " (case, backend) pairs skipped as unsupported");
}

}  // namespace mt::optest
