#include "kernels/cpu/engines/channel_shuffle.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/cpu/plan/parallel.h"
#include "lib/core/error.h"

#if defined(__x86_64__)
#include "kernels/cpu/engines/avx512_lanes.h"
#include "kernels/cpu/engines/int8_vnni_requant.h"  // MT_AVX512_INTRINSICS_BEGIN / END
#endif

namespace mt::cpu {
namespace {

// The input holding concat channel `channel`, and the channel within it.
std::pair<size_t, size_t> source_of(const std::vector<size_t>& input_channels, size_t channel) {
  size_t input = 0;
  while (channel >= input_channels[input]) channel -= input_channels[input++];
  return {input, channel};
}

// The pieces of shuffled channels [first, end): a partial group at either end one channel at a time,
// the whole groups between as G-way interleavings, cut where a group's run crosses into another input.
std::vector<InterleavePiece> pieces_of(const std::vector<size_t>& input_channels, size_t groups, size_t first,
                                       size_t end) {
  size_t channels = 0;
  std::vector<size_t> starts;  // concat channel of each input's first one
  for (size_t c : input_channels) {
    starts.push_back(channels);
    channels += c;
  }
  const size_t per_group = channels / groups;
  std::vector<InterleavePiece> pieces;
  auto single = [&](size_t shuffled) {
    const size_t concat = shuffled % groups * per_group + shuffled / groups;
    const auto [input, channel] = source_of(input_channels, concat);
    InterleavePiece* last = pieces.empty() ? nullptr : &pieces.back();
    // A run of single channels of one input in order (a shuffle of one group) is one piece.
    if (last != nullptr && last->sources.size() == 1 && last->dst + last->count == shuffled - first &&
        last->sources[0].first == input && last->sources[0].second + last->count == channel) {
      ++last->count;
      return;
    }
    pieces.push_back({.dst = shuffled - first, .count = 1, .sources = {{input, channel}}});
  };
  size_t at = first;
  for (; at < end && at % groups != 0; ++at) single(at);
  const size_t j_begin = at / groups, j_end = end / groups;
  if (j_end > j_begin && groups > 1) {
    std::vector<size_t> cuts{j_begin, j_end};
    for (size_t start : starts)
      for (size_t g = 0; g < groups; ++g)
        if (start > g * per_group && start - g * per_group > j_begin && start - g * per_group < j_end)
          cuts.push_back(start - g * per_group);
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    for (size_t s = 0; s + 1 < cuts.size(); ++s) {
      InterleavePiece piece{.dst = cuts[s] * groups - first, .count = cuts[s + 1] - cuts[s], .sources = {}};
      for (size_t g = 0; g < groups; ++g) piece.sources.push_back(source_of(input_channels, g * per_group + cuts[s]));
      pieces.push_back(std::move(piece));
    }
    at = j_end * groups;
  }
  for (; at < end; ++at) single(at);
  return pieces;
}

// out[k * W + w] = sources[w][k] for k < count, in `rows` pixel rows (strides in bytes): the
// portable loop, with the ways and the element type known to the compiler so that it vectorizes the
// interleaving (ShuffleNet's two ways, 1- or 4-byte elements).
template <typename T, size_t W>
void interleave_rows(const std::byte* const* sources, const size_t* strides, size_t rows, size_t count, std::byte* out,
                     size_t out_stride) {
  for (size_t r = 0; r < rows; ++r) {
    const T* from[W];
    for (size_t w = 0; w < W; ++w) from[w] = reinterpret_cast<const T*>(sources[w] + r * strides[w]);
    T* __restrict to = reinterpret_cast<T*>(out + r * out_stride);
    for (size_t k = 0; k < count; ++k)
      for (size_t w = 0; w < W; ++w) to[k * W + w] = from[w][k];
  }
}

// Any number of ways and element size, a load per element.
void interleave_rows_any(const std::byte* const* sources, const size_t* strides, size_t ways, size_t rows, size_t count,
                         size_t element, std::byte* out, size_t out_stride) {
  for (size_t r = 0; r < rows; ++r)
    for (size_t w = 0; w < ways; ++w)
      for (size_t k = 0; k < count; ++k)
        std::memcpy(out + r * out_stride + (k * ways + w) * element, sources[w] + r * strides[w] + k * element,
                    element);
}

template <typename T>
void interleave_rows_of(const std::byte* const* sources, const size_t* strides, size_t ways, size_t rows, size_t count,
                        std::byte* out, size_t out_stride) {
  switch (ways) {
    case 2: return interleave_rows<T, 2>(sources, strides, rows, count, out, out_stride);
    case 3: return interleave_rows<T, 3>(sources, strides, rows, count, out, out_stride);
    case 4: return interleave_rows<T, 4>(sources, strides, rows, count, out, out_stride);
    default: return interleave_rows_any(sources, strides, ways, rows, count, sizeof(T), out, out_stride);
  }
}

void interleave_rows_portable(const std::byte* const* sources, const size_t* strides, size_t ways, size_t rows,
                              size_t count, size_t element, std::byte* out, size_t out_stride) {
  switch (element) {
    case 1: return interleave_rows_of<uint8_t>(sources, strides, ways, rows, count, out, out_stride);
    case 2: return interleave_rows_of<uint16_t>(sources, strides, ways, rows, count, out, out_stride);
    case 4: return interleave_rows_of<uint32_t>(sources, strides, ways, rows, count, out, out_stride);
    case 8: return interleave_rows_of<uint64_t>(sources, strides, ways, rows, count, out, out_stride);
    default: return interleave_rows_any(sources, strides, ways, rows, count, element, out, out_stride);
  }
}

#if defined(__x86_64__)
#define MT_SHUFFLE_TARGET __attribute__((target("avx512f,avx512bw,avx512vl")))
MT_AVX512_INTRINSICS_BEGIN

// Two runs interleaved element by element, in `rows` pixel rows (strides in bytes), Vec::kLanes
// elements of each per step with masked loads and stores (a run of ShuffleNet's int8 29 takes one).
// Elements of 1 or 2 bytes: each element of `a` widened to twice its size, with the element of `b`
// shifted into its upper half.
struct Widen8 {
  static constexpr size_t kElement = 1, kLanes = 32;
  MT_SHUFFLE_TARGET static void step(const std::byte* a, const std::byte* b, std::byte* out, size_t n) {
    const __mmask32 in = n >= 32 ? ~__mmask32{0} : (__mmask32{1} << n) - 1;
    const __mmask64 to = n >= 32 ? ~__mmask64{0} : (__mmask64{1} << (2 * n)) - 1;
    const __m512i low = _mm512_cvtepu8_epi16(_mm256_maskz_loadu_epi8(in, a));
    const __m512i high = _mm512_cvtepu8_epi16(_mm256_maskz_loadu_epi8(in, b));
    _mm512_mask_storeu_epi8(out, to, _mm512_or_si512(low, _mm512_slli_epi16(high, 8)));
  }
};
struct Widen16 {
  static constexpr size_t kElement = 2, kLanes = 16;
  MT_SHUFFLE_TARGET static void step(const std::byte* a, const std::byte* b, std::byte* out, size_t n) {
    const __mmask16 in = low_lanes(n);
    const __mmask32 to = n >= 16 ? ~__mmask32{0} : (__mmask32{1} << (2 * n)) - 1;
    const __m512i low = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(in, a));
    const __m512i high = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(in, b));
    _mm512_mask_storeu_epi16(out, to, _mm512_or_si512(low, _mm512_slli_epi32(high, 16)));
  }
};
// Elements of 4 bytes: 16 of each source per step, paired by two two-source permutes (half as many
// instructions per byte as widening 8 at a time).
struct Pair32 {
  static constexpr size_t kElement = 4, kLanes = 16;
  MT_SHUFFLE_TARGET static void step(const std::byte* a, const std::byte* b, std::byte* out, size_t n) {
    const __m512i low_pairs = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    const __m512i high_pairs = _mm512_add_epi32(low_pairs, _mm512_set1_epi32(8));
    const __mmask16 in = low_lanes(n);
    const __m512i x = _mm512_maskz_loadu_epi32(in, a), y = _mm512_maskz_loadu_epi32(in, b);
    _mm512_mask_storeu_epi32(out, low_lanes(2 * n), _mm512_permutex2var_epi32(x, low_pairs, y));
    if (n > 8) _mm512_mask_storeu_epi32(out + 64, low_lanes(2 * n - 16), _mm512_permutex2var_epi32(x, high_pairs, y));
  }
};

