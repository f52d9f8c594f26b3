#include "kernels/vulkan/plan/weight_layout.h"

#include <algorithm>
#include <cstring>

#include "kernels/vulkan/plan/packed_layout.h"
#include "lib/core/float16.h"

namespace mt::vulkan {
namespace {

// The weight from input channel ic to output channel oc at tap t of conv2d weights W[M, C/group,
// kH, kW] or conv_transpose2d weights W[C, M/group, kH, kW]; zero across groups and past the ends.
template <typename T>
T conv_weight(const T* w, int64_t out_channels, int64_t in_channels, int64_t group, int64_t taps, bool transposed,
              int64_t ic, int64_t oc, int64_t t) {
  const int64_t in_per_group = in_channels / group, out_per_group = out_channels / group;
  if (ic >= in_channels || oc >= out_channels || ic / in_per_group != oc / out_per_group) return T{0};
  if (transposed) return w[(ic * out_per_group + oc % out_per_group) * taps + t];
  return w[(oc * in_per_group + ic % in_per_group) * taps + t];
}

}  // namespace

std::vector<std::byte> encode_floats(const std::vector<float>& values, bool fp16) {
  std::vector<std::byte> bytes(values.size() * (fp16 ? 2 : 4));
  if (!fp16) {
    std::memcpy(bytes.data(), values.data(), bytes.size());
    return bytes;
  }
  for (size_t i = 0; i < values.size(); ++i) {
    const uint16_t half = float_to_half(values[i]);
    std::memcpy(bytes.data() + 2 * i, &half, 2);
  }
  return bytes;
}

std::vector<float> pack_tensor(const float* data, const Shape& shape) {
  const PackedLayout layout = packed_layout(shape);
  std::vector<float> packed(static_cast<size_t>(layout.texels) * 4, 0.0f);
  const size_t rank = layout.dims.size();
  const size_t p = static_cast<size_t>(layout.packed_axis);
  std::vector<int64_t> row_stride(rank, 1);
  for (size_t a = rank - 1; a-- > 0;) row_stride[a] = row_stride[a + 1] * layout.dims[a + 1];
  const int64_t count = numel(layout.dims);
  std::vector<int64_t> c(rank, 0);
  for (int64_t e = 0; e < count; ++e) {
    int64_t rest = e;
    for (size_t a = rank; a-- > 0;) {
      c[a] = rest % layout.dims[a];
      rest /= layout.dims[a];
    }
    int64_t texel = 0;
    for (size_t a = 0; a < rank; ++a) texel += (a == p ? c[a] / 4 : c[a]) * layout.strides[a];
    packed[static_cast<size_t>(texel * 4 + c[p] % 4)] = data[e];
  }
  return packed;
}

std::vector<float> pack_channels(const float* values, int64_t channels) {
  std::vector<float> packed(static_cast<size_t>((channels + 3) / 4 * 4), 0.0f);
  for (int64_t c = 0; c < channels; ++c) packed[static_cast<size_t>(c)] = values[c];
  return packed;
}

std::vector<int32_t> conv_weight_ranges(int64_t out_channels, int64_t in_channels, int64_t group, int64_t taps) {
  const int64_t in_per_group = in_channels / group, out_per_group = out_channels / group;
  std::vector<int32_t> ranges;
  int64_t matrices = 0;
  for (int64_t ob = 0; ob < (out_channels + 3) / 4; ++ob) {
    const int64_t first_out = ob * 4, last_out = std::min(ob * 4 + 3, out_channels - 1);
    const int64_t first_in = first_out / out_per_group * in_per_group;
    const int64_t end_in = (last_out / out_per_group + 1) * in_per_group;
    const int64_t ib_begin = first_in / 4, ib_end = (end_in + 3) / 4;
    ranges.push_back(static_cast<int32_t>(matrices));
    ranges.push_back(static_cast<int32_t>(ib_begin));
    ranges.push_back(static_cast<int32_t>(ib_end));
    matrices += (ib_end - ib_begin) * taps;
  }
  return ranges;
}

ConvWeights pack_conv_weights(const float* w, int64_t out_channels, int64_t in_channels, int64_t group, int64_t kh,
                              int64_t kw, bool transposed) {
  const int64_t taps = kh * kw;
  auto weight = [&](int64_t ic, int64_t oc, int64_t t) {
    return conv_weight(w, out_channels, in_channels, group, taps, transposed, ic, oc, t);
  };
  ConvWeights packed;
  packed.ranges = conv_weight_ranges(out_channels, in_channels, group, taps);
  for (size_t ob = 0; ob < packed.ranges.size() / 3; ++ob)
    for (int64_t ib = packed.ranges[3 * ob + 1]; ib < packed.ranges[3 * ob + 2]; ++ib)
      for (int64_t t = 0; t < taps; ++t)
        for (int64_t l = 0; l < 4; ++l)
          for (int64_t o = 0; o < 4; ++o)
            packed.weights.push_back(weight(ib * 4 + l, static_cast<int64_t>(ob) * 4 + o, t));
  return packed;
}

std::vector<float> pack_winograd_weights(const float* w, int64_t out_channels, int64_t in_channels) {
  const int64_t out_blocks = (out_channels + 3) / 4, in_blocks = (in_channels + 3) / 4;
  std::vector<float> packed(static_cast<size_t>(16 * out_blocks * in_blocks * 16), 0.0f);
  for (int64_t oc = 0; oc < out_channels; ++oc)
    for (int64_t ic = 0; ic < in_channels; ++ic) {
      const float* g = w + (oc * in_channels + ic) * 9;
      // G g, 4x3, with G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1]; then (G g) G^T, 4x4.
      float gg[4][3];
      for (int c = 0; c < 3; ++c) {
        gg[0][c] = g[c];
        gg[1][c] = 0.5f * (g[c] + g[3 + c] + g[6 + c]);
        gg[2][c] = 0.5f * (g[c] - g[3 + c] + g[6 + c]);
        gg[3][c] = g[6 + c];
      }
      for (int r = 0; r < 4; ++r) {
        const float u[4] = {gg[r][0], 0.5f * (gg[r][0] + gg[r][1] + gg[r][2]), 0.5f * (gg[r][0] - gg[r][1] + gg[r][2]),
                            gg[r][2]};
        for (int c = 0; c < 4; ++c) {
          const int64_t pos = 4 * r + c;
          const int64_t matrix = (pos * out_blocks + oc / 4) * in_blocks + ic / 4;
          packed[static_cast<size_t>(matrix * 16 + (ic % 4) * 4 + oc % 4)] = u[c];
        }
      }
    }
  return packed;
}

std::vector<float> unpack_conv_weights(const float* packed, int64_t out_channels, int64_t in_channels, int64_t kh,
                                       int64_t kw) {
  const int64_t in_blocks = (in_channels + 3) / 4, taps = kh * kw;
  std::vector<float> w(static_cast<size_t>(out_channels * in_channels * taps));
  for (int64_t oc = 0; oc < out_channels; ++oc)
    for (int64_t ic = 0; ic < in_channels; ++ic)
      for (int64_t t = 0; t < taps; ++t)
        w[static_cast<size_t>((oc * in_channels + ic) * taps + t)] =
            packed[static_cast<size_t>((((oc / 4 * in_blocks + ic / 4) * taps + t) * 4 + ic % 4) * 4 + oc % 4)];
  return w;
}

std::vector<float> pack_depthwise_weights(const float* w, int64_t channels, int64_t kh, int64_t kw) {
  const int64_t blocks = (channels + 3) / 4, taps = kh * kw;
  std::vector<float> packed(static_cast<size_t>(blocks * taps * 4), 0.0f);
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t t = 0; t < taps; ++t) packed[static_cast<size_t>(((c / 4) * taps + t) * 4 + c % 4)] = w[c * taps + t];
  return packed;
}

