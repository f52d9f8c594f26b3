#include "kernels/cpu/engines/depthwise_pointwise.h"

#include <algorithm>

#include "kernels/cpu/engines/pixel_shares.h"

namespace mt::cpu {

size_t depthwise_pointwise_scratch_bytes(const PackedConvShape& s, size_t threads) {
  return PixelShares(s, threads).scratch_elements(s.channels, sizeof(float)) * sizeof(float);
}

void depthwise_pointwise(const DepthwisePointwise& f, const PackedConvShape& s, const float* x, void* scratch,
                         size_t threads, float* y, const float* residual, const PixelRangeTail& tail, ThreadPool* pool) {
  // As many shares as the plan sized the scratch for (a pool of fewer threads runs several each).
  const PixelShares shares(s, threads);
  if (shares.pixels == 0) return;
  const size_t part_floats = shares.scratch_elements(s.channels, sizeof(float)) / shares.parts;
  auto run = [&](size_t part) {
    const PixelShares::Share share = shares.share(part);
    if (share.begin >= share.end) return;
    float* mid = static_cast<float*>(scratch) + part * part_floats;
    depthwise_conv_rows(f.depthwise, s, x, mid, f.depthwise_epilogue, share.row_begin, share.row_end);
    // The pointwise conv of the share's pixels, on this thread: the rows just written are in its cache.
    Epilogue e = f.pointwise_epilogue;
    if (residual != nullptr) e.residual = residual + share.begin * f.pointwise.n;
    packed_gemm(f.pointwise, share.end - share.begin, mid + share.skipped(s) * s.channels, s.channels,
                y + share.begin * f.pointwise.n, f.pointwise.n, e, nullptr);
    tail(share.begin, share.end);
  };
  if (shares.parts == 1) return run(0);
  using Run = decltype(run);
  parallelize(
      pool, [](void* context, size_t part) { (*static_cast<Run*>(context))(part); }, &run, shares.parts);
}

}  // namespace mt::cpu
