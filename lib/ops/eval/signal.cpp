// Reference kernels of the signal family: adapters from a node to lib/ops/signal_loops.h, the
// loops the cpu backend runs too.
#include "lib/ops/eval/kernel_util.h"
#include "lib/ops/eval/reference.h"
#include "lib/ops/registry.h"
#include "lib/ops/signal_loops.h"

namespace mt::reference {
namespace {

void dft_kernel(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  const Shape& x = in[0].info->shape;
  const auto axis =
      static_cast<size_t>(attr_int(node, "axis") < 0 ? attr_int(node, "axis") + static_cast<int64_t>(x.size()) - 1
                                                     : attr_int(node, "axis"));
  const int64_t length = attr_int(node, "length") != 0 ? attr_int(node, "length") : x[axis];
  const DftParams params = dft_params(x, axis, length, attr_int(node, "onesided") != 0, attr_int(node, "inverse") != 0);
  dft(params, in[0].as<float>(), out[0].as<float>(), 0, params.outer * params.inner);
}

void reverse_sequence_kernel(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  const Shape& x = in[0].info->shape;
  ReverseSequenceParams params;
  params.batch_major = attr_int(node, "batch_axis") == 0;
  params.steps = x[params.batch_major ? 1 : 0];
  params.batch = x[params.batch_major ? 0 : 1];
  for (size_t d = 2; d < x.size(); ++d) params.inner *= x[d];
  params.element = dtype_size(in[0].info->dtype);
  reverse_sequence(params, node.name, in[0].data, {in[1].data, in[1].info->dtype == DType::i64}, out[0].data);
}

}  // namespace

void register_signal_kernels(KernelTable& table) {
  table.add("dft", dft_kernel);
  table.add("reverse_sequence", reverse_sequence_kernel);
}

}  // namespace mt::reference
