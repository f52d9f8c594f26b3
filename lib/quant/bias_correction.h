// Empirical bias correction (Nagel et al. 2019, "Data-Free Quantization Through Weight Equalization
// and Bias Correction", section 4.2, empirical variant): rounding weights and inputs to int8 shifts
// the mean of each conv2d / linear output channel, and ReLU-like clamps and later layers turn the
// shift into error that grows with depth. For every int8 conv2d / linear, in graph order, the
// mean pre-activation output of each channel is measured on the calibration samples for the fp32
// layer on fp32 inputs and for the int8 layer on the int8 model's own inputs, and the difference
// is added to the int32 bias. The int8 model is run node by node, so every layer sees its
// inputs with all upstream corrections applied.
#pragma once

#include <span>
#include <vector>

#include "lib/ir/graph.h"
#include "lib/quant/quantize_pass.h"
#include "lib/quant/samples.h"

namespace mt::quant {

struct BiasCorrectionStats {
  size_t layers = 0;     // conv2d / linear nodes whose bias was corrected
  double max_shift = 0;  // largest correction of one channel, in steps of that layer's output scale
};

// Corrects the biases of `quantized` (made from `fp32` by quantize_graph) in place; a layer without
// a bias gets one. `samples` are fp32 samples for `fp32`.
BiasCorrectionStats correct_biases(const Graph& fp32, QuantizeResult& quantized, const std::vector<Sample>& samples);

// The mean over batch and output positions of the input values each weight of a conv2d / linear
// node multiplies (zero where the window lies in padding): per input channel and kernel tap,
// [C][kH][kW] for conv2d and [K] for linear. With it, the mean output of channel m is
// sum_i W[m][i] * mean_patch[i] (within m's group) plus the bias, exactly.
// Exposed for the unit tests.
std::vector<double> mean_patch(const Node& node, const Shape& weight_shape, const Shape& input_shape,
                               std::span<const float> values);

}  // namespace mt::quant
