// The option matrix of the op harness, declared once: every way of planning a backend that changes
// which kernels run a case (threads, the cpu kernel paths, prepacked weights, vulkan's precision).
// test_ops.cpp runs every case in every variant that applies to its op and compares it with the
// reference backend.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "lib/runtime/backend.h"
#include "tests/ops/op_cases.h"

namespace mt::optest {

struct Variant {
  std::string name;     // in messages: "cpu, 2 threads", "vulkan fp16, prepacked"
  std::string backend;  // a backend_names() entry; a variant of a backend not built is left out
  PlanOptions options;
  // Run the backend's prepacked form of the case graph (Backend::prepack with these options).
  std::optional<PrepackOptions> prepack;
  // The ops whose kernels this variant changes; empty: every op. Re-running kernels that another
  // variant already runs the same way would only cost time (lavapipe is slow).
  std::set<std::string, std::less<>> ops;
  // Only the cases whose first input is quantized int8 (a variant that changes int8 kernels only).
  bool int8_cases_only = false;
  // Per-op tolerances replacing the cases' own (vulkan fp16); null: the case's OpCase::tolerance.
  const std::map<std::string, double, std::less<>>* tolerances = nullptr;

  bool applies_to(std::string_view op) const { return ops.empty() || ops.count(op) != 0; }
  bool applies_to(std::string_view op, const OpCase& c) const {
    return applies_to(op) &&
           (!int8_cases_only || (!c.inputs.empty() && c.inputs[0].dtype == DType::i8 && c.inputs[0].quant));
  }
  // The allowed error of a float output of `op` (OpCase::tolerance's meaning); nullopt when the
  // variant has a tolerance table without `op`, which the harness reports as a failure.
  std::optional<double> tolerance(std::string_view op, const OpCase& c) const;
};

// The matrix, in the order the harness runs it.
const std::vector<Variant>& option_matrix();

}  // namespace mt::optest
