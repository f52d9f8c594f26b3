#include "kernels/cpu/engines/pointwise_depthwise.h"

#include <algorithm>

#include "kernels/cpu/engines/pixel_shares.h"  // boundary_rows_pay

namespace mt::cpu {

namespace {

// Input rows one output row reads: the ring's size (dilation 1).
size_t ring_slots(const PackedConvShape& s) { return s.kernel_h; }

size_t ring_bytes(const PackedConvShape& s) {
  return (depthwise_ring_floats(s, ring_slots(s)) * sizeof(float) + 63) / 64 * 64;
}

// A part's scratch: its ring, then with a projection one depthwise output row.
size_t part_bytes(const PackedConvShape& s, bool project) {
  return ring_bytes(s) + (project ? (s.out_w * s.channels * sizeof(float) + 63) / 64 * 64 : 0);
}

size_t parts_of(const PackedConvShape& s, size_t threads) {
  return std::max<size_t>(1, std::min(threads, s.n * s.out_h));
}

}  // namespace

bool pointwise_depthwise_pays(const PackedConvShape& s, size_t threads) {
  return s.n * s.h * s.w * s.channels * sizeof(float) >= (size_t{2} << 20) && boundary_rows_pay(s, threads);
}

size_t pointwise_depthwise_scratch_bytes(const PackedConvShape& s, size_t threads, bool project) {
  return parts_of(s, threads) * part_bytes(s, project);
}

void pointwise_depthwise(const PointwiseDepthwise& f, const PackedConvShape& s, const float* x, void* scratch,
                         size_t threads, float* y, const float* residual, ThreadPool* pool) {
  const size_t rows = s.n * s.out_h;
  if (rows == 0) return;
  // As many parts as the plan sized the scratch for (a pool of fewer threads runs several each).
  const size_t parts = parts_of(s, threads), slots = ring_slots(s), k = f.pointwise.k;
  const bool project = f.project.panels != nullptr;
  const size_t out_channels = project ? f.project.n : s.channels;
  auto run = [&](size_t part) {
    char* mine = static_cast<char*>(scratch) + part * part_bytes(s, project);
    float* ring = reinterpret_cast<float*>(mine);
    float* row = project ? reinterpret_cast<float*>(mine + ring_bytes(s)) : nullptr;  // the depthwise output row
    size_t next = 0;  // the ring holds input rows g < next (counted n * h + iy), the last `slots` of them
    for (size_t r = rows * part / parts; r < rows * (part + 1) / parts; ++r) {
      const size_t n = r / s.out_h, oy = r % s.out_h;
      const int64_t top = static_cast<int64_t>(oy * s.stride_h) - s.pad_top;
      const auto first = static_cast<size_t>(std::max<int64_t>(0, top));
      const auto last = static_cast<size_t>(
          std::min<int64_t>(static_cast<int64_t>(s.h), top + static_cast<int64_t>(s.kernel_h)));  // rows read
      // The expanded rows this output row reads that the ring lacks, in order.
      for (size_t g = std::max(next, n * s.h + first); g < n * s.h + last; ++g)
        packed_gemm(f.pointwise, s.w, x + g * s.w * k, k, ring + g % slots * s.w * s.channels, s.channels,
                    f.pointwise_epilogue, nullptr);
      next = std::max(next, n * s.h + last);
      float* out = y + r * s.out_w * out_channels;
      depthwise_conv_ring_row(f.depthwise, s, {.data = ring, .slots = slots}, project ? row : out, f.depthwise_epilogue,
                              r);
      if (!project) continue;
      Epilogue e = f.project_epilogue;  // the projection of the row just computed, from this core's cache
      if (residual != nullptr) e.residual = residual + r * s.out_w * out_channels;
      packed_gemm(f.project, s.out_w, row, s.channels, out, out_channels, e, nullptr);
    }
  };
  parallel_for(pool, parts, run);
}

}  // namespace mt::cpu
