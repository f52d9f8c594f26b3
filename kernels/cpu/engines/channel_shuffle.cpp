#include "kernels/cpu/engines/channel_shuffle.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/cpu/plan/parallel.h"

#if defined(__x86_64__)
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

// out[k * ways + w] = sources[w][k], elements of T.
template <typename T>
void interleave(const std::byte* const* sources, size_t ways, size_t count, std::byte* out) {
  for (size_t w = 0; w < ways; ++w) {
    const std::byte* source = sources[w];
    for (size_t k = 0; k < count; ++k) std::memcpy(out + (k * ways + w) * sizeof(T), source + k * sizeof(T), sizeof(T));
  }
}

void interleave_any(const std::byte* const* sources, size_t ways, size_t count, size_t element, std::byte* out) {
  switch (element) {
    case 1: return interleave<uint8_t>(sources, ways, count, out);
    case 2: return interleave<uint16_t>(sources, ways, count, out);
    case 4: return interleave<uint32_t>(sources, ways, count, out);
    case 8: return interleave<uint64_t>(sources, ways, count, out);
    default:
      for (size_t w = 0; w < ways; ++w)
        for (size_t k = 0; k < count; ++k)
          std::memcpy(out + (k * ways + w) * element, sources[w] + k * element, element);
  }
}

#if defined(__x86_64__)
#define MT_SHUFFLE_TARGET __attribute__((target("avx512f,avx512bw,avx512vl")))
MT_AVX512_INTRINSICS_BEGIN

// Two runs interleaved element by element: each element of `a` widened to twice its size, with the
// element of `b` shifted into its upper half (elements of 1, 2 or 4 bytes).
MT_SHUFFLE_TARGET void interleave2_avx512(const std::byte* a, const std::byte* b, size_t count, size_t element,
                                          std::byte* out) {
  if (element == 1) {
    for (size_t k = 0; k < count; k += 32) {
      const size_t n = std::min<size_t>(32, count - k);
      const __mmask32 in = n == 32 ? ~__mmask32{0} : (__mmask32{1} << n) - 1;
      const __mmask64 to = n == 32 ? ~__mmask64{0} : (__mmask64{1} << (2 * n)) - 1;
      const __m512i low = _mm512_cvtepu8_epi16(_mm256_maskz_loadu_epi8(in, a + k));
      const __m512i high = _mm512_cvtepu8_epi16(_mm256_maskz_loadu_epi8(in, b + k));
      _mm512_mask_storeu_epi8(out + 2 * k, to, _mm512_or_si512(low, _mm512_slli_epi16(high, 8)));
    }
  } else if (element == 2) {
    for (size_t k = 0; k < count; k += 16) {
      const size_t n = std::min<size_t>(16, count - k);
      const auto in = static_cast<__mmask16>((1u << n) - 1);
      const __mmask32 to = n == 16 ? ~__mmask32{0} : (__mmask32{1} << (2 * n)) - 1;
      const __m512i low = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(in, a + 2 * k));
      const __m512i high = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(in, b + 2 * k));
      _mm512_mask_storeu_epi16(out + 4 * k, to, _mm512_or_si512(low, _mm512_slli_epi32(high, 16)));
    }
  } else {
    for (size_t k = 0; k < count; k += 8) {
      const size_t n = std::min<size_t>(8, count - k);
      const auto in = static_cast<__mmask8>((1u << n) - 1);
      const auto to = static_cast<__mmask16>((1u << (2 * n)) - 1);
      const __m512i low = _mm512_cvtepu32_epi64(_mm256_maskz_loadu_epi32(in, a + 4 * k));
      const __m512i high = _mm512_cvtepu32_epi64(_mm256_maskz_loadu_epi32(in, b + 4 * k));
      _mm512_mask_storeu_epi32(out + 8 * k, to, _mm512_or_si512(low, _mm512_slli_epi64(high, 32)));
    }
  }
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
  for (const auto& [first, end] : ranges) {
    outputs_.push_back({.channels = end - first, .pieces = pieces_of(input_channels, groups, first, end)});
    row_bytes_ += (end - first) * element_size;
  }
}

void ChannelShuffle::run_pixels(std::span<void* const> pointers, size_t begin, size_t end) const {
  const size_t inputs = input_channels_.size();
  std::vector<const std::byte*> rows(inputs);
  std::vector<const std::byte*> sources;
  for (size_t p = begin; p < end; ++p) {
    for (size_t i = 0; i < inputs; ++i)
      rows[i] = static_cast<const std::byte*>(pointers[i]) + p * input_channels_[i] * element_;
    for (size_t o = 0; o < outputs_.size(); ++o) {
      const Output& output = outputs_[o];
      std::byte* out = static_cast<std::byte*>(pointers[inputs + o]) + p * output.channels * element_;
      for (const InterleavePiece& piece : output.pieces) {
        std::byte* to = out + piece.dst * element_;
        sources.clear();
        for (const auto& [input, channel] : piece.sources) sources.push_back(rows[input] + channel * element_);
        if (sources.size() == 1) {
          std::memcpy(to, sources[0], piece.count * element_);
          continue;
        }
#if defined(__x86_64__)
        if (avx512_ && sources.size() == 2 && (element_ == 1 || element_ == 2 || element_ == 4)) {
          interleave2_avx512(sources[0], sources[1], piece.count, element_, to);
          continue;
        }
#endif
        interleave_any(sources.data(), sources.size(), piece.count, element_, to);
      }
    }
  }
}

void ChannelShuffle::run(std::span<void* const> pointers, pthreadpool_t pool) const {
  // Even shares of pixels; a share of at least 16 KiB of output so that small tensors stay on one thread.
  const size_t min_pixels = std::max<size_t>(1, 16384 / std::max<size_t>(1, row_bytes_));
  parallel_chunks(pool, pixels_, min_pixels, [&](size_t begin, size_t end) { run_pixels(pointers, begin, end); });
}

}  // namespace mt::cpu
