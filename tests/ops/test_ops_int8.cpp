// The cpu backend must run every int8 case of the op harness (tests/ops/cases_int8.cpp) rather
// than skip it: the harness itself only compares the cases a backend accepts, so without this a
// refused int8 op would pass unnoticed. Cases marked "(reference only)" are exempt.
#include <doctest/doctest.h>

#include "lib/runtime/backend_registry.h"
#include "tests/ops/op_cases.h"
#include "tests/ops/op_runner.h"

namespace mt::optest {

TEST_CASE("the cpu backend accepts every int8 op case") {
  const Backend* cpu = find_backend("cpu");
  REQUIRE(cpu != nullptr);
  size_t checked = 0;
  for (const auto& entry : case_table().all()) {
    const auto& op = entry.first;  // not a structured binding: clang 14 cannot capture one (CHECK_MESSAGE)
    const auto& cases = entry.second;
    if (op == "dequantize") continue;  // int8 in, float32 out: a conversion, covered by the harness
    for (const OpCase& c : cases) {
      if (c.inputs.empty() || c.inputs[0].dtype != DType::i8) continue;
      if (c.name.find("(reference only)") != std::string::npos) continue;
      const CaseGraph built = build_case(op, c, 1);
      const auto reason = cpu->check_node(built.graph, built.graph.nodes[0]);
      CHECK_MESSAGE(!reason, "cpu refuses op " << op << ", case '" << c.name << "': " << reason.value_or(""));
      ++checked;
    }
  }
  CHECK(checked >= 15);
}

}  // namespace mt::optest
