// The cpu and vulkan (quantized ones) backends must run every int8 case of the op harness (tests/ops/cases_int8.cpp)
// rather than skip it: the harness itself only compares the cases a backend accepts, so without
// this a refused int8 op would pass unnoticed. Cases marked "(reference only)" are exempt.
#include <doctest/doctest.h>

#include "lib/runtime/backend_registry.h"
#include "tests/ops/op_cases.h"
#include "tests/ops/op_runner.h"

namespace mt::optest {

namespace {

// `name` accepts every int8 case (dequantize's are a conversion, covered by the harness); with
// `quantized_only`, only those of quantized int8 (the plain integer arithmetic of the element-wise
// ops is the cpu's alone).
void check_accepts_int8_cases(const std::string& name, bool quantized_only) {
  const Backend* backend = find_backend(name);
  REQUIRE(backend != nullptr);
  size_t checked = 0;
  for (const auto& entry : case_table().all()) {
    const auto& op = entry.first;  // not a structured binding: clang 14 cannot capture one (CHECK_MESSAGE)
    const auto& cases = entry.second;
    if (op == "dequantize") continue;  // int8 in, float32 out: a conversion, covered by the harness
    for (const OpCase& c : cases) {
      if (c.inputs.empty() || c.inputs[0].dtype != DType::i8 || (quantized_only && !c.inputs[0].quant)) continue;
      if (c.name.find("(reference only)") != std::string::npos) continue;
      const CaseGraph built = build_case(op, c, 1);
      const auto reason = backend->check_node(built.graph, built.graph.nodes[0]);
      CHECK_MESSAGE(!reason, name << " refuses op " << op << ", case '" << c.name << "': " << reason.value_or(""));
      ++checked;
    }
  }
  CHECK(checked >= 15);
}

}  // namespace

TEST_CASE("the cpu backend accepts every int8 op case") { check_accepts_int8_cases("cpu", false); }

// check_node needs no device: this runs wherever the vulkan backend is built.
TEST_CASE("the vulkan backend accepts every int8 op case") {
  if (find_backend("vulkan") == nullptr) return;  // not built
  check_accepts_int8_cases("vulkan", true);
}

}  // namespace mt::optest
