// Rules for ONNX's signal-processing ops: DFT (mt's dft), STFT (frames gathered, windowed, then
// dft), ReverseSequence (mt's reverse_sequence), and the ops that compute constants from their
// operands: HannWindow, HammingWindow, BlackmanWindow and MelWeightMatrix, which need those
// operands constant after shape folding and become the constant tensor they compute.
#include <cmath>
#include <numbers>

#include "lib/import/constant_values.h"
#include "lib/import/onnx_tensor.h"
#include "lib/import/translators.h"

namespace mt::onnx_import {
namespace {

// The one value of constant operand `i` (a scalar or a one-element tensor).
int64_t const_int(ImportContext& ctx, const OnnxNode& node, size_t i, std::string_view what) {
  const std::vector<int64_t> values = ctx.const_ints(node, i, what);
  if (values.size() != 1)
    node.invalid("input '{}' ({}) must hold one value, not {}", node.input(i), what, values.size());
  return values[0];
}
double const_float(ImportContext& ctx, const OnnxNode& node, size_t i, std::string_view what) {
  const std::vector<double> values = ctx.const_floats(node, i, what);
  if (values.size() != 1)
    node.invalid("input '{}' ({}) must hold one value, not {}", node.input(i), what, values.size());
  return values[0];
}

// The element type of attribute output_datatype (default float32).
DType output_datatype(const OnnxNode& node) {
  const auto onnx_type = static_cast<int32_t>(node.attr_int("output_datatype", onnx::TensorProto::FLOAT));
  const auto dtype = dtype_from_onnx(onnx_type);
  if (!dtype || *dtype == DType::boolean)
    node.unsupported("output_datatype {} is not supported", onnx_type_name(onnx_type));
  return *dtype;
}

// DFT(input, dft_length?, axis? (opset 20)): axis, inverse, onesided as mt's dft.
void dft(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  const TensorInfo& x = ctx.input_info(node, 0);
  int64_t axis = node.attr_int("axis", 1);
  if (node.opset() >= 20) axis = node.has_input(2) ? const_int(ctx, node, 2, "axis") : -2;
  // Opset 20 counts a negative axis against the whole rank, the last (re, im) dim included.
  if (axis < 0) axis += static_cast<int64_t>(x.shape.size());
  const int64_t length = node.has_input(1) ? const_int(ctx, node, 1, "dft_length") : 0;
  if (node.has_input(1) && length < 1) node.invalid("dft_length {} must be positive", length);
  ctx.emit1(node, "dft", {ctx.input(node, 0)},
            {{"axis", axis},
             {"length", length},
             {"inverse", node.attr_int("inverse", 0)},
             {"onesided", node.attr_int("onesided", 0)}},
            node.output(0));
}

// STFT(signal [B, L, 1 or 2], frame_step, window?, frame_length?): the frames gathered by constant
// indices (frame t holds samples t * step ...), times the window, then a dft along the frame.
void stft(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  const TensorInfo& signal = ctx.input_info(node, 0);
  if (signal.shape.size() != 3 || (signal.shape[2] != 1 && signal.shape[2] != 2))
    node.invalid("signal {} must be [batch, length, 1 or 2]", shape_str(signal.shape));
  const int64_t step = const_int(ctx, node, 1, "frame_step");
  int64_t frame = node.has_input(3) ? const_int(ctx, node, 3, "frame_length") : -1;
  if (node.has_input(2)) {
    const TensorInfo& window = ctx.input_info(node, 2);
    if (window.shape.size() != 1) node.invalid("window {} must be 1-D", shape_str(window.shape));
    if (frame >= 0 && frame != window.shape[0])
      node.invalid("frame_length {} differs from the window's length {}", frame, window.shape[0]);
    frame = window.shape[0];
  }
  if (frame < 0) node.invalid("needs a window or a frame_length");
  const int64_t samples = signal.shape[1];
  if (step < 1 || frame < 1 || frame > samples)
    node.invalid("frame_step {} and frame_length {} do not fit a signal of {} samples", step, frame, samples);
  const int64_t frames = (samples - frame) / step + 1;
  const bool onesided = node.attr_int("onesided", 1) != 0;
  if (onesided && signal.shape[2] == 2) node.unsupported("onesided applies to a real signal, this one is complex");

  const std::string& out = node.output(0);
  std::vector<int64_t> indices;
  for (int64_t t = 0; t < frames; ++t)
    for (int64_t j = 0; j < frame; ++j) indices.push_back(t * step + j);
  const std::string index_tensor =
      ctx.add_constant(make_constant(ctx.fresh_name(out + "/frame_indices"), DType::i64, {frames, frame}, indices));
  std::string framed = ctx.emit1(node, "gather", {ctx.input(node, 0), index_tensor}, {{"axis", int64_t{1}}},
                                 ctx.fresh_name(out + "/frames"));
  if (node.has_input(2)) {
    const std::string window = ctx.emit1(node, "reshape", {ctx.input(node, 2)},
                                         {{"shape", std::vector<int64_t>{frame, 1}}}, ctx.fresh_name(out + "/window"));
    framed = ctx.emit1(node, "mul", {framed, window}, {}, ctx.fresh_name(out + "/windowed"));
  }
  ctx.emit1(node, "dft", {framed},
            {{"axis", int64_t{2}}, {"length", frame}, {"inverse", int64_t{0}}, {"onesided", int64_t{onesided ? 1 : 0}}},
            out);
}

// Hann, Hamming and Blackman windows: a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), N = size when
// periodic, size - 1 when symmetric.
void window(ImportContext& ctx, const OnnxNode& node, const std::string& kind) {
  const int64_t size = const_int(ctx, node, 0, "size");
  if (size < 0 || size > kMaxShapeOpElements) node.invalid("size {} is negative or too large", size);
  double a0 = 0.5, a1 = 0.5, a2 = 0.0;
  if (kind == "hamming") {
    a0 = 25.0 / 46.0;
    a1 = 1.0 - a0;
  } else if (kind == "blackman") {
    a0 = 0.42;
    a2 = 0.08;
  }
  const bool periodic = node.attr_int("periodic", 1) != 0;
  const auto period = static_cast<double>(periodic ? size : size - 1);
  std::vector<double> values(static_cast<size_t>(size));
  for (int64_t n = 0; n < size; ++n) {
    const double angle = period > 0 ? 2.0 * std::numbers::pi * static_cast<double>(n) / period : 0.0;
    values[static_cast<size_t>(n)] = a0 - a1 * std::cos(angle) + a2 * std::cos(2.0 * angle);
  }
  ctx.add_constant(make_constant(node.output(0), output_datatype(node), {size}, values));
}

// MelWeightMatrix: [dft_length / 2 + 1, num_mel_bins] triangular filters between mel-spaced
// frequencies, computed as ONNX's reference computes it (the mel bounds in float32, then double).
void mel_weight_matrix(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  const int64_t bins = const_int(ctx, node, 0, "num_mel_bins");
  const int64_t dft_length = const_int(ctx, node, 1, "dft_length");
  const int64_t sample_rate = const_int(ctx, node, 2, "sample_rate");
  const auto lower = static_cast<float>(const_float(ctx, node, 3, "lower_edge_hertz"));
  const auto upper = static_cast<float>(const_float(ctx, node, 4, "upper_edge_hertz"));
  if (bins < 1 || dft_length < 1 || sample_rate < 1 || bins > (int64_t{1} << 16) || dft_length > (int64_t{1} << 20))
    node.invalid("num_mel_bins {}, dft_length {} and sample_rate {} must be positive (and not huge)", bins, dft_length,
                 sample_rate);
  const int64_t spectrum = dft_length / 2 + 1;
  auto mel = [](float hertz) { return 2595.0f * std::log10(1.0f + hertz / 700.0f); };
  const float low_mel = mel(lower);
  const float step = (mel(upper) - low_mel) / static_cast<float>(bins + 2);
  std::vector<int64_t> edges(static_cast<size_t>(bins + 2));
  for (int64_t k = 0; k < bins + 2; ++k) {
    const double m = static_cast<double>(k) * step + low_mel;
    const double hertz = 700.0 * (std::pow(10.0, m / 2595.0) - 1.0);
    edges[static_cast<size_t>(k)] = static_cast<int64_t>(
        std::floor(static_cast<double>(dft_length + 1) * hertz / static_cast<double>(sample_rate)));
  }
  for (int64_t e : edges)
    if (e < 0 || e >= spectrum)
      node.invalid("a filter edge falls on spectrum bin {}, outside [0, {}): check the frequencies and sample rate", e,
                   spectrum);
  std::vector<double> weights(static_cast<size_t>(spectrum * bins), 0.0);
  auto at = [&](int64_t j, int64_t i) -> double& { return weights[static_cast<size_t>(j * bins + i)]; };
  for (int64_t i = 0; i < bins; ++i) {
    const int64_t left = edges[static_cast<size_t>(i)], center = edges[static_cast<size_t>(i + 1)],
                  right = edges[static_cast<size_t>(i + 2)];
    if (center == left) {
      at(center, i) = 1.0;
    } else {
      for (int64_t j = left; j <= center; ++j)
        at(j, i) = static_cast<double>(j - left) / static_cast<double>(center - left);
    }
    for (int64_t j = center; j < right; ++j)
      at(j, i) = static_cast<double>(right - j) / static_cast<double>(right - center);
  }
  ctx.add_constant(make_constant(node.output(0), output_datatype(node), {spectrum, bins}, weights));
}

void reverse_sequence(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  ctx.emit1(node, "reverse_sequence", {ctx.input(node, 0), ctx.input(node, 1)},
            {{"batch_axis", node.attr_int("batch_axis", 1)}, {"time_axis", node.attr_int("time_axis", 0)}},
            node.output(0));
}

}  // namespace

void add_signal_translators(TranslatorTable& table) {
  table.add("DFT", dft);
  table.add("STFT", stft);
  table.add("HannWindow", window, "hann");
  table.add("HammingWindow", window, "hamming");
  table.add("BlackmanWindow", window, "blackman");
  table.add("MelWeightMatrix", mel_weight_matrix);
  table.add("ReverseSequence", reverse_sequence);
}

}  // namespace mt::onnx_import
