// The u8 x s8 GEMM of int8_vnni.h. The micro-kernel computes up to 8 rows by one 32-column panel:
// per step of 4 k values it loads the panel's 32x4 weights (two registers) once and, per row,
// broadcasts 4 input bytes into two vpdpbusd, 64 multiply-adds each. The input was flipped to
// unsigned once per layer (int8_flip): flipping each broadcast instead (one vpxord) cost 20% of
// the kernel's throughput on ResNet18's 3x3 shapes (CPU time, 400 -> 490 GOPS without it). A convolution is the same GEMM whose rows are gathered tap by
// tap from the NHWC input (an indirect GEMM: no im2col copy), as packed_gemm.cpp does for fp32.
#include <algorithm>
#include <array>
#include <cstring>

#include "kernels/cpu/engines/int8_vnni.h"
#include "kernels/cpu/engines/int8_vnni_requant.h"
#include "kernels/cpu/plan/op_util.h"
#include "kernels/cpu/plan/parallel.h"
#include "lib/core/error.h"

namespace mt::cpu {

constexpr size_t kPanel = 32;    // columns per panel
constexpr size_t kRows = 8;      // rows per micro-kernel call
constexpr size_t kMaxTaps = 64;       // kernel taps of int8_conv (7x7 and smaller)
constexpr size_t kMaxGathered = 512;  // bytes of a gathered row (taps x channels under 16 channels)
// Micro-kernel blocks per work unit of a gathered conv: its rows are all copied before the first
// block reads them, so the copies have left the store buffer when read (ResNet's 7x7 stem 563 ->
// 516 us, MobileNet's 3x3 stem 177 -> 162 us, against gathering 8 rows at a time).
constexpr size_t kBatch = 8;
// Blocks of rows up to which a one-thread GEMM runs panel by panel (run_blocks): 64 rows, for
// panels of up to 16 KiB (half of L1, the rest for A's rows; k <= 512).
constexpr size_t kPanelMajorBlocks = 8, kPanelMajorBytes = size_t{16} << 10;

bool int8_vnni_supported() {
#if defined(__x86_64__)
  static const bool supported = __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw") &&
                                __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vbmi");
  return supported;
#else
  return false;
#endif
}

namespace {
size_t round4(size_t v) { return (v + 3) / 4 * 4; }
size_t panels_of(size_t n) { return (n + kPanel - 1) / kPanel; }
}  // namespace

size_t int8_gemm_bytes(size_t taps, size_t channels, size_t n) {
  const size_t columns = panels_of(n) * kPanel;
  return columns * taps * round4(channels) + columns * (sizeof(int32_t) + sizeof(float));
}

PackedInt8Gemm pack_int8_gemm(void* memory, const int8_t* w, const int32_t* bias, const float* multipliers,
                              size_t taps, size_t channels, size_t n, int32_t x_zero, Int8Output out) {
  const size_t k = taps * round4(channels), columns = panels_of(n) * kPanel;
  std::memset(memory, 0, int8_gemm_bytes(taps, channels, n));
  auto* panels = static_cast<int8_t*>(memory);
  auto* packed_bias = reinterpret_cast<int32_t*>(panels + columns * k);
  auto* packed_multipliers = reinterpret_cast<float*>(packed_bias + columns);
  for (size_t j = 0; j < n; ++j) {
    int8_t* panel = panels + (j / kPanel) * k * kPanel;
    int64_t sum = 0;
    for (size_t t = 0; t < taps; ++t)
      for (size_t i = 0; i < channels; ++i) {
        const int8_t v = w[(j * taps + t) * channels + i];
        const size_t kk = t * round4(channels) + i;  // k index: [k / 4][column][k % 4]
        panel[(kk / 4 * kPanel + j % kPanel) * 4 + kk % 4] = v;
        sum += v;
      }
    // Modulo 2^32, as the kernel's int32 sums wrap: the result is exact wherever the reference's is.
    const int64_t folded = (bias != nullptr ? bias[j] : 0) - (128 + int64_t{x_zero}) * sum;
    packed_bias[j] = static_cast<int32_t>(static_cast<uint32_t>(folded));
    packed_multipliers[j] = multipliers[j];
  }
  return int8_gemm_view(memory, taps, channels, n, out);
}

PackedInt8Gemm int8_gemm_view(const void* memory, size_t taps, size_t channels, size_t n, Int8Output out) {
  const size_t k = taps * round4(channels), columns = panels_of(n) * kPanel;
  const auto* panels = static_cast<const int8_t*>(memory);
  const auto* bias = reinterpret_cast<const int32_t*>(panels + columns * k);
  return PackedInt8Gemm{.panels = panels,
                        .bias = bias,
                        .multipliers = reinterpret_cast<const float*>(bias + columns),
                        .taps = taps,
                        .k = k,
                        .n = n,
                        .out = out};
}

bool int8_conv_fits(size_t kernel_h, size_t kernel_w) { return kernel_h * kernel_w <= kMaxTaps; }

bool int8_conv_gathers(size_t kernel_h, size_t kernel_w, size_t channels) {
  const size_t taps = kernel_h * kernel_w;
  return taps > 1 && channels < 16 && (taps * channels + 3) / 4 * 4 <= kMaxGathered;
}

#if defined(__x86_64__)
MT_AVX512_INTRINSICS_BEGIN
namespace {

// Rows [0, R) of C's columns [0, 32) (stores masked by mask0/mask1) from one panel. Row r's k
// values come in `taps` runs of `steps` * 4 bytes, run t starting at rows[t * tap_stride + r]:
// unsigned (flipped) bytes, or with Flip int8 bytes that each broadcast flips. With Add, C is
// residual.add of the GEMM's result and residual.r (pointing at C's first element here).
template <size_t R, bool Add, bool Flip>
MT_VNNI_TARGET void micro_kernel(size_t taps, size_t tap_stride, size_t steps, const uint8_t* const* rows,
                                 const int8_t* panel, const int32_t* bias, const float* multipliers,
                                 const Int8Output& out, int8_t* c, size_t ldc, __mmask16 mask0, __mmask16 mask1,
                                 Int8Residual residual) {
  __m512i acc0[R], acc1[R];
  const __m512i bias0 = _mm512_loadu_si512(bias), bias1 = _mm512_loadu_si512(bias + 16);
#pragma GCC unroll 8
  for (size_t r = 0; r < R; ++r) {
    acc0[r] = bias0;
    acc1[r] = bias1;
  }
  const __m512i sign_bits = _mm512_set1_epi32(static_cast<int32_t>(0x80808080u));
  for (size_t t = 0; t < taps; ++t, rows += tap_stride) {
    const uint8_t* row[R];
#pragma GCC unroll 8
    for (size_t r = 0; r < R; ++r) row[r] = rows[r];
    for (size_t i = 0; i < steps; ++i) {
      const __m512i b0 = _mm512_loadu_si512(panel), b1 = _mm512_loadu_si512(panel + 64);
      panel += 4 * kPanel;
#pragma GCC unroll 8
      for (size_t r = 0; r < R; ++r) {
        int32_t four;
        std::memcpy(&four, row[r] + 4 * i, sizeof(four));
        __m512i x = _mm512_set1_epi32(four);
        if constexpr (Flip) x = _mm512_xor_si512(x, sign_bits);
        // acc += x (u8) . b (s8): vpdpbusd written out, because with the intrinsic GCC 12 copied
        // the 16 accumulators between registers every step (346 vmovdqa in this file, spills
        // too; 122 and none so): +17-30% on ResNet18's and MobileNetV2's shapes (CPU time).
        asm("vpdpbusd %2, %1, %0" : "+v"(acc0[r]) : "v"(x), "v"(b0));
        asm("vpdpbusd %2, %1, %0" : "+v"(acc1[r]) : "v"(x), "v"(b1));
      }
    }
  }
  const vnni::OutputVectors o = vnni::output_vectors(out);
  const __m512 m0 = _mm512_loadu_ps(multipliers), m1 = _mm512_loadu_ps(multipliers + 16);
  if constexpr (Add) {
    const vnni::AddVectors a = vnni::add_vectors(*residual.add);
#pragma GCC unroll 8
    for (size_t r = 0; r < R; ++r) {
      vnni::requantize_add_store(c + r * ldc, residual.r + r * ldc, mask0, acc0[r], m0, o, a);
      vnni::requantize_add_store(c + r * ldc + 16, residual.r + r * ldc + 16, mask1, acc1[r], m1, o, a);
    }
  } else {
    (void)residual;
#pragma GCC unroll 8
    for (size_t r = 0; r < R; ++r) {
      vnni::requantize_store(c + r * ldc, mask0, acc0[r], m0, o);
      vnni::requantize_store(c + r * ldc + 16, mask1, acc1[r], m1, o);
    }
  }
}

using MicroKernel = void (*)(size_t, size_t, size_t, const uint8_t* const*, const int8_t*, const int32_t*, const float*,
                             const Int8Output&, int8_t*, size_t, __mmask16, __mmask16, Int8Residual);
template <bool Add, bool Flip>
constexpr std::array<MicroKernel, kRows + 1> kernels_by_rows = {nullptr,
                                                                micro_kernel<1, Add, Flip>,
                                                                micro_kernel<2, Add, Flip>,
                                                                micro_kernel<3, Add, Flip>,
                                                                micro_kernel<4, Add, Flip>,
                                                                micro_kernel<5, Add, Flip>,
                                                                micro_kernel<6, Add, Flip>,
                                                                micro_kernel<7, Add, Flip>,
                                                                micro_kernel<8, Add, Flip>};
// [flip in the kernel][with a fused add][rows]
constexpr std::array<MicroKernel, kRows + 1> kKernels[2][2] = {
    {kernels_by_rows<false, false>, kernels_by_rows<true, false>},
    {kernels_by_rows<false, true>, kernels_by_rows<true, true>}};

// Panels per group: a group's weights (at most kGroupBytes, at least one panel) stay in cache
// while every block of rows passes over them.
constexpr size_t kGroupBytes = size_t{128} << 10;
// Work units per thread below which a unit takes one panel: the pool hands units out one at a
// time, and a layer ends when its slowest thread does (MobileNetV2's 7x7 layers: 7 blocks of rows
// x 5 panels in groups of 3 and 2 split 4 : 3 or worse between two threads).
constexpr size_t kUnitsPerThread = 8;

// C = requantize(A B + bias) over m rows, A's rows given by fill(r0, count, rows, scratch), which
// points rows[t * count + r] at row r0 + r's run of tap t, in place or copied into scratch
// (kBatch * kRows rows of kMaxGathered + 64 bytes): flipped bytes, or int8 ones with `flip`. Work units
// are (panel group, row block) pairs, group-major, as packed_gemm.cpp's run_blocks; a unit is
// `batch` (1 .. kBatch) micro-kernel blocks of rows.
template <typename Fill>
void run_blocks(const PackedInt8Gemm& w, size_t m, size_t batch, bool flip, const Fill& fill, int8_t* c, size_t ldc,
                ThreadPool* pool, Int8Residual residual) {
  const std::array<MicroKernel, kRows + 1>& kernels = kKernels[flip ? 1 : 0][residual.add != nullptr ? 1 : 0];
  const size_t micro_blocks = (m + kRows - 1) / kRows;
  const size_t block = micro_blocks == 0 ? kRows : (m + micro_blocks - 1) / micro_blocks;  // even blocks
  const size_t unit_rows = block * batch, row_blocks = (m + unit_rows - 1) / unit_rows;
  const size_t panels = panels_of(w.n), threads = thread_count(pool);
  // As many groups as the cache bound needs, of equal size (3 + 1 panels would give units of
  // unequal cost), or one panel per unit where units would be few.
  const size_t most = std::max<size_t>(1, kGroupBytes / std::max<size_t>(1, w.k * kPanel));  // panels in cache
  size_t groups = (panels + most - 1) / most;
  if (threads > 1 && groups * row_blocks < kUnitsPerThread * threads) groups = panels;
  const size_t group = groups == 0 ? 1 : (panels + groups - 1) / groups;
  const size_t steps = w.k / w.taps / 4;
  auto run_unit = [&](size_t unit) {
    const uint8_t* rows[kMaxTaps * kRows];
    alignas(64) uint8_t scratch[kBatch * kRows * (kMaxGathered + 64)];
    const size_t first = unit / row_blocks * group, u0 = unit % row_blocks * unit_rows;
    if (u0 >= m) return;  // even blocks can leave the last one empty
    const size_t unit_count = std::min(unit_rows, m - u0);
    fill(u0, unit_count, rows, scratch);
    for (size_t b = 0; b * block < unit_count; ++b) {
      const size_t r0 = u0 + b * block, count = std::min(block, m - r0);
      for (size_t panel = first; panel < std::min(panels, first + group); ++panel) {
        const size_t j0 = panel * kPanel, columns = std::min(kPanel, w.n - j0);
        const Int8Residual here{residual.add, residual.add != nullptr ? residual.r + r0 * ldc + j0 : nullptr};
        kernels[count](w.taps, unit_count, steps, rows + b * block, w.panels + panel * w.k * kPanel, w.bias + j0,
                       w.multipliers + j0, w.out, c + r0 * ldc + j0, ldc, low_lanes(columns),
                       low_lanes(columns > 16 ? columns - 16 : 0), here);
      }
    }
  };
  const size_t units = groups * row_blocks;
  // A plain GEMM of few rows on one thread (a 7x7 layer, or one thread's share of a depthwise +
  // pointwise step): panel by panel over every block of rows, so that each panel's weights come from
  // L2 once and stay in L1 for all the blocks, as A's rows do. Block by block, every block read all
  // the weights from L2 again (ShuffleNetV2's 232x232 1x1 convs on 25 pixels: 4 passes over 54 KiB).
  if ((threads <= 1 || units <= 1) && w.taps == 1 && batch == 1 && row_blocks <= kPanelMajorBlocks &&
      w.k * kPanel <= kPanelMajorBytes) {
    const uint8_t* rows[kPanelMajorBlocks * kRows];
    for (size_t b = 0; b < row_blocks; ++b) {
      const size_t r0 = b * block;
      if (r0 < m) fill(r0, std::min(block, m - r0), rows + b * kRows, nullptr);
    }
    for (size_t panel = 0; panel < panels; ++panel) {
      const size_t j0 = panel * kPanel, columns = std::min(kPanel, w.n - j0);
      for (size_t b = 0; b < row_blocks && b * block < m; ++b) {
        const size_t r0 = b * block, count = std::min(block, m - r0);
        const Int8Residual here{residual.add, residual.add != nullptr ? residual.r + r0 * ldc + j0 : nullptr};
        kernels[count](1, count, steps, rows + b * kRows, w.panels + panel * w.k * kPanel, w.bias + j0,
                       w.multipliers + j0, w.out, c + r0 * ldc + j0, ldc, low_lanes(columns),
                       low_lanes(columns > 16 ? columns - 16 : 0), here);
      }
    }
    return;
  }
  parallel_for(pool, units, run_unit);  // in order on this thread without a pool or with one unit
}

// Input pixel (n, iy, ix) of x (NHWC), inside the image.
const uint8_t* pixel_of(const PackedConvShape& s, const uint8_t* x, size_t n, int64_t iy, int64_t ix) {
  return x + ((n * s.h + static_cast<size_t>(iy)) * s.w + static_cast<size_t>(ix)) * s.channels;
}

// The receptive fields of consecutive output pixels from pixel p on: one division per output row
// rather than per pixel.
class WindowWalk {
 public:
  WindowWalk(const PackedConvShape& s, size_t p)
      : s_(s),
        p_(p),
        ox_(p % s.out_w),
        window_(window_of(s, p)),
        last_top_(static_cast<int64_t>(s.h) - static_cast<int64_t>((s.kernel_h - 1) * s.dilation_h + 1)),
        last_left_(static_cast<int64_t>(s.w) - static_cast<int64_t>((s.kernel_w - 1) * s.dilation_w + 1)) {}
  const ConvWindow& window() const { return window_; }
  // Whether every tap of the window lies inside the image.
  bool inside() const {
    return window_.top >= 0 && window_.top <= last_top_ && window_.left >= 0 && window_.left <= last_left_;
  }
  void next() {
    ++p_;
    if (++ox_ < s_.out_w) {
      window_.left += static_cast<int64_t>(s_.stride_w);
    } else {
      ox_ = 0;
      window_ = window_of(s_, p_);
    }
  }

