// The op table (lib/ops/op_table.inc) against every list that still names ops on its own: the
// registry's schemas, the reference, cpu, cpu int8 and vulkan kernel tables (function pointers
// that live in the backends), vulkan's element-wise op codes (shaders/op_codes.h), and the kernels
// the quantizer's roles need. A name in one of them
// that the table lacks, or a kernel the table claims that the backend does not have, fails here
// with the op and the list named.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "kernels/cpu/plan/kernel_table.h"
#include "lib/ops/eval/reference.h"
#include "lib/ops/op_table.h"
#include "lib/ops/registry.h"
#ifdef MT_HAVE_VULKAN_BACKEND
#include "kernels/vulkan/ops/ops.h"
#include "kernels/vulkan/plan/kernel_table.h"
#endif

using namespace mt;

namespace {

using Names = std::set<std::string, std::less<>>;

Names table_ops() {
  Names names;
  for (const OpInfo& info : op_table()) names.emplace(info.name);
  return names;
}

Names claimed_by(uint8_t backend) {
  Names names;
  for (const OpInfo& info : op_table())
    if (info.has_kernel(backend)) names.emplace(info.name);
  return names;
}

template <typename Kernels>
Names names_of(const Kernels& kernels) {
  Names names;
  for (const auto& kernel : kernels) names.emplace(kernel.op);
  return names;
}

// `list` must hold exactly the ops of `expected`, which `source` describes: each difference is its
// own failure naming the op and both sides.
void check_same(const std::string& list, const Names& listed, const std::string& source, const Names& expected) {
  for (const auto& op : listed) {
    if (find_op_info(op) == nullptr)
      FAIL_CHECK(list << " names '" << op << "', which is not a line of lib/ops/op_table.inc");
    else if (expected.count(op) == 0)
      FAIL_CHECK(list << " has '" << op << "', but " << source << " does not");
  }
  for (const auto& op : expected)
    if (listed.count(op) == 0) FAIL_CHECK(source << " has '" << op << "', but " << list << " does not");
}

// `listed` against the ops whose kernels column has `backend` (spelled `column` there).
void check_backend(const std::string& list, const Names& listed, uint8_t backend, const std::string& column) {
  check_same(list, listed, "lib/ops/op_table.inc (kernels column, " + column + ")", claimed_by(backend));
}

}  // namespace

TEST_CASE("op table: one line per op, names unique, every family used") {
  Names names;
  std::set<OpFamily> families;
  for (const OpInfo& info : op_table()) {
    INFO("op ", std::string(info.name));
    CHECK(names.emplace(info.name).second);
    CHECK(find_op_info(info.name) == &info);
    families.insert(info.family);
    CHECK_FALSE(family_name(info.family).empty());
  }
  constexpr size_t kFamilies = 0
#define MT_OP_FAMILY(family) +1
#include "lib/ops/op_table.inc"
      ;
  CHECK(families.size() == kFamilies);
  CHECK(find_op_info("no_such_op") == nullptr);
  CHECK(family_name(find_op_info("conv2d")->family) == "conv");
  CHECK(family_name(find_op_info("pad")->family) == "resize");
}

TEST_CASE("op table: the registry holds a schema for exactly the table's ops") {
  Names schemas;
  for (const OpSchema* schema : all_ops()) schemas.emplace(schema->name);
  check_same("the op registry (lib/ops/ops_<family>.cpp)", schemas, "lib/ops/op_table.inc", table_ops());
}

TEST_CASE("op table: the clamp column matches the schemas' act_min/act_max") {
  for (const OpInfo& info : op_table()) {
    INFO("op ", std::string(info.name));
    const OpSchema* schema = find_op(info.name);
    REQUIRE(schema != nullptr);
    CHECK((schema->find_attr("act_min") != nullptr) == info.clamp);
    CHECK((schema->find_attr("act_max") != nullptr) == info.clamp);
  }
}

