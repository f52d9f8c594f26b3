// A channel concatenation followed by a channel shuffle (ShuffleNet's: the concat's C channels seen
// as G groups of C/G, transposed to C/G groups of G), and optionally split into channel ranges, as
// one pass over NHWC rows: every output pixel row is assembled straight from the inputs' rows.
// Shuffled channel j*G + g is concat channel g*(C/G) + j, so an output's channels are G-way
// interleavings of runs of the inputs' channels (ShuffleNet's two halves: two runs of C/4 each).
#pragma once

#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "kernels/cpu/plan/thread_pool.h"

namespace mt::cpu {

// Whether the AVX-512 interleave of two runs can run here (AVX-512F, BW and VL).
bool channel_shuffle_avx512_supported();

// Per pixel: out[dst + k * sources.size() + w] = input sources[w].first, channel sources[w].second + k,
// for k < count.
struct InterleavePiece {
  size_t dst = 0;
  size_t count = 0;
  std::vector<std::pair<size_t, size_t>> sources;  // (input, first channel)
};

class ChannelShuffle {
 public:
  // The most groups a pass takes (ShuffleNet's: 2; V1's up to 8); the planner leaves more to the
  // nodes one by one.
  static constexpr size_t kMaxGroups = 16;

  ChannelShuffle() = default;
  // `input_channels`: channels of each concatenated input (their rows, NHWC); `groups` (at most
  // kMaxGroups) divides their sum; `ranges`: per output, its channels [first, end) of the shuffled tensor. `avx512` (the caller
  // checked channel_shuffle_avx512_supported()) interleaves two runs with vector code.
  ChannelShuffle(const std::vector<size_t>& input_channels, size_t groups,
                 const std::vector<std::pair<size_t, size_t>>& ranges, size_t pixels, size_t element_size, bool avx512);

  // pointers: the inputs, then the outputs.
  void run(std::span<void* const> pointers, ThreadPool* pool) const;
  // The output pixels [begin, end) alone, on the calling thread.
  void run_pixels(std::span<void* const> pointers, size_t begin, size_t end) const;

  const std::vector<InterleavePiece>& pieces(size_t output) const { return outputs_.at(output).pieces; }

 private:
  struct Output {
    size_t channels = 0;
    std::vector<InterleavePiece> pieces;
  };
  std::vector<size_t> input_channels_;
  std::vector<Output> outputs_;
  size_t pixels_ = 0, element_ = 1, row_bytes_ = 0;
  bool avx512_ = false;
};

}  // namespace mt::cpu
