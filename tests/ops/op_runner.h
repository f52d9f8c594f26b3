// Runs one op case: builds the one-node graph with seeded random inputs and constants, runs it
// on a backend, and compares two backends' outputs element by element.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lib/io/npy.h"
#include "lib/runtime/backend.h"
#include "tests/ops/op_cases.h"

namespace mt::optest {

// The graph of a case (validated) and the data of its non-constant inputs, in graph.inputs order.
struct CaseGraph {
  Graph graph;
  std::vector<HostArray> inputs;
};
CaseGraph build_case(const std::string& op, const OpCase& c, uint64_t seed);
// The seed of a case's random data: a hash of "op/case", so every backend and every run of a
// case sees the same inputs and weights.
uint64_t case_seed(const std::string& op, const OpCase& c);
// The ops MT_OPS names (comma-separated) to run only those; empty when it is unset: every op.
std::set<std::string> selected_ops();

// Plans and runs the graph on `backend`; the outputs in graph.outputs order.
std::vector<HostArray> run_case(const Backend& backend, const CaseGraph& built, int threads);
// The same with every plan option (threads, the cpu kernel paths, vulkan's precision).
std::vector<HostArray> run_case(const Backend& backend, const CaseGraph& built, const PlanOptions& options);

// True when MT_REQUIRE_VULKAN=1 (scripts/test.sh, CI): a missing Vulkan device fails the tests
// instead of skipping them.
bool vulkan_required();

// The first element where `actual` and `expected` differ beyond the tolerance (floats:
// max(1, range of expected) * tolerance; other dtypes: integer_tolerance), described for the
// report; nullopt when they agree.
std::optional<std::string> first_mismatch(const HostArray& actual, const HostArray& expected, double tolerance,
                                          double integer_tolerance);

}  // namespace mt::optest
