// Reference kernels of the sample family: adapters from a node to lib/ops/sample_loops.h, the
// loops the cpu backend runs too.
#include "lib/ops/eval/kernel_util.h"
#include "lib/ops/eval/reference.h"
#include "lib/ops/registry.h"
#include "lib/ops/sample_loops.h"

namespace mt::reference {
namespace {

IndexData index_data(const ConstView& view) { return {view.data, view.info->dtype == DType::i64}; }

void grid_sample_kernel(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  const GridSampleParams params = grid_sample_params(node, in[0].info->shape, in[1].info->shape);
  grid_sample_rows(params, in[0].as<float>(), in[1].as<float>(), out[0].as<float>(), 0,
                   params.batch * params.out_height);
}

void roi_align_kernel(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  const RoiAlignParams params = roi_align_params(node, in[0].info->shape, in[1].info->shape[0]);
  roi_align_check(params, node.name, in[1].as<float>(), index_data(in[2]));
  roi_align_rois(params, in[0].as<float>(), in[1].as<float>(), index_data(in[2]), out[0].as<float>(), 0, params.rois);
}

void max_unpool_kernel(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  MaxUnpoolParams params{in[0].info->numel(), attr_ints(node, "index_shape"), out[0].info->shape};
  if (params.index_shape.empty()) params.index_shape = params.out_shape;
  max_unpool(params, node.name, in[0].as<float>(), index_data(in[1]), out[0].as<float>());
}

}  // namespace

void register_sample_kernels(KernelTable& table) {
  table.add("grid_sample", grid_sample_kernel);
  table.add("roi_align", roi_align_kernel);
  table.add("max_unpool", max_unpool_kernel);
}

}  // namespace mt::reference
