// The 3x3 and 5x5 depthwise convs of int8_vnni.h. Channels are independent, so vpdpbusd's sums of
// 4 adjacent bytes would need 4 taps interleaved per channel; vpdpwssd adds two int16 products per
// lane, so each kernel row's taps go in pairs: (x[c], x[c + dilation]) interleaved per channel.
// Interleaving costs two shuffles (vpermt2b, then the widening), so it is done once per input
// pixel, into a few widened input rows per thread (a cache of the rows the current output row
// reads), not once per use: a 3x3 conv then multiplies each pair 6 times (3 kernel rows, 2 output
// columns) with no shuffle in the inner loop, 6 vpdpwssd per output pixel and 16 channels.
// Padding is widened as x_zero, the input is read as signed, so the folded bias only removes
// x_zero * sum w.
#include <algorithm>
#include <cstring>

#include "kernels/cpu/engines/int8_vnni.h"
#include "kernels/cpu/engines/int8_vnni_requant.h"
#include "kernels/cpu/engines/pixel_shares.h"
#include "lib/core/error.h"

namespace mt::cpu {

constexpr size_t kBlock = 16;  // channels per vector

namespace {
size_t blocks_of(size_t channels) { return (channels + kBlock - 1) / kBlock; }
size_t row_pairs(size_t kernel) { return (kernel + 1) / 2; }  // tap pairs per kernel row
// Pairs start at input columns left + 2 j dilation, left = ox stride - pad_left: with an even
// stride only every other column starts one, and only those are widened.
size_t column_step(const PackedConvShape& s) { return s.stride_w % 2 == 0 ? 2 : 1; }
// Widened columns of a row, from input column -pad_left on.
size_t widened_columns(const PackedConvShape& s) {
  const size_t span = (s.out_w - 1) * s.stride_w + 2 * (row_pairs(s.kernel_w) - 1) * s.dilation_w + 1;
  return (span - 1) / column_step(s) + 1;
}
// One widened row: per block, per column, 16 channels x 2 int16 (64 bytes).
size_t widened_row_bytes(const PackedConvShape& s, size_t channels) {
  return blocks_of(channels) * widened_columns(s) * 64;
}
}  // namespace

size_t int8_depthwise_bytes(size_t kernel, size_t channels) {
  const size_t padded = blocks_of(channels) * kBlock;
  return padded * kernel * row_pairs(kernel) * 2 * sizeof(int16_t) + padded * (sizeof(int32_t) + sizeof(float));
}

PackedInt8Depthwise pack_int8_depthwise(void* memory, const int8_t* w, const int32_t* bias, const float* multipliers,
                                        size_t kernel, size_t channels, int32_t x_zero, Int8Output out) {
  const size_t pairs = row_pairs(kernel), vectors = kernel * pairs, padded = blocks_of(channels) * kBlock;
  std::memset(memory, 0, int8_depthwise_bytes(kernel, channels));
  auto* weights = static_cast<int16_t*>(memory);
  auto* packed_bias = reinterpret_cast<int32_t*>(weights + padded * vectors * 2);
  auto* packed_multipliers = reinterpret_cast<float*>(packed_bias + padded);
  for (size_t c = 0; c < channels; ++c) {
    int16_t* block = weights + c / kBlock * vectors * kBlock * 2;
    int64_t sum = 0;
    for (size_t ky = 0; ky < kernel; ++ky)
      for (size_t kx = 0; kx < kernel; ++kx) {
        const int8_t v = w[(c * kernel + ky) * kernel + kx];
        // [kernel row][pair][channel][tap of the pair]
        block[((ky * pairs + kx / 2) * kBlock + c % kBlock) * 2 + kx % 2] = v;
        sum += v;
      }
    const int64_t folded = (bias != nullptr ? bias[c] : 0) - int64_t{x_zero} * sum;
    packed_bias[c] = static_cast<int32_t>(static_cast<uint32_t>(folded));
    packed_multipliers[c] = multipliers[c];
  }
  return int8_depthwise_view(memory, kernel, channels, out);
}

PackedInt8Depthwise int8_depthwise_view(const void* memory, size_t kernel, size_t channels, Int8Output out) {
  const size_t vectors = kernel * row_pairs(kernel), padded = blocks_of(channels) * kBlock;
  const auto* weights = static_cast<const int16_t*>(memory);
  const auto* bias = reinterpret_cast<const int32_t*>(weights + padded * vectors * 2);
  return PackedInt8Depthwise{.weights = weights,
                             .bias = bias,
                             .multipliers = reinterpret_cast<const float*>(bias + padded),
                             .channels = channels,
                             .kernel = kernel,
                             .out = out};
}

namespace {
// A part's scratch: Kernel widened rows, then with an input lookup or an expanding conv one input
// row (64-byte multiples, so that each part's scratch stays aligned).
bool expands(const Int8DepthwiseFusion& f) { return f.expand.panels != nullptr; }
size_t line_bytes(const PackedConvShape& s, const Int8DepthwiseFusion& f) {
  return f.input_lookup != nullptr || expands(f) ? (s.w * s.channels + 63) / 64 * 64 : 0;
}
size_t part_scratch_bytes(const PackedConvShape& s, const Int8DepthwiseFusion& f) {
  return s.kernel_h * widened_row_bytes(s, s.channels) + line_bytes(s, f);
}
}  // namespace

size_t int8_depthwise_scratch_bytes(const PackedConvShape& s, size_t threads, const Int8DepthwiseFusion& fusion) {
  return std::max<size_t>(1, threads) * part_scratch_bytes(s, fusion);
}

bool int8_depthwise_expand_pays(const PackedConvShape& s, size_t threads) {
  return s.n * s.h * s.w * s.channels >= (size_t{128} << 10) && boundary_rows_pay(s, threads);
}

#if defined(__x86_64__)
MT_AVX512_INTRINSICS_BEGIN
namespace {

// Channel blocks [first, last) of 16 channels: the share of the work of one thread.
struct Blocks {
  size_t first = 0, last = 0;
};

// Where a part's output sums go (int8_depthwise's `sums`): image n's at part + n * image_stride.
struct PartSums {
  int32_t* part = nullptr;  // null: no sums
  size_t image_stride = 0;
};

// The input side of a part's rows: x, the padding pixel, and with an input lookup or an expanding
// conv those and the part's line of scratch that receives a computed or looked-up row.
struct RowSource {
  const int8_t* x;
  const int8_t* padding;
  const Int8DepthwiseFusion* fusion;
  int8_t* line;  // s.w * s.channels bytes where fusion has an input lookup or an expanding conv
};

// Widens blocks `blocks` of input row iy of image n (the padding's x_zero outside the image) into
// `row`: column i (input column i * column_step - pad_left) of block first + b holds
// (x[col][c], x[col + dilation][c]) as int16 pairs.
MT_VNNI_TARGET void widen_row(const PackedConvShape& s, const RowSource& source, size_t n, int64_t iy, Blocks blocks,
                              int16_t* row) {
  alignas(32) uint8_t order[32];  // bytes 0..15 of the first operand and of the second, alternating
  for (size_t i = 0; i < 16; ++i) {
    order[2 * i] = static_cast<uint8_t>(i);
    order[2 * i + 1] = static_cast<uint8_t>(32 + i);
  }
  const __m256i interleave = _mm256_load_si256(reinterpret_cast<const __m256i*>(order));
  const size_t columns = widened_columns(s);
  const int8_t* padding = source.padding;
  const int8_t* line = inside(iy, s.h) ? source.x + (n * s.h + static_cast<size_t>(iy)) * s.w * s.channels : nullptr;
  const Int8DepthwiseFusion& f = *source.fusion;
  if (line != nullptr && expands(f)) {  // the expanding conv's row, every channel (a split by rows)
    const int8_t* in = source.x + (n * s.h + static_cast<size_t>(iy)) * s.w * f.expand_channels;
    int8_gemm(f.expand, s.w, {.data = in, .flipped = false}, f.expand_channels, source.line, s.channels, nullptr);
    if (f.input_lookup != nullptr) int8_lookup(f.input_lookup, source.line, source.line, s.w * s.channels);
    line = source.line;
  } else if (line != nullptr && f.input_lookup != nullptr) {  // the row's channels of these blocks, once
    const size_t c0 = blocks.first * kBlock, count = std::min(s.channels, blocks.last * kBlock) - c0;
    if (count == s.channels) int8_lookup(f.input_lookup, line, source.line, s.w * s.channels);
    else int8_lookup_rows(f.input_lookup, line + c0, source.line + c0, s.w, s.channels, count);
    line = source.line;
  }
  auto pixel = [&](int64_t ix) {
    return line != nullptr && inside(ix, s.w) ? line + static_cast<size_t>(ix) * s.channels : padding;
  };
  for (size_t i = 0; i < columns; ++i) {
    const int64_t ix = static_cast<int64_t>(i * column_step(s)) - s.pad_left;
    const int8_t* first = pixel(ix);
    const int8_t* second = pixel(ix + static_cast<int64_t>(s.dilation_w));
    for (size_t b = blocks.first; b < blocks.last; ++b) {
      const __mmask16 mask = low_lanes(s.channels - b * kBlock);
      const __m128i a = _mm_maskz_loadu_epi8(mask, first + b * kBlock);
      const __m128i c = _mm_maskz_loadu_epi8(mask, second + b * kBlock);
      const __m256i pair = _mm256_permutex2var_epi8(_mm256_zextsi128_si256(a), interleave, _mm256_zextsi128_si256(c));
      _mm512_store_si512(row + ((b - blocks.first) * columns + i) * 2 * kBlock, _mm512_cvtepi8_epi16(pair));
    }
  }
}

// One output pixel's sums over a Kernel x Kernel window of one block of 16 channels: the pairs of
// widened column `left` (+ j * dilation) of each kernel row's widened row, alternately into `even`
// and `odd` (two dependency chains; their sum is the pixel's accumulator).
template <size_t Kernel>
MT_VNNI_TARGET inline void accumulate(const int16_t* const* rows, size_t left, size_t dilation, const __m512i* weights,
                                      __m512i& even, __m512i& odd) {
  constexpr size_t kPairs = (Kernel + 1) / 2;
#pragma GCC unroll 15
  for (size_t v = 0; v < Kernel * kPairs; ++v) {
    const __m512i pair = _mm512_load_si512(rows[v / kPairs] + (left + v % kPairs * dilation) * 2 * kBlock);
    if (v % 2 == 0) even = _mm512_dpwssd_epi32(even, pair, weights[v]);
    else odd = _mm512_dpwssd_epi32(odd, pair, weights[v]);
  }
}

// Output rows [begin, end) (over all images), channel blocks `blocks`, of a Kernel x Kernel
// depthwise conv, with Kernel widened rows (of those blocks) in scratch, then `lookup` (the conv's
// activation) on each row, then the row's sums.
template <size_t Kernel>
MT_VNNI_TARGET void depthwise_rows(const PackedInt8Depthwise& w, const PackedConvShape& s, const RowSource& source,
                                   int8_t* y, size_t begin, size_t end, Blocks blocks, int16_t* scratch,
                                   const int8_t* lookup, PartSums sums = {}, size_t y_row0 = 0) {
  constexpr size_t kPairs = (Kernel + 1) / 2, kVectors = Kernel * kPairs;
  const size_t columns = widened_columns(s), c = s.channels;
  const size_t step = column_step(s), stride = s.stride_w / step, dilation = 2 * s.dilation_w / step;
  const size_t row_elements = (blocks.last - blocks.first) * columns * 2 * kBlock;
  // Which input row (image n, row iy) each of the Kernel scratch rows holds.
  int64_t held[Kernel];
  std::fill_n(held, Kernel, int64_t{-1} << 40);
  const vnni::OutputVectors o = vnni::output_vectors(w.out);
  for (size_t r = begin; r < end; ++r) {
    const size_t n = r / s.out_h, oy = r % s.out_h;
    const int64_t top = static_cast<int64_t>(oy * s.stride_h) - s.pad_top;
    // The kernel rows' input rows, widened unless a scratch row holds them already.
    const int16_t* rows[Kernel];
    int64_t wanted[Kernel];
    for (size_t ky = 0; ky < Kernel; ++ky)
      wanted[ky] = static_cast<int64_t>(n) * (int64_t{1} << 32) + top + static_cast<int64_t>(ky * s.dilation_h);
    bool used[Kernel] = {}, found[Kernel] = {};
    for (size_t ky = 0; ky < Kernel; ++ky)
      for (size_t slot = 0; slot < Kernel; ++slot)
        if (held[slot] == wanted[ky]) {
          rows[ky] = scratch + slot * row_elements;
          used[slot] = found[ky] = true;
          break;
        }
    for (size_t ky = 0; ky < Kernel; ++ky) {
      if (found[ky]) continue;
      const size_t slot = static_cast<size_t>(std::find(used, used + Kernel, false) - used);
      used[slot] = true;
      held[slot] = wanted[ky];
      widen_row(s, source, n, top + static_cast<int64_t>(ky * s.dilation_h), blocks, scratch + slot * row_elements);
      rows[ky] = scratch + slot * row_elements;
    }
    int8_t* dst = y + (r - y_row0) * s.out_w * c;  // y holds the rows from y_row0 on
    for (size_t b = blocks.first; b < blocks.last; ++b) {
      __m512i weights[kVectors];
#pragma GCC unroll 15
      for (size_t v = 0; v < kVectors; ++v) weights[v] = _mm512_load_si512(w.weights + (b * kVectors + v) * 2 * kBlock);
      const __m512i bias = _mm512_loadu_si512(w.bias + b * kBlock);
      const __m512 multiplier = _mm512_loadu_ps(w.multipliers + b * kBlock);
      const __mmask16 mask = low_lanes(c - b * kBlock);
      const int16_t* block_rows[Kernel];
      for (size_t ky = 0; ky < Kernel; ++ky) block_rows[ky] = rows[ky] + (b - blocks.first) * columns * 2 * kBlock;
      // Two output pixels at a time, each summed in two chains (even and odd pairs, added at the
      // end: exact in int32), so that four vpdpwssd chains of Kernel * kPairs / 2 overlap instead of
      // one chain of Kernel * kPairs (MobileNetV2's 3x3 layers ran one vpdpwssd per latency).
      size_t ox = 0;
      for (; ox + 2 <= s.out_w; ox += 2) {
        __m512i even0 = bias, odd0 = _mm512_setzero_si512(), even1 = bias, odd1 = _mm512_setzero_si512();
        accumulate<Kernel>(block_rows, ox * stride, dilation, weights, even0, odd0);
        accumulate<Kernel>(block_rows, (ox + 1) * stride, dilation, weights, even1, odd1);
        vnni::requantize_store(dst + ox * c + b * kBlock, mask, _mm512_add_epi32(even0, odd0), multiplier, o);
        vnni::requantize_store(dst + (ox + 1) * c + b * kBlock, mask, _mm512_add_epi32(even1, odd1), multiplier, o);
      }
      if (ox < s.out_w) {
        __m512i even = bias, odd = _mm512_setzero_si512();
        accumulate<Kernel>(block_rows, ox * stride, dilation, weights, even, odd);
        vnni::requantize_store(dst + ox * c + b * kBlock, mask, _mm512_add_epi32(even, odd), multiplier, o);
      }
    }
    // The row's channels of these blocks, still in cache: the whole row, or a run per pixel.
    const size_t c0 = blocks.first * kBlock, channels = std::min(c, blocks.last * kBlock) - c0;
    if (lookup != nullptr) {
      if (channels == c) int8_lookup(lookup, dst, dst, s.out_w * c);
      else int8_lookup_rows(lookup, dst + c0, dst + c0, s.out_w, c, channels);
    }
    if (sums.part != nullptr)
      int8_add_pixel_sums(dst + c0, s.out_w, c, channels, sums.part + n * sums.image_stride + c0);
  }
}

}  // namespace
MT_AVX512_INTRINSICS_END
#endif

void int8_depthwise(const PackedInt8Depthwise& w, const PackedConvShape& s, const int8_t* x, const int8_t* padding,
                    int8_t* y, void* scratch, size_t threads, ThreadPool* pool, const Int8DepthwiseFusion& fusion,
                    int32_t* sums) {
#if defined(__x86_64__)
  // One part per thread, each with its own scratch rows: contiguous ranges of output rows, unless
  // channel blocks share the work more evenly (MobileNet's 7x7 layers: 7 rows split 4 / 3, 60
  // blocks 30 / 30). Not on a tie: threads splitting channels write (and read) parts of the same
  // pixels' cache lines, and measured no faster than rows on MobileNetV2/V3 (docs/benchmarks.md).
  const size_t rows = s.n * s.out_h, blocks = blocks_of(s.channels);
  const size_t slots = std::max<size_t>(1, threads), image_stride = slots * s.channels;
  if (rows == 0 || blocks == 0) {
    if (sums != nullptr) std::fill_n(sums, s.n * image_stride, 0);
    return;
  }
  const size_t pool_threads = thread_count(pool);
  const size_t parts = std::max<size_t>(1, std::min({threads, pool_threads, std::max(rows, blocks)}));
  auto largest_share = [parts](size_t units) {  // of the largest part, relative to an even split
    return static_cast<double>((units + parts - 1) / parts) * static_cast<double>(parts) / static_cast<double>(units);
  };
  // An expanding conv computes whole rows of every channel: by rows.
  const bool by_blocks = !expands(fusion) && largest_share(blocks) < largest_share(rows);
  const size_t part_bytes = part_scratch_bytes(s, fusion), widened_bytes = part_bytes - line_bytes(s, fusion);
  // Sums: every part's row of every image written, those of slots no part runs zero.
  if (sums != nullptr)
    for (size_t n = 0; n < s.n; ++n)
      std::fill(sums + n * image_stride + parts * s.channels, sums + (n + 1) * image_stride, 0);
  auto run = [&](size_t part) {
    const PartSums mine_sums{sums != nullptr ? sums + part * s.channels : nullptr, image_stride};
    if (mine_sums.part != nullptr)
      for (size_t n = 0; n < s.n; ++n) std::fill_n(mine_sums.part + n * image_stride, s.channels, 0);
    size_t begin = 0, end = rows;
    Blocks mine{0, blocks};
    if (by_blocks) mine = {blocks * part / parts, blocks * (part + 1) / parts};
    else begin = rows * part / parts, end = rows * (part + 1) / parts;
    if (begin >= end || mine.first >= mine.last) return;
    auto* part_scratch = static_cast<int8_t*>(scratch) + part * part_bytes;
    auto* held = reinterpret_cast<int16_t*>(part_scratch);
    const RowSource source{x, padding, &fusion, part_scratch + widened_bytes};
    if (w.kernel == 3) depthwise_rows<3>(w, s, source, y, begin, end, mine, held, fusion.lookup, mine_sums);
    else depthwise_rows<5>(w, s, source, y, begin, end, mine, held, fusion.lookup, mine_sums);
  };
  parallel_for(pool, parts, run);
#else
  (void)w, (void)s, (void)x, (void)padding, (void)y, (void)scratch, (void)threads, (void)pool, (void)fusion, (void)sums;
  fail(ExitCode::failure, "internal: int8_depthwise needs AVX512-VNNI");
#endif
}

size_t int8_depthwise_pointwise_scratch_bytes(const PackedConvShape& s, size_t threads,
                                              const Int8DepthwiseFusion& fusion) {
  const PixelShares shares(s, threads);
  return shares.parts * (part_scratch_bytes(s, fusion) + shares.share_elements(s.channels, 1));
}

void int8_depthwise_pointwise(const Int8DepthwisePointwise& f, const PackedConvShape& s, const int8_t* x,
                              const int8_t* padding, void* scratch, size_t threads, int8_t* y, Int8Residual residual,
                              const PixelRangeTail& tail, ThreadPool* pool) {
#if defined(__x86_64__)
  const size_t blocks = blocks_of(s.channels);
  // As many shares as the plan sized the scratch for (a pool of fewer threads runs several each).
  const PixelShares shares(s, threads);
  if (shares.pixels == 0 || blocks == 0) return;
  const size_t part_bytes = part_scratch_bytes(s, f.fusion);  // a multiple of 64
  const size_t widened_bytes = part_bytes - line_bytes(s, f.fusion);
  auto* mids = static_cast<int8_t*>(scratch) + shares.parts * part_bytes;
  const size_t mid_bytes = shares.share_elements(s.channels, 1);
  const size_t out_channels = f.pointwise.n;
  shares.run(pool, [&](size_t part, const PixelShares::Share& share) {
    auto* part_scratch = static_cast<int8_t*>(scratch) + part * part_bytes;
    auto* held = reinterpret_cast<int16_t*>(part_scratch);
    const RowSource source{x, padding, &f.fusion, part_scratch + widened_bytes};
    int8_t* mid = mids + part * mid_bytes;
    if (f.depthwise.kernel == 3)
      depthwise_rows<3>(f.depthwise, s, source, mid, share.row_begin, share.row_end, {0, blocks}, held, f.fusion.lookup,
                        {}, share.row_begin);
    else
      depthwise_rows<5>(f.depthwise, s, source, mid, share.row_begin, share.row_end, {0, blocks}, held, f.fusion.lookup,
                        {}, share.row_begin);
    // The pointwise conv of the share's pixels, on this thread: the rows just written are in its cache.
    const Int8Residual here{residual.add, residual.add != nullptr ? residual.r + share.begin * out_channels : nullptr};
    int8_gemm(f.pointwise, share.end - share.begin, {.data = mid + share.skipped(s) * s.channels, .flipped = false},
              s.channels, y + share.begin * out_channels, out_channels, nullptr, here);
    tail(share.begin, share.end);
  });
#else
  (void)f, (void)s, (void)x, (void)padding, (void)scratch, (void)threads, (void)y, (void)residual, (void)tail,
      (void)pool;
  fail(ExitCode::failure, "internal: int8_depthwise_pointwise needs AVX512-VNNI");
#endif
}

}  // namespace mt::cpu