TEST_CASE("op table: the reference backend's kernels") {
  const auto floats = reference::kernel_ops(false), int8s = reference::kernel_ops(true);
  check_backend("the reference backend (KernelTable::add)", Names(floats.begin(), floats.end()),
                op_kernels::reference, "reference");
  check_backend("the reference backend's int8 kernels (KernelTable::add_int8)", Names(int8s.begin(), int8s.end()),
                op_kernels::reference_int8, "reference_int8");
}

TEST_CASE("op table: the cpu backend's kernels") {
  check_backend("the cpu backend (kKernels)", names_of(cpu::cpu_kernels()), op_kernels::cpu, "cpu");
  check_backend("the cpu backend's int8 kernels (kInt8Kernels)", names_of(cpu::cpu_int8_kernels()),
                op_kernels::cpu_int8, "cpu_int8");
}

#ifdef MT_HAVE_VULKAN_BACKEND
TEST_CASE("op table: the vulkan backend's kernels") {
  check_backend("the vulkan backend (kKernels)", names_of(vulkan::vulkan_kernels()), op_kernels::vulkan, "vulkan");
  check_backend("the vulkan backend's int8 kernels (kInt8Kernels)", names_of(vulkan::vulkan_int8_kernels()),
                op_kernels::vulkan_int8, "vulkan_int8");
}

// The ops vulkan plans with unary.comp or binary.comp are the ops with a code in shaders/op_codes.h
// (codes of variants, such as gelu_tanh, name no op).
TEST_CASE("op table: shaders/op_codes.h has a code for each op vulkan runs with unary.comp or binary.comp") {
  Names unary_codes, binary_codes, unary_planned, binary_planned;
#define MT_UNARY_OP(op, CODE, value) \
  if (find_op_info(#op) != nullptr) unary_codes.emplace(#op);
#define MT_BINARY_OP(op, CODE, value) \
  if (find_op_info(#op) != nullptr) binary_codes.emplace(#op);
#include "shaders/op_codes.h"
  for (const auto& kernel : vulkan::vulkan_kernels()) {
    if (kernel.plan == vulkan::plan_unary) unary_planned.emplace(kernel.op);
    if (kernel.plan == vulkan::plan_binary) binary_planned.emplace(kernel.op);
  }
  check_same("shaders/op_codes.h (MT_UNARY_OP)", unary_codes, "vulkan's kKernels (plan_unary)", unary_planned);
  check_same("shaders/op_codes.h (MT_BINARY_OP)", binary_codes, "vulkan's kKernels (plan_binary)", binary_planned);
  CHECK(unary_codes.size() >= 20);
  CHECK(binary_codes.size() >= 8);
}
#endif

// lib/quant makes an int8 node of every int8_compute op and passes int8 through every
// int8_data_movement op; both must then run on the reference (calibration, the oracle) and the
// cpu backend. An int8 kernel for an op the quantizer never makes int8 would be dead code.
TEST_CASE("op table: the quantizer's roles have the int8 kernels they need, and only those") {
  for (const OpInfo& info : op_table()) {
    INFO("op ", std::string(info.name));
    switch (info.quant) {
      case QuantRole::int8_compute:
        CHECK(info.has_kernel(op_kernels::reference_int8));
        CHECK(info.has_kernel(op_kernels::cpu_int8));
        break;
      case QuantRole::int8_data_movement:
        // The reference moves bytes of any dtype with its float kernel.
        CHECK_FALSE(info.has_kernel(op_kernels::reference_int8));
        CHECK(info.has_kernel(op_kernels::reference));
        CHECK(info.has_kernel(op_kernels::cpu_int8));
        break;
      case QuantRole::float_only:
        CHECK_FALSE(info.has_kernel(op_kernels::reference_int8));
        CHECK_FALSE(info.has_kernel(op_kernels::cpu_int8));
        break;
    }
  }
}
