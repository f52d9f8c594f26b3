// 1-D signals (rank-3 inputs): Conv, ConvTranspose, MaxPool, AveragePool and Resize run as their 2-D
// ops on N x C x 1 x L. Each case runs the imported graph on the reference backend against a direct
// 1-D evaluation of the ONNX operator written out below (zero padding, strides, dilations, groups,
// auto_pad, output_shape, ceil_mode, count_include_pad, interpolation), and Pad on rank 3 as is.
#include <cmath>
#include <functional>
#include <limits>

#include "tests/unit/import/onnx_test_util.h"

namespace mt::test {
namespace {

std::vector<float> signal(size_t count, float phase) {
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = std::sin(0.7f * static_cast<float>(i) + phase) * 2.0f;
  return values;
}

struct Conv1d {
  int64_t n = 1, c = 2, l = 9, o = 3, k = 3, stride = 1, dilation = 1, group = 1;
  std::vector<int64_t> pads{0, 0};
  std::string auto_pad;  // empty: NOTSET
};

// ONNX auto_pad SAME_*: output ceil(L / stride), the odd padding element at the end for SAME_UPPER.
std::vector<int64_t> same_pads(int64_t l, int64_t k, int64_t stride, int64_t dilation, const std::string& mode) {
  const int64_t out = (l + stride - 1) / stride;
  const int64_t total = std::max<int64_t>(0, (out - 1) * stride + (k - 1) * dilation + 1 - l);
  const int64_t begin = mode == "SAME_UPPER" ? total / 2 : total - total / 2;
  return {begin, total - begin};
}

std::vector<float> direct_conv1d(const Conv1d& p, const std::vector<float>& x, const std::vector<float>& w,
                                 const std::vector<float>& bias) {
  std::vector<int64_t> pads = p.pads;
  if (p.auto_pad == "VALID") pads = {0, 0};
  if (p.auto_pad.starts_with("SAME")) pads = same_pads(p.l, p.k, p.stride, p.dilation, p.auto_pad);
  const int64_t out_l = (p.l + pads[0] + pads[1] - (p.k - 1) * p.dilation - 1) / p.stride + 1;
  const int64_t cg = p.c / p.group, og = p.o / p.group;
  std::vector<float> y;
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t o = 0; o < p.o; ++o)
      for (int64_t j = 0; j < out_l; ++j) {
        double sum = bias[static_cast<size_t>(o)];
        for (int64_t c = 0; c < cg; ++c)
          for (int64_t k = 0; k < p.k; ++k) {
            const int64_t i = j * p.stride - pads[0] + k * p.dilation;
            if (i < 0 || i >= p.l) continue;
            sum += x[static_cast<size_t>((n * p.c + (o / og) * cg + c) * p.l + i)] *
                   w[static_cast<size_t>((o * cg + c) * p.k + k)];
          }
        y.push_back(static_cast<float>(sum));
      }
  return y;
}

void check_conv1d(const Conv1d& p) {
  const auto x = signal(static_cast<size_t>(p.n * p.c * p.l), 0.3f);
  const auto w = signal(static_cast<size_t>(p.o * (p.c / p.group) * p.k), 1.1f);
  const auto bias = signal(static_cast<size_t>(p.o), 2.0f);
  OnnxBuilder b(13);
  b.input("x", {p.n, p.c, p.l}).output("y");
  b.init("w", {p.o, p.c / p.group, p.k}, w).init("b", {p.o}, bias);
  auto& conv = b.node("Conv", {"x", "w", "b"}, {"y"}, "conv");
  attr_ints(conv, "strides", {p.stride});
  attr_ints(conv, "dilations", {p.dilation});
  attr_int(conv, "group", p.group);
  if (p.auto_pad.empty()) attr_ints(conv, "pads", p.pads);
  else attr_string(conv, "auto_pad", p.auto_pad);
  Graph g = b.import();
  const auto expected = direct_conv1d(p, x, w, bias);
  REQUIRE(g.tensor("y").shape.size() == 3);
  CHECK(g.tensor("y").numel() == static_cast<int64_t>(expected.size()));
  check_close(run_graph(g, {x}), expected, 1e-4);
}

TEST_CASE("Conv on a rank-3 input lowers to conv2d with H = 1 and matches the 1-D operator") {
  Conv1d p;
  check_conv1d(p);
  Graph g = [&] {
    OnnxBuilder b(13);
    b.input("x", {1, 2, 9}).output("y");
    b.init("w", {3, 2, 3}, std::vector<float>(18, 1.0f));
    b.node("Conv", {"x", "w"}, {"y"}, "conv");
    return b.import();
  }();
  CHECK(ops_of(g) == std::vector<std::string>{"unsqueeze", "conv2d", "squeeze"});
  CHECK(g.tensor(producer(g, "y").inputs[0]).shape == Shape{1, 3, 1, 7});
  CHECK(g.tensor("y").shape == Shape{1, 3, 7});
  CHECK(g.tensor(producer(g, producer(g, "y").inputs[0]).inputs[1]).is_constant());  // the weight folded to 4-D

  SUBCASE("strides, dilations and asymmetric pads") {
    p.stride = 2, p.dilation = 2, p.pads = {1, 2};
    check_conv1d(p);
  }
  SUBCASE("groups and a batch") {
    p.n = 2, p.c = 4, p.o = 6, p.group = 2, p.pads = {1, 1};
    check_conv1d(p);
  }
  SUBCASE("auto_pad") {
    for (const char* mode : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
      INFO(mode);
      p.auto_pad = mode, p.stride = 2, p.k = 4, p.l = 10;
      check_conv1d(p);
    }
  }
}

TEST_CASE("ConvTranspose on a rank-3 input matches the 1-D operator, with output_padding and output_shape") {
  // x: 1 x 2 x 4, w: 2 x 3 x 3 (C_in x C_out x K); y[o][i*s - pad_begin + k*d] += x[c][i] * w[c][o][k].
  const auto x = signal(8, 0.5f), w = signal(18, 1.5f);
  auto direct = [&](int64_t stride, int64_t dilation, int64_t pad_begin, int64_t out_l) {
    std::vector<double> y(static_cast<size_t>(3 * out_l), 0.0);
    for (int64_t c = 0; c < 2; ++c)
      for (int64_t o = 0; o < 3; ++o)
        for (int64_t i = 0; i < 4; ++i)
          for (int64_t k = 0; k < 3; ++k) {
            const int64_t j = i * stride - pad_begin + k * dilation;
            if (j >= 0 && j < out_l)
              y[static_cast<size_t>(o * out_l + j)] += x[static_cast<size_t>(c * 4 + i)] * w[static_cast<size_t>((c * 3 + o) * 3 + k)];
          }
    return std::vector<float>(y.begin(), y.end());
  };
  auto import = [&](const std::function<void(onnx::NodeProto&)>& attrs) {
    OnnxBuilder b(13);
    b.input("x", {1, 2, 4}).output("y");
    b.init("w", {2, 3, 3}, w);
    attrs(b.node("ConvTranspose", {"x", "w"}, {"y"}));
    return b.import();
  };

  // strides 2, dilations 2, pads 1 and 0, output_padding 1: (4-1)*2 + 1 + (3-1)*2 + 1 - 1 = 11.
  Graph g = import([](auto& n) {
    attr_ints(n, "strides", {2});
    attr_ints(n, "dilations", {2});
    attr_ints(n, "pads", {1, 0});
    attr_ints(n, "output_padding", {1});
  });
  CHECK(g.tensor("y").shape == Shape{1, 3, 11});
  check_close(run_graph(g, {x}), direct(2, 2, 1, 11), 1e-4);

  // output_shape 8 of an unpadded 9 (stride 2): one element of padding, at the start (ONNX's rule).
  g = import([](auto& n) {
    attr_ints(n, "strides", {2});
    attr_ints(n, "output_shape", {8});
  });
  CHECK(g.tensor("y").shape == Shape{1, 3, 8});
  check_close(run_graph(g, {x}), direct(2, 1, 1, 8), 1e-4);

  // auto_pad SAME_UPPER: output 4 * 2 = 8, the padding at the end.
  g = import([](auto& n) {
    attr_ints(n, "strides", {2});
    attr_string(n, "auto_pad", "SAME_UPPER");
  });
  CHECK(g.tensor("y").shape == Shape{1, 3, 8});
  check_close(run_graph(g, {x}), direct(2, 1, 0, 8), 1e-4);
}

struct Pool1d {
  int64_t l = 9, k = 3, stride = 2, dilation = 1, ceil_mode = 0, count_include_pad = 0;
  std::vector<int64_t> pads{0, 0};
};

// ONNX pooling on one channel: ceil_mode rounds the output length up, but a window must start
// inside the input or the left padding; average divides by the covered input elements, or by the
// whole window with count_include_pad (padding counted, elements beyond it not).
std::vector<float> direct_pool1d(const Pool1d& p, const std::vector<float>& x, bool max) {
  const int64_t span = p.l + p.pads[0] + p.pads[1] - (p.k - 1) * p.dilation - 1;
  int64_t out_l = (p.ceil_mode ? (span + p.stride - 1) / p.stride : span / p.stride) + 1;
  if (p.ceil_mode && (out_l - 1) * p.stride >= p.l + p.pads[0]) --out_l;
  std::vector<float> y;
  for (int64_t j = 0; j < out_l; ++j) {
    double best = -std::numeric_limits<double>::infinity(), sum = 0;
    int64_t count = 0, padded = 0;
    for (int64_t k = 0; k < p.k; ++k) {
      const int64_t i = j * p.stride - p.pads[0] + k * p.dilation;
      if (i < p.l + p.pads[1]) ++padded;
      if (i < 0 || i >= p.l) continue;
      best = std::max<double>(best, x[static_cast<size_t>(i)]);
      sum += x[static_cast<size_t>(i)];
      ++count;
    }
    y.push_back(static_cast<float>(max ? best : sum / static_cast<double>(p.count_include_pad ? padded : count)));
  }
  return y;
}

void check_pool1d(const Pool1d& p, bool max) {
  const auto x = signal(static_cast<size_t>(p.l), 0.9f);
  OnnxBuilder b(12);
  b.input("x", {1, 1, p.l}).output("y");
  auto& pool = b.node(max ? "MaxPool" : "AveragePool", {"x"}, {"y"}, "pool");
  attr_ints(pool, "kernel_shape", {p.k});
  attr_ints(pool, "strides", {p.stride});
  attr_ints(pool, "pads", p.pads);
  attr_int(pool, "ceil_mode", p.ceil_mode);
  if (max) attr_ints(pool, "dilations", {p.dilation});
  else attr_int(pool, "count_include_pad", p.count_include_pad);
  Graph g = b.import();
  CHECK(ops_of(g) == std::vector<std::string>{"unsqueeze", max ? "max_pool2d" : "avg_pool2d", "squeeze"});
  const auto expected = direct_pool1d(p, x, max);
  CHECK(g.tensor("y").shape == Shape{1, 1, static_cast<int64_t>(expected.size())});
  check_close(run_graph(g, {x}), expected, 1e-5);
}

TEST_CASE("MaxPool and AveragePool on rank-3 inputs match the 1-D operators") {
  Pool1d p;
  for (bool max : {true, false}) {
    INFO((max ? "MaxPool" : "AveragePool"));
    check_pool1d(p, max);
    p.pads = {1, 2};
    check_pool1d(p, max);
    p.ceil_mode = 1, p.l = 10;
    check_pool1d(p, max);
    p.count_include_pad = 1;
    check_pool1d(p, max);
    p = Pool1d{};
  }
  p.dilation = 2, p.pads = {2, 2};
  check_pool1d(p, true);
}

TEST_CASE("Resize of a rank-3 signal: linear (half_pixel), nearest (asymmetric) and Upsample") {
  OnnxBuilder b(13);
  b.input("x", {1, 2, 4}).output("linear").output("nearest");
  b.init("scales", {3}, {1, 1, 2});
  auto& linear = b.node("Resize", {"x", "", "scales"}, {"linear"});
  attr_string(linear, "mode", "linear");
  auto& nearest = b.node("Resize", {"x", "", "scales"}, {"nearest"});
  attr_string(nearest, "coordinate_transformation_mode", "asymmetric");
  attr_string(nearest, "nearest_mode", "floor");
  Graph g = b.import();
  CHECK(producer(g, "linear").op == "squeeze");
  CHECK(g.tensor("linear").shape == Shape{1, 2, 8});
  const std::vector<float> x{0, 4, 8, 4, 1, 2, 3, 4};
  // half_pixel: output i samples (i + 0.5) / 2 - 0.5, clamped to the ends.
  check_close(run_graph(g, {x}, 0), {0, 1, 3, 5, 7, 7, 5, 4, 1, 1.25, 1.75, 2.25, 2.75, 3.25, 3.75, 4});
  check_close(run_graph(g, {x}, 1), {0, 0, 4, 4, 8, 8, 4, 4, 1, 1, 2, 2, 3, 3, 4, 4});

  OnnxBuilder up(9);
  up.input("x", {1, 1, 3}).output("y");
  up.init("scales", {3}, {1, 1, 3});
  up.node("Upsample", {"x", "scales"}, {"y"});
  check_close(run_graph(up.import(), {{1, 2, 3}}), {1, 1, 1, 2, 2, 2, 3, 3, 3});
}

TEST_CASE("Pad of a rank-3 signal: constant, reflect and edge") {
  auto padded = [](const std::string& mode) {
    OnnxBuilder b(13);
    b.input("x", {1, 1, 4}).output("y");
    b.init_i64("pads", {6}, {0, 0, 2, 0, 0, 1});
    attr_string(b.node("Pad", {"x", "pads"}, {"y"}), "mode", mode);
    return run_graph(b.import(), {{1, 2, 3, 4}});
  };
  check_close(padded("constant"), {0, 0, 1, 2, 3, 4, 0});
  check_close(padded("reflect"), {3, 2, 1, 2, 3, 4, 3});
  check_close(padded("edge"), {1, 1, 1, 2, 3, 4, 4});
}

TEST_CASE("a window attribute with the wrong number of values for a 1-D signal is unsupported") {
  OnnxBuilder b(13);
  b.input("x", {1, 1, 8}).output("y");
  auto& pool = b.node("MaxPool", {"x"}, {"y"}, "pool");
  attr_ints(pool, "kernel_shape", {2, 2});
  Error e = import_error(b);
  CHECK(e.code() == ExitCode::unsupported);
  CHECK(std::string(e.what()).find("node 'pool' (MaxPool): kernel_shape has 2 values for a 1-D window") !=
        std::string::npos);
}

}  // namespace
}  // namespace mt::test