std::vector<float> pack_linear_weights(const float* w, int64_t n, int64_t k) {
  const int64_t blocks = (n + 3) / 4;
  std::vector<float> packed(static_cast<size_t>(blocks * k * 4), 0.0f);
  for (int64_t o = 0; o < n; ++o)
    for (int64_t i = 0; i < k; ++i) packed[static_cast<size_t>(((o / 4) * k + i) * 4 + o % 4)] = w[o * k + i];
  return packed;
}

ConvWeightsInt8 pack_conv_weights_int8(const int8_t* w, int64_t out_channels, int64_t in_channels, int64_t group,
                                       int64_t kh, int64_t kw) {
  const int64_t taps = kh * kw;
  auto weight = [&](int64_t ic, int64_t oc, int64_t t) {
    return conv_weight(w, out_channels, in_channels, group, taps, false, ic, oc, t);
  };
  ConvWeightsInt8 packed;
  packed.ranges = conv_weight_ranges(out_channels, in_channels, group, taps);
  for (size_t ob = 0; ob < packed.ranges.size() / 3; ++ob)
    for (int64_t ib = packed.ranges[3 * ob + 1]; ib < packed.ranges[3 * ob + 2]; ++ib)
      for (int64_t t = 0; t < taps; ++t)
        for (int64_t o = 0; o < 4; ++o)
          for (int64_t l = 0; l < 4; ++l)
            packed.weights.push_back(weight(ib * 4 + l, static_cast<int64_t>(ob) * 4 + o, t));
  return packed;
}

std::vector<int8_t> pack_depthwise_weights_int8(const int8_t* w, int64_t channels, int64_t kh, int64_t kw) {
  const int64_t blocks = (channels + 3) / 4, taps = kh * kw;
  std::vector<int8_t> packed(static_cast<size_t>(blocks * taps * 4), 0);
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t t = 0; t < taps; ++t) packed[static_cast<size_t>(((c / 4) * taps + t) * 4 + c % 4)] = w[c * taps + t];
  return packed;
}

std::vector<int8_t> pack_linear_weights_int8(const int8_t* w, int64_t n, int64_t k) {
  const int64_t k_blocks = (k + 3) / 4;
  std::vector<int8_t> packed(static_cast<size_t>((n + 3) / 4 * k_blocks * 16), 0);
  for (int64_t o = 0; o < n; ++o)
    for (int64_t i = 0; i < k; ++i)
      packed[static_cast<size_t>(((o / 4 * k_blocks + i / 4) * 4 + o % 4) * 4 + i % 4)] = w[o * k + i];
  return packed;
}

std::vector<int32_t> packed_int8_weight_sums(const std::vector<int8_t>& packed, const std::vector<int64_t>& first,
                                             int64_t out_channels) {
  std::vector<int32_t> sums(static_cast<size_t>(out_channels), 0);
  for (size_t ob = 0; ob < first.size(); ++ob) {
    const size_t begin = static_cast<size_t>(first[ob]) * 16;
    const size_t end = ob + 1 < first.size() ? static_cast<size_t>(first[ob + 1]) * 16 : packed.size();
    for (size_t b = begin; b < end; ++b) {
      const int64_t oc = static_cast<int64_t>(ob) * 4 + static_cast<int64_t>(b / 4 % 4);
      if (oc < out_channels) sums[static_cast<size_t>(oc)] += packed[b];
    }
  }
  return sums;
}

}  // namespace mt::vulkan
