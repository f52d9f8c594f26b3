#include "kernels/cpu/engines/depthwise_pointwise.h"

#include "kernels/cpu/engines/pixel_shares.h"

namespace mt::cpu {

size_t depthwise_pointwise_scratch_bytes(const PackedConvShape& s, size_t threads) {
  const PixelShares shares(s, threads);
  return shares.parts * shares.share_elements(s.channels, sizeof(float)) * sizeof(float);
}

void depthwise_pointwise(const DepthwisePointwise& f, const PackedConvShape& s, const float* x, void* scratch,
                         size_t threads, float* y, const float* residual, const PixelRangeTail& tail,
                         ThreadPool* pool) {
  // As many shares as the plan sized the scratch for (a pool of fewer threads runs several each).
  const PixelShares shares(s, threads);
  if (shares.pixels == 0) return;
  const size_t part_floats = shares.share_elements(s.channels, sizeof(float));
  shares.run(pool, [&](size_t part, const PixelShares::Share& share) {
    float* mid = static_cast<float*>(scratch) + part * part_floats;
    depthwise_conv_rows(f.depthwise, s, x, mid, f.depthwise_epilogue, share.row_begin, share.row_end);
    // The pointwise conv of the share's pixels, on this thread: the rows just written are in its cache.
    Epilogue e = f.pointwise_epilogue;
    if (residual != nullptr) e.residual = residual + share.begin * f.pointwise.n;
    packed_gemm(f.pointwise, share.end - share.begin, mid + share.skipped(s) * s.channels, s.channels,
                y + share.begin * f.pointwise.n, f.pointwise.n, e, nullptr);
    tail(share.begin, share.end);
  });
}

}  // namespace mt::cpu
