// How a depthwise conv + pointwise conv step (depthwise_pointwise.h, int8_vnni.h) splits its output
// pixels among threads: even shares of the pixels (counted over all images), each with the
// depthwise conv's output rows that hold them. A row cut between two shares is computed by both,
// into each one's own scratch.
#pragma once

#include <algorithm>
#include <cstddef>

#include "kernels/cpu/engines/packed_gemm.h"  // PackedConvShape
#include "kernels/cpu/plan/thread_pool.h"

namespace mt::cpu {

// Whether a step that computes a conv's input rows itself (an expanding conv inside the depthwise
// conv after it: pointwise_depthwise.h, int8_vnni.h), each of `threads` threads for a contiguous
// range of output rows, computes at most an eighth more input rows than its own: the kernel_h -
// stride_h rows at a boundary between two ranges are computed by both. Dilation 1 only.
inline bool boundary_rows_pay(const PackedConvShape& s, size_t threads) {
  const size_t rows = s.n * s.out_h;
  if (s.dilation_h != 1 || rows == 0) return false;
  const size_t parts = std::max<size_t>(1, std::min(threads, rows)), own = (rows + parts - 1) / parts * s.stride_h;
  const size_t shared = s.kernel_h > s.stride_h ? s.kernel_h - s.stride_h : 0;
  return parts == 1 || shared * 8 <= own;
}

struct PixelShares {
  struct Share {
    size_t begin = 0, end = 0;          // output pixels
    size_t row_begin = 0, row_end = 0;  // the depthwise output rows holding them
    // Pixels of row_begin before `begin`: where the share starts in its scratch rows.
    size_t skipped(const PackedConvShape& s) const { return begin - row_begin * s.out_w; }
  };

  PixelShares(const PackedConvShape& s, size_t threads)
      : pixels(s.n * s.out_h * s.out_w), parts(std::max<size_t>(1, std::min(threads, pixels))), out_w_(s.out_w) {}

  Share share(size_t part) const {
    Share r{.begin = pixels * part / parts, .end = pixels * (part + 1) / parts};
    if (out_w_ > 0 && r.begin < r.end) {
      r.row_begin = r.begin / out_w_;
      r.row_end = (r.end + out_w_ - 1) / out_w_;
    }
    return r;
  }

  // Scratch elements of `size` bytes for one share's rows of `channels` values per pixel (each part's
  // scratch is this many, parts of them in all): the rows of the largest share, rounded up to 64
  // bytes, plus 64 bytes that the int8 GEMM's 4-byte steps may read past a share's last row.
  size_t share_elements(size_t channels, size_t size) const {
    const size_t most = out_w_ == 0 ? 0 : ((pixels + parts - 1) / parts + out_w_ - 1) / out_w_ + 1;  // rows
    const size_t per_64 = 64 / size;
    return ((most * out_w_ * channels + per_64 - 1) / per_64 + 1) * per_64;
  }

  // fn(part, share) for every non-empty share: across the pool's threads, or on this one alone.
  template <typename Fn>
  void run(ThreadPool* pool, const Fn& fn) const {
    auto one = [&](size_t part) {
      const Share s = share(part);
      if (s.begin < s.end) fn(part, s);
    };
    parallel_for(pool, parts, one);
  }

  size_t pixels, parts;

 private:
  size_t out_w_;
};

}  // namespace mt::cpu