 private:
  const PackedConvShape& s_;
  size_t p_, ox_;
  ConvWindow window_;
  int64_t last_top_, last_left_;
};

// Copies window `win`'s taps into `row` (kernel_h runs of kernel_w * channels bytes, then 3 zero
// bytes: the last 4-byte step's tail, whose weights are zero). A kernel row inside the image is
// copied by masked 64-byte loads and whole 64-byte stores (ResNet's 7x7 stem: 21 bytes), in order,
// so that each run overwrites the zeros the previous one wrote past its end: `row` must hold
// kernel_h * kernel_w * channels + 64 bytes (masked stores took as long as the GEMM there). Taps
// in the padding read `padding`.
MT_VNNI_TARGET void gather_window(const PackedConvShape& s, const WindowWalk& walk, const uint8_t* x,
                                  const uint8_t* padding, uint8_t* row) {
  const ConvWindow& win = walk.window();
  const size_t c = s.channels, span = s.kernel_w * c;  // bytes per kernel row
  if (span <= 64 && s.dilation_w == 1 && walk.inside()) {  // the common case: a load and a store per kernel row
    const __mmask64 mask = span == 64 ? ~__mmask64{0} : (__mmask64{1} << span) - 1;
    const uint8_t* src = pixel_of(s, x, win.n, win.top, win.left);
    const size_t line = s.dilation_h * s.w * c;
    if (span <= 32) {  // 32-byte stores cross fewer cache lines (stems: 9 and 21 bytes)
      for (size_t ky = 0; ky < s.kernel_h; ++ky, src += line, row += span)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(row),
                            _mm256_maskz_loadu_epi8(static_cast<__mmask32>(mask), src));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(row), _mm256_setzero_si256());  // the 4-byte step's tail
      return;
    }
    for (size_t ky = 0; ky < s.kernel_h; ++ky, src += line, row += span)
      _mm512_storeu_si512(row, _mm512_maskz_loadu_epi8(mask, src));
    return;
  }
  const bool whole =
      s.dilation_w == 1 && win.left >= 0 && win.left + static_cast<int64_t>(s.kernel_w) <= static_cast<int64_t>(s.w);
  for (size_t ky = 0; ky < s.kernel_h; ++ky) {
    uint8_t* dst = row + ky * span;
    const int64_t iy = win.top + static_cast<int64_t>(ky * s.dilation_h);
    if (inside(iy, s.h) && whole) {
      const uint8_t* src = pixel_of(s, x, win.n, iy, win.left);
      for (size_t i = 0; i < span; i += 64) {  // whole 64-byte stores: the bytes past the span are zeros
        const __mmask64 mask = span - i >= 64 ? ~__mmask64{0} : (__mmask64{1} << (span - i)) - 1;
        _mm512_storeu_si512(dst + i, _mm512_maskz_loadu_epi8(mask, src + i));
      }
      continue;
    }
    for (size_t kx = 0; kx < s.kernel_w; ++kx) {
      const int64_t ix = win.left + static_cast<int64_t>(kx * s.dilation_w);
      std::memcpy(dst + kx * c, inside(iy, s.h) && inside(ix, s.w) ? pixel_of(s, x, win.n, iy, ix) : padding, c);
    }
  }
  std::memset(row + s.kernel_h * span, 0, 3);
}

}  // namespace
MT_AVX512_INTRINSICS_END
#endif

