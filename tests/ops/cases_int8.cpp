// int8 cases of the quantized scheme (lib/quant): per-tensor asymmetric activations, weights
// int8 symmetric per output channel, int32 bias. The reference int8 kernels are the oracle; the
// cpu backend runs its AVX512-VNNI kernels (int8_vnni.h) or XNNPACK's qs8 / qc8 operators (both
// paths: the option matrix, tests/ops/option_matrix.cpp, runs conv2d and linear with both), whose
// requantization (fp32 multiplier, round
// half to even) is the reference's but may land one step away where a product falls on a
// rounding boundary: integer tolerance 1 (one int8 step). Output scales are chosen so that most
// outputs fall inside the int8 range (a case that only saturates would test nothing).
#include "tests/ops/op_cases.h"

namespace mt::optest {
namespace {

QuantParams per_tensor(float scale, int32_t zero_point) { return QuantParams{{scale}, {zero_point}, -1}; }

CaseInput int8_input(Shape shape, float scale, int32_t zero_point) {
  CaseInput x = typed(DType::i8, std::move(shape), -128, 128);
  x.quant = per_tensor(scale, zero_point);
  return x;
}

// Symmetric int8 weights with one scale per output channel (0.006 .. 0.014, varied).
CaseInput int8_weights(Shape shape) {
  const int64_t channels = shape[0];
  CaseInput w = typed(DType::i8, std::move(shape), -127, 128, true);
  QuantParams q{.axis = 0};
  for (int64_t c = 0; c < channels; ++c) {
    q.scales.push_back(0.006f + 0.008f * static_cast<float>(c % 5) / 4.0f);
    q.zero_points.push_back(0);
  }
  w.quant = q;
  return w;
}

CaseInput int32_bias(int64_t channels) { return typed(DType::i32, {channels}, -20000, 20000, true); }

struct ConvInt8 {
  std::string name;
  Shape x, w;
  Ints strides, pads;
  int64_t group;
  float y_scale;
  bool bias = true;
  bool relu = false;
  Ints dilations = {1, 1};
};

}  // namespace

void add_int8_cases(CaseTable& t) {
  const std::vector<ConvInt8> convs = {
      {"int8 3x3 pads 1 8->16 bias", {1, 8, 9, 9}, {16, 8, 3, 3}, {1, 1}, {1, 1, 1, 1}, 1, 0.3f},
      {"int8 3x3 s2 asymmetric pads no bias", {2, 6, 8, 7}, {5, 6, 3, 3}, {2, 2}, {0, 1, 1, 0}, 1, 0.3f, false},
      {"int8 depthwise 3x3 s2 relu", {1, 8, 10, 10}, {8, 1, 3, 3}, {2, 2}, {1, 1, 1, 1}, 8, 0.08f, true, true},
      {"int8 pointwise 8->12", {1, 8, 5, 6}, {12, 8, 1, 1}, {1, 1}, {0, 0, 0, 0}, 1, 0.08f},
      {"int8 grouped 3x3 groups 2", {1, 8, 6, 6}, {6, 4, 3, 3}, {1, 1}, {1, 1, 1, 1}, 2, 0.2f},
      // Edges of the AVX512-VNNI kernels (kernels/cpu/engines/int8_vnni.h): channel counts off multiples
      // of 4 (GEMM k steps) and 16 / 32 (depthwise blocks, GEMM panels), strides, padding,
      // dilation, 3x3 and 5x5 depthwise, rows past an 8-row block.
      {"int8 pointwise 17->33 odd channels", {1, 17, 5, 7}, {33, 17, 1, 1}, {1, 1}, {0, 0, 0, 0}, 1, 0.35f},
      {"int8 pointwise 3->70 relu", {2, 3, 3, 5}, {70, 3, 1, 1}, {1, 1}, {0, 0, 0, 0}, 1, 0.15f, true, true},
      {"int8 1x1 s2 12->20", {1, 12, 7, 7}, {20, 12, 1, 1}, {2, 2}, {0, 0, 0, 0}, 1, 0.3f},
      {"int8 3x3 dilation 2 pads 2 13->19", {1, 13, 9, 8}, {19, 13, 3, 3}, {1, 1}, {2, 2, 2, 2}, 1, 0.6f, true, false,
       {2, 2}},
      {"int8 5x5 s2 pads 2 5->9 no bias", {1, 5, 11, 10}, {9, 5, 5, 5}, {2, 2}, {2, 2, 2, 2}, 1, 0.6f, false},
      {"int8 7x7 s2 pads 3 stem 3->16 relu", {1, 3, 16, 16}, {16, 3, 7, 7}, {2, 2}, {3, 3, 3, 3}, 1, 0.6f, true,
       true},
      {"int8 depthwise 3x3 s1 pads 1, 19 channels", {2, 19, 7, 9}, {19, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, 19, 0.25f},
      {"int8 depthwise 3x3 s2 asymmetric pads, 40 channels", {1, 40, 9, 8}, {40, 1, 3, 3}, {2, 2}, {0, 0, 1, 1}, 40,
       0.25f},
      {"int8 depthwise 3x3 dilation 2, 5 channels no bias", {1, 5, 9, 9}, {5, 1, 3, 3}, {1, 1}, {2, 2, 2, 2}, 5,
       0.25f, false, false, {2, 2}},
      {"int8 depthwise 5x5 s1 pads 2, 37 channels relu", {1, 37, 8, 7}, {37, 1, 5, 5}, {1, 1}, {2, 2, 2, 2}, 37,
       0.2f, true, true},
      {"int8 depthwise 5x5 s2 pads 2, 24 channels", {1, 24, 11, 11}, {24, 1, 5, 5}, {2, 2}, {2, 2, 2, 2}, 24, 0.4f},
      // Long sums: the vulkan shaders without int8 dot products add in fp32 and flush into int32
      // every 1024 products (shaders/conv2d_int8.glsl): 30 input blocks of 3x3 taps, 275 of 1x1.
      {"int8 3x3 pads 1 120->8, long sums", {1, 120, 5, 5}, {8, 120, 3, 3}, {1, 1}, {1, 1, 1, 1}, 1, 1.5f},
      {"int8 pointwise 1100->6, long sums", {1, 1100, 2, 3}, {6, 1100, 1, 1}, {1, 1}, {0, 0, 0, 0}, 1, 1.5f},
  };
  for (const ConvInt8& c : convs) {
    OpCase oc{.name = c.name, .output_quant = {per_tensor(c.y_scale, -5)}, .integer_tolerance = 1};
    oc.inputs = {int8_input(c.x, 0.05f, 3), int8_weights(c.w)};
    if (c.bias) oc.inputs.push_back(int32_bias(c.w[0]));
    oc.attrs = {{"strides", c.strides}, {"pads", c.pads}, {"dilations", c.dilations}, {"group", c.group}};
    if (c.relu) oc.attrs["act_min"] = 0.0;
    t.add("conv2d", std::move(oc));
  }
  t.add("linear", {.name = "int8 [3,40] x [10,40]^T + bias",
                   .inputs = {int8_input({3, 40}, 0.05f, -4), int8_weights({10, 40}), int32_bias(10)},
                   .output_quant = {per_tensor(0.15f, 7)}, .integer_tolerance = 1});
  t.add("linear", {.name = "int8 [2,3,16] no bias, relu6",
                   .inputs = {int8_input({2, 3, 16}, 0.05f, 0), int8_weights({5, 16})},
                   .attrs = {{"act_min", 0.0}, {"act_max", 6.0}},
                   .output_quant = {per_tensor(0.05f, -128)}, .integer_tolerance = 1});
  t.add("linear", {.name = "int8 odd k [11,37] x [19,37]^T + bias, relu",
                   .inputs = {int8_input({11, 37}, 0.05f, 9), int8_weights({19, 37}), int32_bias(19)},
                   .attrs = {{"act_min", 0.0}},
                   .output_quant = {per_tensor(0.2f, -100)}, .integer_tolerance = 1});
  t.add("linear", {.name = "int8 k 1300 (split across a vulkan workgroup), 6 outputs",
                   .inputs = {int8_input({2, 1300}, 0.05f, 5), int8_weights({6, 1300}), int32_bias(6)},
                   .output_quant = {per_tensor(1.5f, 0)}, .integer_tolerance = 1});
  t.add("linear", {.name = "int8 k 3, 40 outputs",
                   .inputs = {int8_input({4, 3}, 0.05f, -100), int8_weights({40, 3})},
                   .output_quant = {per_tensor(0.1f, 0)}, .integer_tolerance = 1});
  t.add("add", {.name = "int8 same shapes",
                .inputs = {int8_input({1, 4, 5, 5}, 0.05f, 2), int8_input({1, 4, 5, 5}, 0.08f, -5)},
                .output_quant = {per_tensor(0.1f, 0)}, .integer_tolerance = 1});
  t.add("add", {.name = "int8 broadcast [4,1,1], relu",
                .inputs = {int8_input({2, 4, 3, 5}, 0.05f, 2), int8_input({4, 1, 1}, 0.03f, 9)},
                .attrs = {{"act_min", 0.0}},
                .output_quant = {per_tensor(0.06f, -128)}, .integer_tolerance = 1});
  t.add("mul", {.name = "int8 same shapes",
                .inputs = {int8_input({1, 4, 5, 5}, 0.05f, 2), int8_input({1, 4, 5, 5}, 0.02f, -3)},
                .output_quant = {per_tensor(0.1f, 4)}, .integer_tolerance = 1});
  t.add("mul", {.name = "int8 broadcast [1,6,1,1] (squeeze-excitation)",
                .inputs = {int8_input({1, 6, 4, 4}, 0.05f, 0), int8_input({1, 6, 1, 1}, 1.0f / 256, -128)},
                .output_quant = {per_tensor(0.04f, 0)}, .integer_tolerance = 1});
  // The VNNI mul (int8_mul): a broadcast of 16 values or more per row, either operand first, two
  // images, odd channel counts; elementwise at a count off the 16-value steps.
  t.add("mul", {.name = "int8 squeeze-excitation [2,37,3,5] x [2,37,1,1]",
                .inputs = {int8_input({2, 37, 3, 5}, 0.05f, -6), int8_input({2, 37, 1, 1}, 1.0f / 256, -128)},
                .output_quant = {per_tensor(0.03f, 2)},
                .integer_tolerance = 1});
  t.add("mul", {.name = "int8 broadcast operand first [1,20,1,1] x [1,20,4,3]",
                .inputs = {int8_input({1, 20, 1, 1}, 0.02f, 11), int8_input({1, 20, 4, 3}, 0.04f, -1)},
                .output_quant = {per_tensor(0.05f, -3)},
                .integer_tolerance = 1});
  t.add("mul", {.name = "int8 same shapes, 67 values",
                .inputs = {int8_input({67}, 0.05f, 2), int8_input({67}, 0.03f, -8)},
                .output_quant = {per_tensor(0.09f, 1)},
                .integer_tolerance = 1});
  t.add("max_pool2d", {.name = "int8 3x3 s2 pads 1",
                       .inputs = {int8_input({1, 5, 9, 9}, 0.05f, 3)},
                       .attrs = {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}},
                                 {"dilations", Ints{1, 1}}},
                       .output_quant = {per_tensor(0.05f, 3)}});
  // The AVX512 max pool (int8_pool_vnni.cpp): blocks of 64 channels and a tail, two images,
  // dilation, ceil_mode windows hanging past the image, asymmetric pads, and one large enough
  // (24 KiB of output) to be split between two threads.
  t.add("max_pool2d", {.name = "int8 2x2 s2 dilation 2 ceil_mode, 2 images of 70 channels",
                       .inputs = {int8_input({2, 70, 9, 8}, 0.05f, -7)},
                       .attrs = {{"kernel_shape", Ints{2, 2}},
                                 {"strides", Ints{2, 2}},
                                 {"pads", Ints{0, 1, 1, 0}},
                                 {"dilations", Ints{2, 2}},
                                 {"ceil_mode", int64_t{1}}},
                       .output_quant = {per_tensor(0.05f, -7)}});
  t.add("max_pool2d", {.name = "int8 3x3 s2 pads 1, 24x64x64 (split across threads)",
                       .inputs = {int8_input({1, 24, 64, 64}, 0.05f, 3)},
                       .attrs = {{"kernel_shape", Ints{3, 3}},
                                 {"strides", Ints{2, 2}},
                                 {"pads", Ints{1, 1, 1, 1}},
                                 {"dilations", Ints{1, 1}}},
                       .output_quant = {per_tensor(0.05f, 3)}});
  t.add("avg_pool2d", {.name = "int8 3x3 s2 pads 1, count_include_pad 0",
                       .inputs = {int8_input({1, 5, 9, 9}, 0.05f, 3)},
                       .attrs = {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}},
                                 {"count_include_pad", int64_t{0}}},
                       .output_quant = {per_tensor(0.03f, -4)}, .integer_tolerance = 1});
  t.add("avg_pool2d", {.name = "int8 2x2 s2 ceil_mode pads 1, count_include_pad 1",
                       .inputs = {int8_input({2, 3, 7, 6}, 0.04f, -9)},
                       .attrs = {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}},
                                 {"count_include_pad", int64_t{1}}, {"ceil_mode", int64_t{1}}},
                       .output_quant = {per_tensor(0.02f, 5)}, .integer_tolerance = 1});
  t.add("global_avg_pool", {.name = "int8 1x16x7x7", .inputs = {int8_input({1, 16, 7, 7}, 0.05f, 3)},
                            .output_quant = {per_tensor(0.01f, -2)}, .integer_tolerance = 1});
  t.add("global_avg_pool", {.name = "int8 2x70x5x3 (blocks of 64 channels and a tail)",
                            .inputs = {int8_input({2, 70, 5, 3}, 0.05f, -20)},
                            .output_quant = {per_tensor(0.02f, 7)},
                            .integer_tolerance = 1});
  t.add("sigmoid", {.name = "int8 output 1/256 zp -128", .inputs = {int8_input({1, 3, 4, 5}, 0.05f, 0)},
                    .output_quant = {per_tensor(1.0f / 256, -128)}, .integer_tolerance = 1});
  t.add("hardswish", {.name = "int8 scale 0.04 zp 10", .inputs = {int8_input({1, 3, 4, 5}, 0.04f, 10)},
                      .output_quant = {per_tensor(0.03f, -60)}});
  t.add("silu", {.name = "int8 scale 0.05 zp -20",
                 .inputs = {int8_input({1, 3, 4, 5}, 0.05f, -20)},
                 .output_quant = {per_tensor(0.03f, -100)}});
  t.add("hardsigmoid", {.name = "int8 alpha 1/6 beta 0.5", .inputs = {int8_input({1, 6, 1, 1}, 0.05f, 0)},
                        .attrs = {{"alpha", 1.0 / 6}, {"beta", 0.5}},
                        .output_quant = {per_tensor(1.0f / 255, -128)}});
  t.add("concat", {.name = "int8 channels, shared parameters",
                   .inputs = {int8_input({1, 3, 4, 4}, 0.05f, 3), int8_input({1, 5, 4, 4}, 0.05f, 3)},
                   .attrs = {{"axis", int64_t{1}}}, .output_quant = {per_tensor(0.05f, 3)}});
  t.add("concat", {.name = "int8 channels, one input requantized (NHWC blocks)",
                   .inputs = {int8_input({2, 3, 4, 4}, 0.05f, 3), int8_input({2, 5, 4, 4}, 0.02f, -9)},
                   .attrs = {{"axis", int64_t{1}}},
                   .output_quant = {per_tensor(0.05f, 3)}});
  t.add("concat", {.name = "int8 requantized inputs",
                   .inputs = {int8_input({2, 3}, 0.05f, 3), int8_input({2, 4}, 0.02f, -1)},
                   .attrs = {{"axis", int64_t{1}}},
                   .output_quant = {per_tensor(0.04f, 0)}});
}

}  // namespace mt::optest