template <typename Vec>
MT_SHUFFLE_TARGET void interleave2_rows(const std::byte* a, size_t a_stride, const std::byte* b, size_t b_stride,
                                        std::byte* out, size_t out_stride, size_t rows, size_t count) {
  constexpr size_t element = Vec::kElement;
  for (size_t r = 0; r < rows; ++r, a += a_stride, b += b_stride, out += out_stride)
    for (size_t k = 0; k < count; k += Vec::kLanes)
      Vec::step(a + k * element, b + k * element, out + 2 * k * element, count - k);
}

MT_AVX512_INTRINSICS_END
#endif

}  // namespace

bool channel_shuffle_avx512_supported() {
#if defined(__x86_64__)
  static const bool supported =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
  return supported;
#else
  return false;
#endif
}

ChannelShuffle::ChannelShuffle(const std::vector<size_t>& input_channels, size_t groups,
                               const std::vector<std::pair<size_t, size_t>>& ranges, size_t pixels, size_t element_size,
                               bool avx512)
    : input_channels_(input_channels), pixels_(pixels), element_(element_size), avx512_(avx512) {
  if (groups == 0 || groups > kMaxGroups) fail(ExitCode::failure, "internal: channel shuffle of {} groups", groups);
  for (const auto& [first, end] : ranges) {
    outputs_.push_back({.channels = end - first, .pieces = pieces_of(input_channels, groups, first, end)});
    row_bytes_ += (end - first) * element_size;
  }
}