void int8_flip(const int8_t* x, uint8_t* u, size_t n, ThreadPool* pool) {
  parallel_chunks(pool, n, 65536, [x, u](size_t begin, size_t end) {
    const int8_t* src = x;  // locals: GCC vectorizes the loop only when a store cannot change them
    uint8_t* dst = u;
    for (size_t i = begin; i < end; ++i) dst[i] = static_cast<uint8_t>(src[i] ^ 0x80);
  });
}

bool int8_flip_per_layer() {
#if defined(__x86_64__)
  static const bool per_layer = !__builtin_cpu_is("amd");
  return per_layer;
#else
  return true;
#endif
}

void int8_gemm(const PackedInt8Gemm& w, size_t m, Int8GemmInput a, size_t lda, int8_t* c, size_t ldc, ThreadPool* pool,
               Int8Residual residual) {
#if defined(__x86_64__)
  const auto* data = static_cast<const uint8_t*>(a.data);
  auto fill = [data, lda](size_t r0, size_t count, const uint8_t** rows, uint8_t*) {
    for (size_t r = 0; r < count; ++r) rows[r] = data + (r0 + r) * lda;
  };
  run_blocks(w, m, 1, !a.flipped, fill, c, ldc, pool, residual);
#else
  (void)w, (void)m, (void)a, (void)lda, (void)c, (void)ldc, (void)pool, (void)residual;
  fail(ExitCode::failure, "internal: int8_gemm needs AVX512-VNNI");
#endif
}

