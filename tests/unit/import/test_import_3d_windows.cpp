// Conv, ConvTranspose, MaxPool and AveragePool on rank-5 inputs (3-D windows): 2-D ones of the depth
// planes, combined along the depth. Checked on the reference backend against a direct 3-D
// evaluation of the ONNX operators (strides, dilations, asymmetric pads, groups, auto_pad, bias,
// ceil_mode, count_include_pad).
#include <cmath>
#include <limits>

#include "tests/unit/import/onnx_test_util.h"

namespace mt::test {
namespace {

struct Conv3d {
  int64_t c = 2, o = 4, group = 1;
  std::vector<int64_t> size{5, 4, 6}, kernel{3, 2, 3}, strides{1, 1, 1}, dilations{1, 1, 1}, pads{0, 0, 0, 0, 0, 0};
  std::string auto_pad;
};

std::vector<float> values(size_t count, float phase) {
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = std::sin(0.37f * static_cast<float>(i) + phase);
  return v;
}

void check_conv3d(Conv3d p) {
  const int64_t cg = p.c / p.group, og = p.o / p.group;
  const auto x = values(static_cast<size_t>(p.c * p.size[0] * p.size[1] * p.size[2]), 0.2f);
  const auto w = values(static_cast<size_t>(p.o * cg * p.kernel[0] * p.kernel[1] * p.kernel[2]), 1.3f);
  const auto bias = values(static_cast<size_t>(p.o), 2.1f);
  OnnxBuilder b(13);
  b.input("x", {1, p.c, p.size[0], p.size[1], p.size[2]}).output("y");
  b.init("w", {p.o, cg, p.kernel[0], p.kernel[1], p.kernel[2]}, w).init("b", {p.o}, bias);
  auto& conv = b.node("Conv", {"x", "w", "b"}, {"y"}, "conv");
  attr_ints(conv, "strides", p.strides);
  attr_ints(conv, "dilations", p.dilations);
  attr_int(conv, "group", p.group);
  if (p.auto_pad.empty()) attr_ints(conv, "pads", p.pads);
  else attr_string(conv, "auto_pad", p.auto_pad);
  Graph g = b.import();

  if (!p.auto_pad.empty())  // ONNX's SAME_UPPER: output ceil(size / stride), the odd element at the end
    for (size_t a = 0; a < 3; ++a) {
      const int64_t out = (p.size[a] + p.strides[a] - 1) / p.strides[a];
      const int64_t total =
          std::max<int64_t>(0, (out - 1) * p.strides[a] + (p.kernel[a] - 1) * p.dilations[a] + 1 - p.size[a]);
      p.pads[a] = total / 2, p.pads[a + 3] = total - total / 2;
    }
  Shape out{1, p.o};
  for (size_t a = 0; a < 3; ++a)
    out.push_back((p.size[a] + p.pads[a] + p.pads[a + 3] - (p.kernel[a] - 1) * p.dilations[a] - 1) / p.strides[a] + 1);
  REQUIRE(g.tensor("y").shape == out);
  std::vector<float> expected;
  for (int64_t o = 0; o < p.o; ++o)
    for (int64_t d = 0; d < out[2]; ++d)
      for (int64_t h = 0; h < out[3]; ++h)
        for (int64_t v = 0; v < out[4]; ++v) {
          double sum = bias[static_cast<size_t>(o)];
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t kd = 0; kd < p.kernel[0]; ++kd)
              for (int64_t kh = 0; kh < p.kernel[1]; ++kh)
                for (int64_t kw = 0; kw < p.kernel[2]; ++kw) {
                  const int64_t i = d * p.strides[0] - p.pads[0] + kd * p.dilations[0];
                  const int64_t j = h * p.strides[1] - p.pads[1] + kh * p.dilations[1];
                  const int64_t k = v * p.strides[2] - p.pads[2] + kw * p.dilations[2];
                  if (i < 0 || j < 0 || k < 0 || i >= p.size[0] || j >= p.size[1] || k >= p.size[2]) continue;
                  const int64_t channel = (o / og) * cg + c;
                  sum += x[static_cast<size_t>(((channel * p.size[0] + i) * p.size[1] + j) * p.size[2] + k)] *
                         w[static_cast<size_t>((((o * cg + c) * p.kernel[0] + kd) * p.kernel[1] + kh) * p.kernel[2] + kw)];
                }
          expected.push_back(static_cast<float>(sum));
        }
  check_close(run_graph(g, {x}), expected, 1e-4);
}

TEST_CASE("Conv on a rank-5 input matches the 3-D operator") {
  Conv3d p;
  check_conv3d(p);
  SUBCASE("strides, dilations and asymmetric pads") {
    p.strides = {2, 1, 2}, p.dilations = {2, 1, 1}, p.pads = {1, 0, 2, 2, 1, 0};
    check_conv3d(p);
  }
  SUBCASE("groups") {
    p.c = 4, p.o = 6, p.group = 2, p.pads = {1, 1, 1, 1, 1, 1};
    check_conv3d(p);
  }
  SUBCASE("auto_pad SAME_UPPER with a depth stride") {
    p.auto_pad = "SAME_UPPER", p.strides = {2, 2, 1}, p.kernel = {2, 3, 3};
    check_conv3d(p);
  }
}

TEST_CASE("ConvTranspose on a rank-5 input matches the 3-D operator") {
  // x: 1 x 2 x D x H x W, w: 2 x 3 x K (C_in x C_out x Kd x Kh x Kw), bias 3;
  // y[o][i*s - p_begin + k*dil] (per axis) += x[c][i] * w[c][o][k].
  struct Case {
    std::vector<int64_t> strides, dilations, pads, output_padding, output_shape;
  };
  const std::vector<int64_t> size{3, 2, 4}, kernel{3, 2, 2};
  const auto x = values(static_cast<size_t>(2 * 3 * 2 * 4), 0.4f), w = values(2 * 3 * 3 * 2 * 2, 1.9f);
  const auto bias = values(3, 0.8f);
  for (const Case& t : {Case{{1, 1, 1}, {1, 1, 1}, {0, 0, 0, 0, 0, 0}, {0, 0, 0}, {}},
                        Case{{2, 1, 2}, {2, 1, 1}, {1, 0, 1, 0, 1, 0}, {1, 0, 1}, {}},
                        Case{{3, 2, 1}, {1, 1, 2}, {0, 0, 0, 0, 0, 0}, {0, 0, 0}, {8, 4, 6}}}) {
    OnnxBuilder b(13);
    b.input("x", {1, 2, size[0], size[1], size[2]}).output("y");
    b.init("w", {2, 3, kernel[0], kernel[1], kernel[2]}, w).init("b", {3}, bias);
    auto& node = b.node("ConvTranspose", {"x", "w", "b"}, {"y"});
    attr_ints(node, "strides", t.strides);
    attr_ints(node, "dilations", t.dilations);
    if (t.output_shape.empty()) {
      attr_ints(node, "pads", t.pads);
      attr_ints(node, "output_padding", t.output_padding);
    } else {
      attr_ints(node, "output_shape", t.output_shape);
    }
    Graph g = b.import();
    std::vector<int64_t> pads = t.pads, out;
    for (size_t a = 0; a < 3; ++a) {
      const int64_t full = t.strides[a] * (size[a] - 1) + t.output_padding[a] + (kernel[a] - 1) * t.dilations[a] + 1;
      if (!t.output_shape.empty()) {  // the total padding, the odd element at the start (NOTSET)
        const int64_t total = full - t.output_shape[a];
        pads[a + 3] = total / 2, pads[a] = total - total / 2;
      }
      out.push_back(full - pads[a] - pads[a + 3]);
    }
    INFO("strides ", t.strides[0], t.strides[1], t.strides[2]);
    REQUIRE(g.tensor("y").shape == Shape{1, 3, out[0], out[1], out[2]});
    std::vector<double> y(static_cast<size_t>(3 * out[0] * out[1] * out[2]), 0.0);
    for (int64_t o = 0; o < 3; ++o)
      for (size_t e = 0; e < static_cast<size_t>(out[0] * out[1] * out[2]); ++e) y[static_cast<size_t>(o) * (y.size() / 3) + e] = bias[static_cast<size_t>(o)];
    for (int64_t c = 0; c < 2; ++c)
      for (int64_t o = 0; o < 3; ++o)
        for (int64_t i = 0; i < size[0]; ++i)
          for (int64_t j = 0; j < size[1]; ++j)
            for (int64_t k = 0; k < size[2]; ++k)
              for (int64_t kd = 0; kd < kernel[0]; ++kd)
                for (int64_t kh = 0; kh < kernel[1]; ++kh)
                  for (int64_t kw = 0; kw < kernel[2]; ++kw) {
                    const int64_t d = i * t.strides[0] - pads[0] + kd * t.dilations[0];
                    const int64_t h = j * t.strides[1] - pads[1] + kh * t.dilations[1];
                    const int64_t v = k * t.strides[2] - pads[2] + kw * t.dilations[2];
                    if (d < 0 || h < 0 || v < 0 || d >= out[0] || h >= out[1] || v >= out[2]) continue;
                    y[static_cast<size_t>(((o * out[0] + d) * out[1] + h) * out[2] + v)] +=
                        x[static_cast<size_t>(((c * size[0] + i) * size[1] + j) * size[2] + k)] *
                        w[static_cast<size_t>((((c * 3 + o) * kernel[0] + kd) * kernel[1] + kh) * kernel[2] + kw)];
                  }
    check_close(run_graph(g, {x}), std::vector<float>(y.begin(), y.end()), 1e-4);
  }
}

struct Pool3d {
  std::vector<int64_t> size{5, 4, 6}, kernel{3, 2, 3}, strides{2, 1, 2}, dilations{1, 1, 1}, pads{0, 0, 0, 0, 0, 0};
  int64_t ceil_mode = 0, count_include_pad = 0;
};

// One axis of a pooling window: its output length (PyTorch's ceil_mode rule: the last window starts
// inside the input or its leading padding).
int64_t pool_length(int64_t in, int64_t k, int64_t s, int64_t dil, int64_t pad0, int64_t pad1, int64_t ceil_mode) {
  const int64_t span = in + pad0 + pad1 - (k - 1) * dil - 1;
  int64_t out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
  if (ceil_mode && (out - 1) * s >= in + pad0) --out;
  return out;
}

void check_pool3d(const Pool3d& p, bool max) {
  const int64_t channels = 2;
  const auto x = values(static_cast<size_t>(channels * p.size[0] * p.size[1] * p.size[2]), 0.7f);
  OnnxBuilder b(13);
  b.input("x", {1, channels, p.size[0], p.size[1], p.size[2]}).output("y");
  auto& pool = b.node(max ? "MaxPool" : "AveragePool", {"x"}, {"y"}, "pool");
  attr_ints(pool, "kernel_shape", p.kernel);
  attr_ints(pool, "strides", p.strides);
  attr_ints(pool, "pads", p.pads);
  attr_int(pool, "ceil_mode", p.ceil_mode);
  if (max) attr_ints(pool, "dilations", p.dilations);
  else attr_int(pool, "count_include_pad", p.count_include_pad);
  Graph g = b.import();
  Shape out{1, channels};
  for (size_t a = 0; a < 3; ++a)
    out.push_back(pool_length(p.size[a], p.kernel[a], p.strides[a], p.dilations[a], p.pads[a], p.pads[a + 3], p.ceil_mode));
  REQUIRE(g.tensor("y").shape == out);
  std::vector<float> expected;
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t d = 0; d < out[2]; ++d)
      for (int64_t h = 0; h < out[3]; ++h)
        for (int64_t v = 0; v < out[4]; ++v) {
          double best = -std::numeric_limits<double>::infinity(), sum = 0;
          int64_t count = 0, padded = 1;
          const int64_t at[3] = {d, h, v};
          for (size_t a = 0; a < 3; ++a) {  // window elements inside the padded extent, per axis
            int64_t inside = 0;
            for (int64_t k = 0; k < p.kernel[a]; ++k)
              inside += at[a] * p.strides[a] - p.pads[a] + k * p.dilations[a] < p.size[a] + p.pads[a + 3];
            padded *= inside;
          }
          for (int64_t kd = 0; kd < p.kernel[0]; ++kd)
            for (int64_t kh = 0; kh < p.kernel[1]; ++kh)
              for (int64_t kw = 0; kw < p.kernel[2]; ++kw) {
                const int64_t i = d * p.strides[0] - p.pads[0] + kd * p.dilations[0];
                const int64_t j = h * p.strides[1] - p.pads[1] + kh * p.dilations[1];
                const int64_t k = v * p.strides[2] - p.pads[2] + kw * p.dilations[2];
                if (i < 0 || j < 0 || k < 0 || i >= p.size[0] || j >= p.size[1] || k >= p.size[2]) continue;
                const double value = x[static_cast<size_t>(((c * p.size[0] + i) * p.size[1] + j) * p.size[2] + k)];
                best = std::max(best, value);
                sum += value;
                ++count;
              }
          expected.push_back(static_cast<float>(max ? best : sum / static_cast<double>(p.count_include_pad ? padded : count)));
        }
  check_close(run_graph(g, {x}), expected, 1e-5);
}

TEST_CASE("MaxPool and AveragePool on rank-5 inputs match the 3-D operators") {
  for (bool max : {true, false}) {
    INFO((max ? "MaxPool" : "AveragePool"));
    Pool3d p;
    check_pool3d(p, max);
    p.pads = {1, 0, 1, 2, 1, 1};
    check_pool3d(p, max);
    p.ceil_mode = 1, p.size = {6, 5, 7};
    check_pool3d(p, max);
    p.count_include_pad = 1;
    check_pool3d(p, max);
  }
  Pool3d dilated;
  dilated.dilations = {2, 1, 2}, dilated.strides = {1, 1, 1}, dilated.pads = {2, 0, 1, 2, 1, 1};
  check_pool3d(dilated, true);
}

}  // namespace
}  // namespace mt::test
