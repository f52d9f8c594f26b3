// Ops that only relabel bytes: reshape, flatten, squeeze, unsqueeze, identity and transpose
// produce no step at all. The output views the input's buffer in a layout that keeps every
// byte in place (an NHWC tensor flattened after global pooling is already row-major); only a
// reshape that regroups dims across a layout change reorders its input first (once).
#include <numeric>

#include "kernels/cpu/plan/op_util.h"
#include "kernels/cpu/ops/ops.h"

namespace mt::cpu {

std::optional<std::string> check_reshape(const Graph&, const Node&) { return std::nullopt; }

void plan_reshape(NodeContext& c) {
  const Value x = c.input(0);
  const Shape& out_shape = c.output_info(0).shape;
  if (auto layout = reshape_layout(x.shape, x.layout, out_shape)) {
    c.alias(0, x, *layout);
    return;
  }
  // The bytes must move once. A 4-D result is wanted channels-last by the convolutions that
  // usually follow (the channel shuffle of ShuffleNet): reorder the input into the layout that
  // makes the output NHWC, if one exists; otherwise make both row-major.
  if (out_shape.size() == 4) {
    if (auto in_layout = reshape_layout(out_shape, nhwc_layout(), x.shape)) {
      c.alias(0, c.input(0, *in_layout), nhwc_layout());
      return;
    }
  }
  c.alias(0, c.input(0, identity_layout(x.shape.size())), identity_layout(out_shape.size()));
}

std::optional<std::string> check_transpose(const Graph&, const Node&) { return std::nullopt; }

void plan_transpose(NodeContext& c) {
  const Value x = c.input(0);
  std::vector<int> perm = attr_int_list(c.node(), "perm");
  if (perm.empty()) {
    perm.resize(x.shape.size());
    std::iota(perm.rbegin(), perm.rend(), 0);
  }
  c.alias(0, x, transpose_layout(x.layout, perm));
}

}  // namespace mt::cpu