void int8_conv(const PackedInt8Gemm& w, const PackedConvShape& s, Int8GemmInput input, const void* padding_pixel,
               int8_t* y, ThreadPool* pool, Int8Residual residual) {
#if defined(__x86_64__)
  const auto* x = static_cast<const uint8_t*>(input.data);
  const auto* padding = static_cast<const uint8_t*>(padding_pixel);
  const bool flip = !input.flipped;
  const size_t pixels = s.n * s.out_h * s.out_w;
  if (w.taps == 1 && s.kernel_h * s.kernel_w > 1) {  // gathered: one contiguous row of taps x channels per pixel
    const size_t stride = (w.k + 127) / 64 * 64;     // bytes between gathered rows (gather_window)
    auto gather = [&s, x, padding, stride](size_t r0, size_t count, const uint8_t** rows, uint8_t* scratch) {
      WindowWalk walk(s, r0);
      for (size_t r = 0; r < count; ++r, walk.next()) {
        rows[r] = scratch + r * stride;
        gather_window(s, walk, x, padding, scratch + r * stride);
      }
    };
    return run_blocks(w, pixels, kBatch, flip, gather, y, w.n, pool, residual);
  }
  // A window wholly inside the image reads tap t at its top-left pixel + offsets[t]; only windows
  // that touch the padding test each tap (on ResNet18's 56x56x64 3x3 convs, testing every tap of
  // every window, and dividing to find each window, cost a tenth of the layer's time).
  int64_t offsets[kMaxTaps];
  for (size_t ky = 0, t = 0; ky < s.kernel_h; ++ky)
    for (size_t kx = 0; kx < s.kernel_w; ++kx, ++t)
      offsets[t] = static_cast<int64_t>((ky * s.dilation_h * s.w + kx * s.dilation_w) * s.channels);
  auto fill = [&s, x, padding, &offsets](size_t r0, size_t count, const uint8_t** rows, uint8_t*) {
    const size_t taps = s.kernel_h * s.kernel_w;
    WindowWalk walk(s, r0);
    for (size_t r = 0; r < count; ++r, walk.next()) {
      const ConvWindow& win = walk.window();
      if (walk.inside()) {
        const uint8_t* origin = pixel_of(s, x, win.n, win.top, win.left);
        for (size_t t = 0; t < taps; ++t) rows[t * count + r] = origin + offsets[t];
        continue;
      }
      for (size_t ky = 0, t = 0; ky < s.kernel_h; ++ky) {
        const int64_t iy = win.top + static_cast<int64_t>(ky * s.dilation_h);
        for (size_t kx = 0; kx < s.kernel_w; ++kx, ++t) {
          const int64_t ix = win.left + static_cast<int64_t>(kx * s.dilation_w);
          rows[t * count + r] = inside(iy, s.h) && inside(ix, s.w) ? pixel_of(s, x, win.n, iy, ix) : padding;
        }
      }
    }
  };
  run_blocks(w, pixels, 1, flip, fill, y, w.n, pool, residual);
#else
  (void)w, (void)s, (void)input, (void)padding_pixel, (void)y, (void)pool, (void)residual;
  fail(ExitCode::failure, "internal: int8_conv needs AVX512-VNNI");
#endif
}

}  // namespace mt::cpu
