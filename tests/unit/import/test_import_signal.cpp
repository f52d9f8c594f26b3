// The signal ops' import rules (translate_signal.cpp, translate_sample.cpp): windows and the mel
// weight matrix become the constants ONNX defines (values from ONNX's reference formulas), STFT
// becomes gathered frames times the window and a one-sided dft (checked against a direct DFT),
// MaxUnpool with an output_shape keeps the values' coordinates; operands that must be constants
// and are not are refused by name.
#include <cmath>
#include <complex>
#include <numbers>

#include "tests/unit/import/onnx_test_util.h"

namespace mt::test {
namespace {

template <typename T>
void scalar_init(OnnxBuilder& b, const std::string& name, int elem, T value) {
  init_typed<T>(b, name, elem, {}, {value});
}

std::vector<float> window_constant(const std::string& op, int64_t size, int64_t periodic) {
  OnnxBuilder b(17);
  b.output("y");
  scalar_init<int32_t>(b, "size", onnx::TensorProto::INT32, static_cast<int32_t>(size));
  attr_int(b.node(op, {"size"}, {"y"}, "window"), "periodic", periodic);
  const Graph g = b.import();
  REQUIRE(g.nodes.empty());
  return constant_values<float>(g, g.outputs[0]);
}

TEST_CASE("Hann, Hamming and Blackman windows become constants, periodic or symmetric") {
  const double pi = std::numbers::pi;
  const std::vector<float> hann = window_constant("HannWindow", 10, 1);
  const std::vector<float> hamming = window_constant("HammingWindow", 7, 0);
  const std::vector<float> blackman = window_constant("BlackmanWindow", 8, 1);
  REQUIRE(hann.size() == 10);
  REQUIRE(hamming.size() == 7);
  REQUIRE(blackman.size() == 8);
  for (int n = 0; n < 10; ++n) CHECK(hann[n] == doctest::Approx(0.5 - 0.5 * std::cos(2 * pi * n / 10)).epsilon(1e-6));
  for (int n = 0; n < 7; ++n)
    CHECK(hamming[n] == doctest::Approx(25.0 / 46 - 21.0 / 46 * std::cos(2 * pi * n / 6)).epsilon(1e-6));
  for (int n = 0; n < 8; ++n)
    CHECK(blackman[n] ==
          doctest::Approx(0.42 - 0.5 * std::cos(2 * pi * n / 8) + 0.08 * std::cos(4 * pi * n / 8)).epsilon(1e-6));
  CHECK(hann[0] == 0.0f);  // exactly: a0 - a1
}

TEST_CASE("MelWeightMatrix becomes ONNX's triangular filters") {
  OnnxBuilder b(17);
  b.output("y");
  scalar_init<int32_t>(b, "bins", onnx::TensorProto::INT32, 4);
  scalar_init<int32_t>(b, "dft", onnx::TensorProto::INT32, 64);
  scalar_init<int32_t>(b, "rate", onnx::TensorProto::INT32, 16000);
  b.init("low", {}, {100.0f}).init("high", {}, {7000.0f});
  b.node("MelWeightMatrix", {"bins", "dft", "rate", "low", "high"}, {"y"}, "mel");
  const Graph g = b.import();
  CHECK(g.tensor(g.outputs[0]).shape == Shape{33, 4});
  const std::vector<float> w = constant_values<float>(g, g.outputs[0]);
  // Filter edges at spectrum bins 0, 1, 4, 7, 11, 18 (ONNX's reference code gives the same).
  auto at = [&](int j, int i) { return w[static_cast<size_t>(j * 4 + i)]; };
  CHECK(at(1, 0) == 1.0f);
  CHECK(at(2, 0) == doctest::Approx(2.0 / 3));
  CHECK(at(3, 1) == doctest::Approx(2.0 / 3));
  CHECK(at(4, 1) == 1.0f);
  CHECK(at(8, 2) == 0.75f);
  CHECK(at(9, 3) == 0.5f);
  CHECK(at(12, 3) == doctest::Approx(6.0 / 7));
  CHECK(at(17, 3) == doctest::Approx(1.0 / 7));
  int nonzero = 0;
  for (float v : w) nonzero += v != 0.0f ? 1 : 0;
  CHECK(nonzero == 24);
}

TEST_CASE("STFT: frames, window and a one-sided dft, against a direct DFT") {
  const int64_t samples = 40, frame = 8, step = 5, frames = (samples - frame) / step + 1, bins = frame / 2 + 1;
  OnnxBuilder b(17);
  b.input("signal", {1, samples, 1}).input("window", {frame}).output("y");
  init_typed<int64_t>(b, "step", onnx::TensorProto::INT64, {}, {step});
  b.node("STFT", {"signal", "step", "window"}, {"y"}, "stft");
  const Graph g = b.import();
  CHECK(g.tensor(g.outputs[0]).shape == Shape{1, frames, bins, 2});
  std::vector<float> signal(samples), window(frame);
  for (int64_t i = 0; i < samples; ++i) signal[i] = static_cast<float>(std::sin(0.3 * i) + 0.1 * i);
  for (int64_t i = 0; i < frame; ++i)
    window[i] = static_cast<float>(0.5 - 0.5 * std::cos(2 * std::numbers::pi * i / frame));
  const std::vector<float> y = run_graph(g, {signal, window});
  std::vector<float> want;
  for (int64_t t = 0; t < frames; ++t)
    for (int64_t k = 0; k < bins; ++k) {
      std::complex<double> sum = 0;
      for (int64_t n = 0; n < frame; ++n)
        sum += static_cast<double>(signal[t * step + n] * window[n]) *
               std::polar(1.0, -2 * std::numbers::pi * k * n / frame);
      want.push_back(static_cast<float>(sum.real()));
      want.push_back(static_cast<float>(sum.imag()));
    }
  check_close(y, want, 1e-5);
}

TEST_CASE("MaxUnpool: an output_shape larger than the unpooled one keeps each value's coordinates") {
  OnnxBuilder b(11);
  b.input("x", {1, 1, 2, 2}).output("y");
  init_typed<int64_t>(b, "indices", onnx::TensorProto::INT64, {1, 1, 2, 2}, {5, 7, 13, 15});
  init_typed<int64_t>(b, "shape", onnx::TensorProto::INT64, {4}, {1, 1, 5, 5});
  auto& node = b.node("MaxUnpool", {"x", "indices", "shape"}, {"y"}, "unpool");
  attr_ints(node, "kernel_shape", {2, 2});
  attr_ints(node, "strides", {2, 2});
  const Graph g = b.import();
  const std::vector<float> y = run_graph(g, {{5, 6, 7, 8}});
  std::vector<float> want(25, 0.0f);
  want[6] = 5;  // (1, 1): index 5 of the 4x4 unpooled plane
  want[8] = 6;
  want[16] = 7;
  want[18] = 8;
  check_close(y, want, 0.0);
}

TEST_CASE("signal ops whose operands are computed at run time are refused, naming the operand") {
  OnnxBuilder window(17);
  window.input("size", {}, onnx::TensorProto::INT32).output("y");
  window.node("HannWindow", {"size"}, {"y"}, "hann");
  Error e = import_error(window);
  CHECK(e.code() == ExitCode::unsupported);
  CHECK(std::string(e.what()).find("input 'size' (size) must be known at conversion") != std::string::npos);

  OnnxBuilder stft(17);
  stft.input("signal", {1, 16, 1}).input("step", {}, onnx::TensorProto::INT64).output("y");
  init_typed<int64_t>(stft, "length", onnx::TensorProto::INT64, {}, {4});
  stft.node("STFT", {"signal", "step", "", "length"}, {"y"}, "stft");
  e = import_error(stft);
  CHECK(e.code() == ExitCode::unsupported);
  CHECK(std::string(e.what()).find("input 'step' (frame_step) must be known at conversion") != std::string::npos);
}

}  // namespace
}  // namespace mt::test
