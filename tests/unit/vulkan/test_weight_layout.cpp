// Constants in the layouts the shaders read (kernels/vulkan/plan/weight_layout.h), fp32 and fp16:
// activations and per-channel vectors packed by 4, conv and conv_transpose weights as 4x4 matrices
// per (output block, input block, tap) with only the blocks a group reads, depthwise and linear
// weights as one vec4 per block, Winograd F(2x2, 3x3) weights. Positions are computed by hand from
// the layout comments. No device needed.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/vulkan/plan/weight_layout.h"

using namespace mt;
using namespace mt::vulkan;

namespace {

std::vector<uint16_t> halves(const std::vector<std::byte>& bytes) {
  std::vector<uint16_t> result(bytes.size() / 2);
  std::memcpy(result.data(), bytes.data(), bytes.size());
  return result;
}

std::vector<float> counting(size_t count) {
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = static_cast<float>(i + 1);
  return values;
}

}  // namespace

TEST_CASE("weight_layout: fp32 and fp16 encodings") {
  const std::vector<float> values{1.0f, -2.0f, 0.5f, 65504.0f, 1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, 1e5f, 0x1p-24f};
  const std::vector<std::byte> fp32 = encode_floats(values, false);
  REQUIRE(fp32.size() == values.size() * 4);
  CHECK(std::memcmp(fp32.data(), values.data(), fp32.size()) == 0);
  // Round to nearest even (1 + 2^-11 is a tie that goes down, 1 + 3 * 2^-11 one that goes up),
  // overflow to infinity, 2^-24 the smallest subnormal.
  CHECK(halves(encode_floats(values, true)) ==
        std::vector<uint16_t>{0x3C00, 0xC000, 0x3800, 0x7BFF, 0x3C00, 0x3C02, 0x7C00, 0x0001});
  const std::vector<uint16_t> nan = halves(encode_floats({std::numeric_limits<float>::quiet_NaN()}, true));
  CHECK((nan[0] & 0x7C00) == 0x7C00);
  CHECK((nan[0] & 0x03FF) != 0);
}

TEST_CASE("weight_layout: tensors and channel vectors packed by 4, padding zero") {
  // [1, 5, 2]: channel blocks of 4, texel = block * 2 + x, lane = channel % 4.
  const std::vector<float> x = counting(10);
  const std::vector<float> packed = pack_tensor(x.data(), {1, 5, 2});
  REQUIRE(packed.size() == 16);
  CHECK(packed[0] == 1);    // (c 0, x 0)
  CHECK(packed[1] == 3);    // (c 1, x 0)
  CHECK(packed[4] == 2);    // (c 0, x 1)
  CHECK(packed[7] == 8);    // (c 3, x 1)
  CHECK(packed[8] == 9);    // (c 4, x 0)
  CHECK(packed[12] == 10);  // (c 4, x 1)
  for (size_t lane : {9, 10, 11, 13, 14, 15}) CHECK(packed[lane] == 0);

  const std::vector<float> channels = pack_channels(x.data(), 5);
  CHECK(channels == std::vector<float>{1, 2, 3, 4, 5, 0, 0, 0});
}

TEST_CASE("weight_layout: conv2d weights as 4x4 matrices per block and tap") {
  // M = 5 outputs, C = 3 inputs, a 1x2 window: W[m][c][t] = 100 m + 10 c + t + 1.
  std::vector<float> w(5 * 3 * 2);
  for (int m = 0; m < 5; ++m)
    for (int c = 0; c < 3; ++c)
      for (int t = 0; t < 2; ++t) w[(m * 3 + c) * 2 + t] = static_cast<float>(100 * m + 10 * c + t + 1);
  const ConvWeights packed = pack_conv_weights(w.data(), 5, 3, 1, 1, 2, false);
  // Two output blocks, each reading input block 0 over 2 taps: matrices 0-1 and 2-3.
  CHECK(packed.ranges == std::vector<int32_t>{0, 0, 1, 2, 0, 1});
  CHECK(packed.ranges == conv_weight_ranges(5, 3, 1, 2));
  REQUIRE(packed.weights.size() == 4 * 16);
  // Matrix index (ranges[3 ob] + (ib - first block) * taps + t); row l = input lane, column o = output lane.
  auto at = [&](int matrix, int l, int o) { return packed.weights[static_cast<size_t>((matrix * 4 + l) * 4 + o)]; };
  CHECK(at(0, 0, 0) == 1);    // W[0][0][0]
  CHECK(at(1, 2, 3) == 322);  // W[3][2][1]
  CHECK(at(2, 1, 0) == 411);  // W[4][1][0]
  CHECK(at(2, 1, 1) == 0);    // output 5 does not exist
  CHECK(at(3, 3, 0) == 0);    // input 3 does not exist
}

