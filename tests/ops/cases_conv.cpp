// Cases of the conv family: kernel sizes 1, 3, 5 and non-square, strides, symmetric and
// asymmetric pads, dilations, groups (grouped, depthwise with multiplier 1 and 2), odd channel
// counts, no bias, fused clamps, batch 2, weights given as inputs; conv_transpose2d likewise
// with output_padding; 3x3 stride-1 convs large enough for the cpu backend's Winograd path, convs
// for its packed GEMM, and weights large enough for XNNPACK's convolution to be sliced.
#include "tests/ops/op_cases.h"

namespace mt::optest {
namespace {

struct ConvCase {
  std::string name;
  int64_t n, c, h, w, m, kh, kw;
  Ints strides = {1, 1}, pads = {0, 0, 0, 0}, dilations = {1, 1};
  int64_t group = 1;
  bool bias = true;
  std::optional<std::pair<double, double>> clamp;
  bool weights_as_input = false;
  Ints output_padding = {0, 0};  // transpose only
};

void add(CaseTable& t, const std::string& op, const ConvCase& c) {
  const bool transpose = op == "conv_transpose2d";
  // conv2d: W[M, C/group, kH, kW]; conv_transpose2d: W[C, M/group, kH, kW].
  const Shape w = transpose ? Shape{c.c, c.m / c.group, c.kh, c.kw} : Shape{c.m, c.c / c.group, c.kh, c.kw};
  OpCase oc{.name = c.name};
  oc.inputs = {in({c.n, c.c, c.h, c.w}, -2, 2), c.weights_as_input ? in(w, -0.5, 0.5) : weight(w, -0.5, 0.5)};
  if (c.bias) oc.inputs.push_back(c.weights_as_input ? in({c.m}) : weight({c.m}));
  oc.attrs = {{"strides", c.strides}, {"pads", c.pads}, {"dilations", c.dilations}, {"group", c.group}};
  if (transpose) oc.attrs["output_padding"] = c.output_padding;
  if (c.clamp) {
    oc.attrs["act_min"] = c.clamp->first;
    oc.attrs["act_max"] = c.clamp->second;
  }
  t.add(op, std::move(oc));
}

}  // namespace

void add_conv_cases(CaseTable& t) {
  const std::vector<ConvCase> convs = {
      {.name = "1x1 pointwise 16->24", .n = 1, .c = 16, .h = 7, .w = 7, .m = 24, .kh = 1, .kw = 1},
      {.name = "3x3 s1 p1 3->8", .n = 1, .c = 3, .h = 9, .w = 9, .m = 8, .kh = 3, .kw = 3, .pads = {1, 1, 1, 1}},
      {.name = "3x3 s2 p1 odd 5->7", .n = 1, .c = 5, .h = 11, .w = 10, .m = 7, .kh = 3, .kw = 3, .strides = {2, 2}, .pads = {1, 1, 1, 1}},
      {.name = "asymmetric pads 0,1,1,2", .n = 1, .c = 4, .h = 8, .w = 8, .m = 6, .kh = 3, .kw = 3, .strides = {2, 2}, .pads = {0, 1, 1, 2}},
      {.name = "5x5 s1 p2", .n = 1, .c = 3, .h = 12, .w = 12, .m = 4, .kh = 5, .kw = 5, .pads = {2, 2, 2, 2}},
      {.name = "7x7 s2 p3 stem", .n = 1, .c = 3, .h = 20, .w = 20, .m = 8, .kh = 7, .kw = 7, .strides = {2, 2}, .pads = {3, 3, 3, 3}},
      {.name = "non-square 1x3 and strides 1,2", .n = 1, .c = 4, .h = 6, .w = 9, .m = 5, .kh = 1, .kw = 3, .strides = {1, 2}, .pads = {0, 1, 0, 1}},
      {.name = "dilation 2", .n = 1, .c = 4, .h = 10, .w = 10, .m = 4, .kh = 3, .kw = 3, .pads = {2, 2, 2, 2}, .dilations = {2, 2}},
      {.name = "dilations 1,3", .n = 1, .c = 2, .h = 9, .w = 11, .m = 3, .kh = 3, .kw = 3, .dilations = {1, 3}},
      {.name = "groups 2", .n = 1, .c = 8, .h = 6, .w = 6, .m = 6, .kh = 3, .kw = 3, .pads = {1, 1, 1, 1}, .group = 2},
      {.name = "groups 3 odd", .n = 1, .c = 9, .h = 5, .w = 7, .m = 15, .kh = 3, .kw = 3, .strides = {2, 1}, .pads = {1, 1, 1, 1}, .group = 3},
      {.name = "depthwise 3x3 s1", .n = 1, .c = 12, .h = 8, .w = 8, .m = 12, .kh = 3, .kw = 3, .pads = {1, 1, 1, 1}, .group = 12},
      {.name = "depthwise 3x3 s2 odd channels", .n = 1, .c = 7, .h = 9, .w = 9, .m = 7, .kh = 3, .kw = 3, .strides = {2, 2}, .pads = {1, 1, 1, 1}, .group = 7},
      {.name = "depthwise 5x5 multiplier 2", .n = 1, .c = 5, .h = 10, .w = 10, .m = 10, .kh = 5, .kw = 5, .pads = {2, 2, 2, 2}, .group = 5},
      {.name = "no bias", .n = 1, .c = 3, .h = 6, .w = 6, .m = 4, .kh = 3, .kw = 3, .bias = false},
      {.name = "fused relu6", .n = 1, .c = 4, .h = 6, .w = 6, .m = 8, .kh = 3, .kw = 3, .pads = {1, 1, 1, 1}, .clamp = std::pair{0.0, 6.0}},
      {.name = "fused relu", .n = 1, .c = 4, .h = 5, .w = 5, .m = 4, .kh = 1, .kw = 1, .clamp = std::pair{0.0, 3.4028234663852886e+38}},
      {.name = "batch 2", .n = 2, .c = 3, .h = 7, .w = 5, .m = 5, .kh = 3, .kw = 3, .pads = {1, 1, 1, 1}},
      {.name = "1x1 stride 2", .n = 1, .c = 8, .h = 9, .w = 9, .m = 16, .kh = 1, .kw = 1, .strides = {2, 2}},
      {.name = "kernel covers the input", .n = 1, .c = 6, .h = 4, .w = 4, .m = 3, .kh = 4, .kw = 4},
      {.name = "weights as inputs", .n = 1, .c = 3, .h = 5, .w = 5, .m = 2, .kh = 3, .kw = 3, .weights_as_input = true},
      // Large enough for the cpu backend's Winograd (>= 16 channels; F(4x4, 3x3) from 36 tiles of
      // 4x4 outputs, else F(2x2, 3x3) from 36 tiles of 2x2), at the default tolerance (1e-4 of the
      // output range): partial tiles, no pads.
      {.name = "winograd 3x3 s1 p1 17->24 partial tiles", .n = 1, .c = 17, .h = 26, .w = 23, .m = 24, .kh = 3, .kw = 3, .pads = {1, 1, 1, 1}},
      {.name = "winograd 3x3 s1 batch 2 fused relu6 no bias", .n = 2, .c = 16, .h = 26, .w = 26, .m = 20, .kh = 3, .kw = 3, .bias = false, .clamp = std::pair{0.0, 6.0}},
      {.name = "winograd F(2x2) 3x3 s1 p1 16->18 partial tiles", .n = 1, .c = 16, .h = 13, .w = 15, .m = 18, .kh = 3, .kw = 3, .pads = {1, 1, 1, 1}},
      // 1x1 stride 1: the cpu backend's packed GEMM on AVX-512 CPUs (70 rows: 8 blocks of 8 and 6;
      // 40 columns: a full and a partial 16-lane half of a 32-column panel).
      {.name = "1x1 pointwise batch 2 odd pixels 19->40 fused relu6", .n = 2, .c = 19, .h = 5, .w = 7, .m = 40, .kh = 1, .kw = 1, .clamp = std::pair{0.0, 6.0}},
      // 16 or more input channels, one group: on AVX-512 CPUs the cpu backend's indirect GEMM
      // (packed_gemm.h): strides, dilations, asymmetric pads, non-square kernels, 7-row blocks.
      {.name = "indirect 3x3 strides 2,1 dilation 2 asymmetric pads 16->33 batch 2", .n = 2, .c = 16, .h = 11, .w = 9, .m = 33, .kh = 3, .kw = 3, .strides = {2, 1}, .pads = {0, 1, 2, 1}, .dilations = {2, 2}},
      {.name = "indirect 5x3 s1 pads 2,1 20->17 fused relu6 no bias", .n = 1, .c = 20, .h = 7, .w = 7, .m = 17, .kh = 5, .kw = 3, .pads = {2, 1, 2, 1}, .bias = false, .clamp = std::pair{0.0, 6.0}},
      // Fewer channels but 128 to 512 weights per output channel (as in a 7x7 stem): the
      // packed GEMM's gathered rows, with kernel rows partly in the padding.
      {.name = "gathered 5x5 dilations 2,1 asymmetric pads 6->40 batch 2", .n = 2, .c = 6, .h = 12, .w = 11, .m = 40, .kh = 5, .kw = 5, .pads = {3, 1, 2, 4}, .dilations = {2, 1}},
      {.name = "gathered 4x4 strides 2,3 8->17 fused relu", .n = 1, .c = 8, .h = 13, .w = 16, .m = 17, .kh = 4, .kw = 4, .strides = {2, 3}, .pads = {1, 2, 1, 0}, .clamp = std::pair{0.0, 3.4028234663852886e+38}},
      // Weights over 256 KB: XNNPACK's convolution (PlanOptions::packed_gemm off or no AVX-512, else the
      // indirect GEMM) slices the output channels into several operators (conv.cpp,
      // gemm_slices.h), here 96 + 24 and 256 + 44.
      {.name = "sliced output channels 3x3 s2 64->120 batch 2 fused relu", .n = 2, .c = 64, .h = 9, .w = 9, .m = 120, .kh = 3, .kw = 3, .strides = {2, 2}, .pads = {1, 1, 1, 1}, .clamp = std::pair{0.0, 3.4028234663852886e+38}},
      {.name = "sliced output channels 1x1 s2 256->300 no bias", .n = 1, .c = 256, .h = 5, .w = 5, .m = 300, .kh = 1, .kw = 1, .strides = {2, 2}, .bias = false},
      // Depthwise 3x3 and 5x5: on AVX-512 CPUs the cpu backend's own kernel (depthwise_conv.h), rows
      // wide enough for its unmasked 8- and 4-pixel groups, a partial 16-channel block, dilation.
      {.name = "depthwise 3x3 s1 p1 40 channels batch 2 fused relu6", .n = 2, .c = 40, .h = 6, .w = 21, .m = 40, .kh = 3, .kw = 3, .pads = {1, 1, 1, 1}, .group = 40, .clamp = std::pair{0.0, 6.0}},
      {.name = "depthwise 5x5 s2 asymmetric pads 24 channels", .n = 1, .c = 24, .h = 13, .w = 18, .m = 24, .kh = 5, .kw = 5, .strides = {2, 2}, .pads = {1, 2, 2, 1}, .group = 24},
      {.name = "depthwise 5x5 dilation 2 p4 20 channels", .n = 1, .c = 20, .h = 11, .w = 14, .m = 20, .kh = 5, .kw = 5, .pads = {4, 4, 4, 4}, .dilations = {2, 2}, .group = 20},
      // 1 to 4 input channels, 32 to 64 output ones: on AVX-512 CPUs the cpu backend's stem kernel
      // (stem_conv.h), reading the NCHW input as it is.
      {.name = "stem 3x3 s2 p1 3->32 fused relu6", .n = 1, .c = 3, .h = 9, .w = 61, .m = 32, .kh = 3, .kw = 3, .strides = {2, 2}, .pads = {1, 1, 1, 1}, .clamp = std::pair{0.0, 6.0}},
      {.name = "stem 3x3 s2 p1 3->64 batch 2 fused relu6", .n = 2, .c = 3, .h = 19, .w = 23, .m = 64, .kh = 3, .kw = 3, .strides = {2, 2}, .pads = {1, 1, 1, 1}, .clamp = std::pair{0.0, 6.0}},
      {.name = "stem 7x7 s2 p3 asymmetric 4->48", .n = 1, .c = 4, .h = 16, .w = 18, .m = 48, .kh = 7, .kw = 7, .strides = {2, 2}, .pads = {3, 2, 3, 3}},
      // A dilated indirect GEMM whose outer taps lie in the padding for whole row blocks (left out).
      {.name = "indirect 3x3 dilation 6 p6 on 7x7 16->20", .n = 1, .c = 16, .h = 7, .w = 7, .m = 20, .kh = 3, .kw = 3, .pads = {6, 6, 6, 6}, .dilations = {6, 6}},
      // A plane of at least 56x56 pixels: vulkan's pointwise shader takes 8 a time (ops_conv.cpp),
      // 3249 of them, one left over.
      {.name = "1x1 pointwise 57x57 6->10", .n = 1, .c = 6, .h = 57, .w = 57, .m = 10, .kh = 1, .kw = 1},
  };
  for (const auto& c : convs) add(t, "conv2d", c);

  const std::vector<ConvCase> transposed = {
      {.name = "2x2 s2 upsample", .n = 1, .c = 8, .h = 4, .w = 5, .m = 4, .kh = 2, .kw = 2, .strides = {2, 2}},
      {.name = "3x3 s2 p1 output_padding 1", .n = 1, .c = 4, .h = 5, .w = 5, .m = 6, .kh = 3, .kw = 3, .strides = {2, 2}, .pads = {1, 1, 1, 1}, .output_padding = {1, 1}},
      {.name = "3x3 s1 p1 odd channels", .n = 1, .c = 5, .h = 6, .w = 7, .m = 3, .kh = 3, .kw = 3, .pads = {1, 1, 1, 1}},
      {.name = "4x4 s2 p1 asymmetric pads", .n = 1, .c = 3, .h = 4, .w = 4, .m = 5, .kh = 4, .kw = 4, .strides = {2, 2}, .pads = {1, 2, 0, 1}},
      {.name = "groups 2", .n = 1, .c = 4, .h = 5, .w = 5, .m = 6, .kh = 3, .kw = 3, .strides = {2, 2}, .group = 2},
      {.name = "depthwise", .n = 1, .c = 6, .h = 5, .w = 5, .m = 6, .kh = 3, .kw = 3, .strides = {2, 2}, .pads = {1, 1, 1, 1}, .group = 6},
      {.name = "dilation 2, no bias", .n = 1, .c = 3, .h = 5, .w = 5, .m = 2, .kh = 3, .kw = 3, .dilations = {2, 2}, .bias = false},
      {.name = "strides 1,3 output_padding 0,2", .n = 1, .c = 2, .h = 4, .w = 4, .m = 3, .kh = 3, .kw = 3, .strides = {1, 3}, .output_padding = {0, 2}},
      {.name = "batch 2, fused relu6", .n = 2, .c = 4, .h = 3, .w = 3, .m = 4, .kh = 3, .kw = 3, .strides = {2, 2}, .clamp = std::pair{0.0, 6.0}},
      // The cpu backend's direct kernel (XNNPACK packs weights only at creation).
      {.name = "weights as inputs, groups 2, strides 2,1, dilations 2,1, asymmetric pads, batch 2", .n = 2, .c = 4, .h = 4, .w = 5, .m = 6, .kh = 3, .kw = 2, .strides = {2, 1}, .pads = {1, 0, 2, 1}, .dilations = {2, 1}, .group = 2, .weights_as_input = true, .output_padding = {1, 0}},
  };
  for (const auto& c : transposed) add(t, "conv_transpose2d", c);
}

}  // namespace mt::optest
