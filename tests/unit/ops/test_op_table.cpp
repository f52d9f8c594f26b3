// The op table (lib/ops/op_table.inc) against every list that still names ops on its own: the
// registry's schemas, the reference, cpu, cpu int8 and vulkan kernel tables (function pointers
// that live in the backends), and the kernels the quantizer's roles need. A name in one of them
// that the table lacks, or a kernel the table claims that the backend does not have, fails here
// with the op and the list named.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "kernels/cpu/plan/kernel_table.h"
#include "kernels/reference/reference.h"
#include "lib/ops/op_table.h"
#include "lib/ops/registry.h"
#ifdef MT_HAVE_VULKAN_BACKEND
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

// Both directions, each difference its own failure naming the op.
void check_same(const std::string& what, const Names& in_backend, const Names& in_table) {
  for (const auto& op : in_backend) {
    if (find_op_info(op) == nullptr)
      FAIL_CHECK(what << " names '" << op << "', which is not a line of lib/ops/op_table.inc");
    else if (in_table.count(op) == 0)
      FAIL_CHECK(what << " has '" << op << "', but its column in lib/ops/op_table.inc does not say so");
  }
  for (const auto& op : in_table)
    if (in_backend.count(op) == 0)
      FAIL_CHECK("lib/ops/op_table.inc says " << what << " has '" << op << "', but it does not");
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
  CHECK(families.size() == static_cast<size_t>(OpFamily::quant) + 1);
  CHECK(find_op_info("no_such_op") == nullptr);
  CHECK(family_name(find_op_info("conv2d")->family) == "conv");
  CHECK(family_name(find_op_info("pad")->family) == "resize");
}

TEST_CASE("op table: the registry holds a schema for exactly the table's ops") {
  Names schemas;
  for (const OpSchema* schema : all_ops()) schemas.emplace(schema->name);
  check_same("the op registry (lib/ops/ops_<family>.cpp)", schemas, table_ops());
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
  check_same("the reference backend (KernelTable::add)", Names(floats.begin(), floats.end()),
             claimed_by(op_kernels::reference));
  check_same("the reference backend's int8 kernels (KernelTable::add_int8)", Names(int8s.begin(), int8s.end()),
             claimed_by(op_kernels::reference_int8));
}

TEST_CASE("op table: the cpu backend's kernels") {
  check_same("the cpu backend (kKernels)", names_of(cpu::cpu_kernels()), claimed_by(op_kernels::cpu));
  check_same("the cpu backend's int8 kernels (kInt8Kernels)", names_of(cpu::cpu_int8_kernels()),
             claimed_by(op_kernels::cpu_int8));
}

#ifdef MT_HAVE_VULKAN_BACKEND
TEST_CASE("op table: the vulkan backend's kernels") {
  check_same("the vulkan backend (kKernels)", names_of(vulkan::vulkan_kernels()), claimed_by(op_kernels::vulkan));
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