TEST_CASE("weight_layout: unpack_conv_weights inverts pack_conv_weights (group 1)") {
  // M = 6, C = 5 (partial blocks both ways), 3x3.
  const std::vector<float> w = counting(6 * 5 * 9);
  const ConvWeights packed = pack_conv_weights(w.data(), 6, 5, 1, 3, 3, false);
  CHECK(unpack_conv_weights(packed.weights.data(), 6, 5, 3, 3) == w);
}

TEST_CASE("weight_layout: Winograd F(2x2, 3x3) weights are G g G^T per position and block") {
  // M = 5, C = 2. Output 4 / input 1 holds g = [1 2 3; 4 5 6; 7 8 9], every other pair zero.
  std::vector<float> w(5 * 2 * 9, 0.0f);
  for (int k = 0; k < 9; ++k) w[(4 * 2 + 1) * 9 + k] = static_cast<float>(k + 1);
  const std::vector<float> u = pack_winograd_weights(w.data(), 5, 2);
  // 16 positions x 2 output blocks x 1 input block x 16 floats.
  REQUIRE(u.size() == 16 * 2 * 16);
  // G g G^T by hand, G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1]: G g = [1 2 3; 6 7.5 9; 2 2.5 3; 7 8 9],
  // then each row r -> [r0, (r0 + r1 + r2) / 2, (r0 - r1 + r2) / 2, r2].
  const float expected[16] = {1, 3, 1, 3, 6, 11.25f, 3.75f, 9, 2, 3.75f, 1.25f, 3, 7, 12, 4, 9};
  for (int pos = 0; pos < 16; ++pos) {
    // Matrix (pos, output block 1, input block 0); row = input lane 1, column = output lane 0.
    const size_t matrix = static_cast<size_t>(pos * 2 + 1);
    CHECK(u[matrix * 16 + 1 * 4 + 0] == doctest::Approx(expected[pos]));
    float others = 0.0f;
    for (size_t k = 0; k < 16; ++k) others += k == 4 ? 0.0f : std::abs(u[matrix * 16 + k]);
    CHECK(others == 0.0f);
    for (size_t k = 0; k < 16; ++k) CHECK(u[static_cast<size_t>(pos * 2) * 16 + k] == 0.0f);  // block 0
  }
}

TEST_CASE("weight_layout: grouped conv2d stores only the input blocks of each group") {
  // M = C = 8, 2 groups of 4: output block 0 reads input block 0 only, block 1 input block 1 only.
  const std::vector<float> w = counting(8 * 4);  // W[m][j] = 4 m + j + 1, j the input within the group
  const ConvWeights packed = pack_conv_weights(w.data(), 8, 8, 2, 1, 1, false);
  CHECK(packed.ranges == std::vector<int32_t>{0, 0, 1, 1, 1, 2});
  REQUIRE(packed.weights.size() == 2 * 16);
  CHECK(packed.weights[(0 * 4 + 2) * 4 + 1] == 4 * 1 + 2 + 1);  // input 2 -> output 1
  CHECK(packed.weights[(1 * 4 + 3) * 4 + 2] == 4 * 6 + 3 + 1);  // input 7 -> output 6

  // Groups smaller than a block: M = C = 4, 2 groups of 2, one block holding both groups, the
  // weights across groups zero.
  const std::vector<float> small = counting(4 * 2);  // W[m][j] = 2 m + j + 1
  const ConvWeights mixed = pack_conv_weights(small.data(), 4, 4, 2, 1, 1, false);
  CHECK(mixed.ranges == std::vector<int32_t>{0, 0, 1});
  CHECK(mixed.weights[1 * 4 + 0] == 2);  // input 1 -> output 0: W[0][1]
  CHECK(mixed.weights[2 * 4 + 0] == 0);  // input 2 -> output 0: another group
  CHECK(mixed.weights[3 * 4 + 2] == 6);  // input 3 -> output 2: W[2][1]
}

TEST_CASE("weight_layout: conv_transpose2d weights are W[C, M/group, kH, kW]") {
  const std::vector<float> w = counting(3 * 2);  // C = 3 inputs, M = 2 outputs: W[c][m] = 2 c + m + 1
  const ConvWeights packed = pack_conv_weights(w.data(), 2, 3, 1, 1, 1, true);
  CHECK(packed.ranges == std::vector<int32_t>{0, 0, 1});
  REQUIRE(packed.weights.size() == 16);
  CHECK(packed.weights[2 * 4 + 1] == 6);  // input 2 -> output 1
  CHECK(packed.weights[1 * 4 + 0] == 3);  // input 1 -> output 0
  CHECK(packed.weights[0 * 4 + 2] == 0);  // output 2 does not exist
}

