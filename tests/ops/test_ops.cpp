// The op harness: every op of the registry, every case of tests/ops/cases_*.cpp, on every built
// backend in every variant of the option matrix (tests/ops/option_matrix.cpp: threads, the cpu
// kernel paths, prepacked weights, vulkan fp16), compared with the reference backend. An op
// without cases fails, so new ops cannot land untested; a backend that must run every op (cpu)
// fails when it accepts no case of one.
//
// A backend this machine cannot run (vulkan without a device, or without fp16) is skipped, saying
// why, unless MT_REQUIRE_VULKAN=1 (scripts/test.sh, CI), where that is a failure.
// MT_OPS=conv2d,resize restricts the run to some ops; MT_OPS_VERBOSE=1 lists skipped cases.
#include <doctest/doctest.h>

#include <cstdlib>
#include <map>
#include <set>

#include "kernels/reference/reference_backend.h"
#include "lib/ops/registry.h"
#include "lib/runtime/backend_registry.h"
#include "tests/ops/option_matrix.h"
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

struct RunnableVariant {
  const Variant* variant;
  const Backend* backend;
};

// The variants of the matrix this machine runs: their backend is built and plans an empty graph
// with their options (vulkan needs a device, and one with fp16 for the fp16 variants).
std::vector<RunnableVariant> runnable_variants() {
  std::vector<RunnableVariant> runnable;
  for (const Variant& variant : option_matrix()) {
    const Backend* backend = find_backend(variant.backend);
    if (backend == nullptr) continue;  // not built
    try {
      backend->plan(Graph{}, variant.options);
    } catch (const Error& e) {
      if (variant.backend == "vulkan" && vulkan_required())
        FAIL_CHECK("MT_REQUIRE_VULKAN=1 but " << variant.name << " cannot run: " << std::string(e.what()));
      else
        MESSAGE("SKIP: " << variant.name << " not tested: " << std::string(e.what()));
      continue;
    }
    runnable.push_back({&variant, backend});
  }
  return runnable;
}

// The case graph as `variant` runs it: the backend's prepacked form when the variant asks for one.
Graph variant_graph(const Variant& variant, const Backend& backend, const Graph& graph) {
  if (!variant.prepack) return graph;
  Graph packed = graph;
  backend.prepack(packed, *variant.prepack);
  packed.validate();
  return packed;
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

TEST_CASE("every backend matches the reference on every op case, in every variant of the option matrix") {
  const std::set<std::string> only = selected_ops();
  const bool verbose = std::getenv("MT_OPS_VERBOSE") != nullptr;
  const auto reference = make_reference_backend();
  const std::vector<RunnableVariant> variants = runnable_variants();

  size_t compared = 0, skipped = 0, ran = 0;
  std::map<std::string, size_t> compared_by_variant;
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

      std::map<const Backend*, std::optional<std::string>> refusals;  // check_node, once per backend
      for (const RunnableVariant& runnable : variants) {
        const Variant* variant = runnable.variant;
        const Backend* backend = runnable.backend;
        if (!variant->applies_to(op, c)) continue;
        auto refusal = refusals.find(backend);
        if (refusal == refusals.end())
          refusal = refusals.emplace(backend, backend->check_node(built.graph, built.graph.nodes[0])).first;
        if (refusal->second) {
          ++skipped;
          if (verbose) MESSAGE(variant->name << " skips " << where << ": " << *refusal->second);
          continue;
        }
        ++accepted[std::string(backend->name())];
        const std::optional<double> tolerance = variant->tolerance(op, c);
        if (!tolerance) {
          FAIL_CHECK(variant->name << ", " << where << ": it runs op " << op
                                   << " but the option matrix (tests/ops/option_matrix.cpp) has no tolerance for it");
          continue;
        }
        std::vector<HostArray> actual;
        try {
          const CaseGraph run{variant_graph(*variant, *backend, built.graph), built.inputs};
          actual = run_case(*backend, run, variant->options);
        } catch (const std::exception& e) {
          FAIL_CHECK(variant->name << ", " << where << ": " << std::string(e.what()));
          continue;
        }
        ++compared;
        ++compared_by_variant[variant->name];
        for (size_t o = 0; o < expected.size(); ++o)
          if (auto mismatch = first_mismatch(actual[o], expected[o], *tolerance, c.integer_tolerance))
            FAIL_CHECK(variant->name << ", " << where << ", output " << o << ": " << *mismatch);
      }
    }
    for (const auto& name : backend_names())
      if (kMustRunEveryOp.count(name) && accepted[name] == 0)
        FAIL_CHECK("backend '" << name << "' accepts none of the " << cases.size() << " cases of op '" << op << "'");
  }
  MESSAGE("op harness: " << ran << " cases on the reference, " << compared << " backend runs compared, " << skipped
                         << " (case, variant) pairs skipped as unsupported");
  for (const RunnableVariant& runnable : variants)
    MESSAGE("  " << runnable.variant->name << ": " << compared_by_variant[runnable.variant->name] << " runs");
}

}  // namespace mt::optest
