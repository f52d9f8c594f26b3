#include "lib/ops/op_table.h"

#include <algorithm>
#include <array>

#include "lib/ops/flops.h"

namespace mt {
namespace {

using namespace op_kernels;

// The flops column names functions of lib/ops/flops.h.
#define MT_OP(name, family, quant, flops, clamp, kernels) \
  OpInfo{#name, OpFamily::family, QuantRole::quant, flops, clamp, static_cast<uint8_t>(kernels)},
constexpr std::array kOps{
#include "lib/ops/op_table.inc"
};

#define MT_OP_FAMILY(family) std::string_view(#family),
constexpr std::array kFamilyNames{
#include "lib/ops/op_table.inc"
};

}  // namespace

std::span<const OpInfo> op_table() { return kOps; }

const OpInfo* find_op_info(std::string_view op) {
  auto it = std::find_if(kOps.begin(), kOps.end(), [&](const OpInfo& info) { return info.name == op; });
  return it == kOps.end() ? nullptr : &*it;
}

std::string_view family_name(OpFamily family) { return kFamilyNames.at(static_cast<size_t>(family)); }

}  // namespace mt