TEST_CASE("weight_layout: depthwise and linear weights, fp32 and fp16") {
  // Depthwise, 5 channels, 1x2 taps: per channel block, per tap, one vec4.
  const std::vector<float> dw = counting(5 * 2);
  const std::vector<float> depthwise = pack_depthwise_weights(dw.data(), 5, 1, 2);
  REQUIRE(depthwise.size() == 16);
  CHECK(depthwise[0 * 4 + 1] == 3);   // channel 1, tap 0
  CHECK(depthwise[1 * 4 + 3] == 8);   // channel 3, tap 1
  CHECK(depthwise[3 * 4 + 0] == 10);  // channel 4, tap 1
  CHECK(depthwise[3 * 4 + 1] == 0);

  // Linear W[N = 5, K = 3]: per block of 4 outputs, per k, one vec4.
  const std::vector<float> lw = counting(5 * 3);
  const std::vector<float> linear = pack_linear_weights(lw.data(), 5, 3);
  REQUIRE(linear.size() == 24);
  CHECK(linear[(0 * 3 + 1) * 4 + 2] == 8);   // output 2, k 1: W[2][1]
  CHECK(linear[(1 * 3 + 2) * 4 + 0] == 15);  // output 4, k 2
  CHECK(linear[(1 * 3 + 2) * 4 + 1] == 0);

  // The fp16 form of packed weights is the same layout, two bytes a value.
  const std::vector<float> one{1.0f, -2.0f};
  CHECK(halves(encode_floats(pack_linear_weights(one.data(), 1, 2), true)) ==
        std::vector<uint16_t>{0x3C00, 0, 0, 0, 0xC000, 0, 0, 0});
}

TEST_CASE("weight_layout: int8 weights as words of 4 inputs per output, and their sums") {
  // conv2d W[M = 5, C = 6, 1, 2] = 1, 2, 3, ... (as int8): per output block, input block and tap,
  // 16 bytes, byte 4 o + l the weight from input 4 ib + l to output 4 ob + o.
  std::vector<int8_t> w(5 * 6 * 2);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>(i + 1);
  const ConvWeightsInt8 conv = pack_conv_weights_int8(w.data(), 5, 6, 1, 1, 2);
  REQUIRE(conv.weights.size() == 2 * 2 * 2 * 16);
  CHECK(conv.ranges == pack_conv_weights(counting(5 * 6 * 2).data(), 5, 6, 1, 1, 2, false).ranges);
  auto at = [&](int ob, int ib, int t, int o, int l) { return conv.weights[(((ob * 2 + ib) * 2 + t) * 4 + o) * 4 + l]; };
  CHECK(at(0, 0, 1, 2, 3) == w[(2 * 6 + 3) * 2 + 1]);  // W[2][3][tap 1]
  CHECK(at(1, 1, 0, 0, 1) == w[(4 * 6 + 5) * 2 + 0]);  // W[4][5][tap 0]
  CHECK(at(1, 1, 0, 0, 2) == 0);                        // input 6: past the end
  CHECK(at(1, 0, 0, 1, 0) == 0);                        // output 5: past the end
  const std::vector<int32_t> sums = packed_int8_weight_sums(conv.weights, {0, 4}, 5);
  for (int64_t m = 0; m < 5; ++m) {
    int32_t expected = 0;
    for (int64_t k = 0; k < 12; ++k) expected += w[static_cast<size_t>(m * 12 + k)];
    CHECK(sums[static_cast<size_t>(m)] == expected);
  }

  // Depthwise, 5 channels, 2 taps: per channel block and tap, one word of 4 channels.
  const std::vector<int8_t> depthwise = pack_depthwise_weights_int8(w.data(), 5, 1, 2);
  REQUIRE(depthwise.size() == 16);
  CHECK(depthwise[1 * 4 + 3] == w[3 * 2 + 1]);  // channel 3, tap 1
  CHECK(depthwise[3 * 4 + 0] == w[4 * 2 + 1]);  // channel 4, tap 1
  CHECK(depthwise[3 * 4 + 1] == 0);

  // Linear W[N = 5, K = 6]: per output block and block of 4 k, byte 4 o + l = W[4 nb + o][4 kb + l].
  const std::vector<int8_t> linear = pack_linear_weights_int8(w.data(), 5, 6);
  REQUIRE(linear.size() == 2 * 2 * 16);
  CHECK(linear[((0 * 2 + 1) * 4 + 3) * 4 + 1] == w[3 * 6 + 5]);  // W[3][5]
  CHECK(linear[((1 * 2 + 0) * 4 + 0) * 4 + 2] == w[4 * 6 + 2]);  // W[4][2]
  CHECK(linear[((0 * 2 + 1) * 4 + 3) * 4 + 2] == 0);             // k 6: past the end
  CHECK(packed_int8_weight_sums(linear, {0, 2}, 5)[4] == w[24] + w[25] + w[26] + w[27] + w[28] + w[29]);
}