void ChannelShuffle::run_pixels(std::span<void* const> pointers, size_t begin, size_t end) const {
  // Piece by piece over the pixels [begin, end): per piece the strides and the vector masks stay the
  // same from row to row, and a share of rows stays in L1 between the pieces that read it.
  const size_t inputs = input_channels_.size(), rows = end - begin;
  // A piece interleaves one run or one per group: at most kMaxGroups (no allocation per run).
  const std::byte* sources[kMaxGroups];
  size_t strides[kMaxGroups];
  for (size_t o = 0; o < outputs_.size(); ++o) {
    const Output& output = outputs_[o];
    const size_t out_stride = output.channels * element_;
    std::byte* out = static_cast<std::byte*>(pointers[inputs + o]) + begin * out_stride;
    for (const InterleavePiece& piece : output.pieces) {
      std::byte* to = out + piece.dst * element_;
      const size_t ways = piece.sources.size();
      for (size_t w = 0; w < ways; ++w) {
        const auto [input, channel] = piece.sources[w];
        sources[w] =
            static_cast<const std::byte*>(pointers[input]) + (begin * input_channels_[input] + channel) * element_;
        strides[w] = input_channels_[input] * element_;
      }
      [[maybe_unused]] const bool vector = avx512_ && ways == 2 && (element_ == 1 || element_ == 2 || element_ == 4);
#if defined(__x86_64__)
      if (vector) {
        auto* kernel = element_ == 1   ? interleave2_rows<Widen8>
                       : element_ == 2 ? interleave2_rows<Widen16>
                                       : interleave2_rows<Pair32>;
        kernel(sources[0], strides[0], sources[1], strides[1], to, out_stride, rows, piece.count);
        continue;
      }
#endif
      if (ways == 1) {
        for (size_t r = 0; r < rows; ++r)
          std::memcpy(to + r * out_stride, sources[0] + r * strides[0], piece.count * element_);
      } else {
        interleave_rows_portable(sources, strides, ways, rows, piece.count, element_, to, out_stride);
      }
    }
  }
}

void ChannelShuffle::run(std::span<void* const> pointers, ThreadPool* pool) const {
  // Even shares of pixels, each of at least 16 KiB of output. Smaller shares are not worth waking a
  // thread for; above that, splitting pays even where one thread would do it fast, because at 2 threads
  // half of the inputs' rows were written by the other core and one thread alone pulls all of them
  // across (ShuffleNetV2 int8's 14x14 units, 45 KiB: 1.0 us at 1 thread; at 2 threads 1.1 us split in
  // four shares, 1.25 us on one thread).
  const size_t min_pixels = std::max<size_t>(1, 16384 / std::max<size_t>(1, row_bytes_));
  parallel_chunks(pool, pixels_, min_pixels, [&](size_t begin, size_t end) { run_pixels(pointers, begin, end); });
}

}  // namespace mt::cpu
