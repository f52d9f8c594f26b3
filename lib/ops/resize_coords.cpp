#include "lib/ops/resize_coords.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "lib/ops/registry.h"

namespace mt {
namespace {

template <typename Enum, size_t N>
Enum parse_name(const Node& node, std::string_view attr, const std::array<std::string_view, N>& names) {
  const std::string& value = attr_string(node, attr);
  for (size_t i = 0; i < N; ++i)
    if (names[i] == value) return static_cast<Enum>(i);
  invalid_input("attribute '{}' = \"{}\" must be one of {}", attr, value, fmt::join(names, ", "));
}

}  // namespace

ResizeParams read_resize(const Node& node, const Shape& input) {
  ResizeParams params;
  params.mode = parse_name<ResizeMode>(node, "mode", std::array<std::string_view, 3>{"nearest", "linear", "cubic"});
  params.coordinate_mode =
      parse_name<CoordinateMode>(node, "coordinate_transformation_mode",
                                 std::array<std::string_view, 5>{"half_pixel", "pytorch_half_pixel", "align_corners",
                                                                 "asymmetric", "tf_half_pixel_for_nn"});
  params.nearest_mode = parse_name<NearestMode>(
      node, "nearest_mode",
      std::array<std::string_view, 4>{"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"});
  params.cubic_coeff_a = attr_float(node, "cubic_coeff_a");
  if (!std::isfinite(params.cubic_coeff_a)) invalid_input("attribute 'cubic_coeff_a' must be finite");
  const int64_t exclude_outside = attr_int(node, "exclude_outside");
  if (exclude_outside != 0 && exclude_outside != 1)
    invalid_input("attribute 'exclude_outside' must be 0 or 1, got {}", exclude_outside);
  params.exclude_outside = exclude_outside == 1;

  const size_t rank = input.size();
  if (rank == 0) invalid_input("cannot resize a scalar");
  params.sizes = attr_ints(node, "sizes");
  if (params.sizes.size() != rank)
    invalid_input("attribute 'sizes' has {} values for an input of rank {}", params.sizes.size(), rank);
  for (size_t i = 0; i < rank; ++i) {
    if (params.sizes[i] < 1) invalid_input("attribute 'sizes' = [{}] must be positive", fmt::join(params.sizes, ","));
    if (input[i] < 1) invalid_input("input {} has an empty axis", shape_str(input));
  }
  if (!checked_numel(params.sizes))
    invalid_input("attribute 'sizes' = [{}] is too large", fmt::join(params.sizes, ","));

  const auto& scales = attr_floats(node, "scales");
  if (!scales.empty() && scales.size() != rank)
    invalid_input("attribute 'scales' has {} values for an input of rank {}", scales.size(), rank);
  for (double scale : scales)
    if (!(scale > 0) || !std::isfinite(scale))
      invalid_input("attribute 'scales' = [{}] must be positive and finite", fmt::join(scales, ","));
  params.scales.resize(rank);
  for (size_t i = 0; i < rank; ++i)
    params.scales[i] =
        scales.empty() ? static_cast<double>(params.sizes[i]) / static_cast<double>(input[i]) : scales[i];
  return params;
}

double source_coordinate(CoordinateMode mode, int64_t out_index, double scale, int64_t in_length, int64_t out_length) {
  const auto o = static_cast<double>(out_index);
  switch (mode) {
    case CoordinateMode::half_pixel:
      return (o + 0.5) / scale - 0.5;
    case CoordinateMode::pytorch_half_pixel:
      return out_length > 1 ? (o + 0.5) / scale - 0.5 : 0.0;
    case CoordinateMode::align_corners:
      return out_length == 1 ? 0.0 : o * static_cast<double>(in_length - 1) / static_cast<double>(out_length - 1);
    case CoordinateMode::asymmetric:
      return o / scale;
    case CoordinateMode::tf_half_pixel_for_nn:
      return (o + 0.5) / scale;
  }
  return 0.0;
}

int64_t nearest_index(NearestMode mode, double x, int64_t in_length) {
  const double base = std::floor(x);
  const double fraction = x - base;
  double chosen = base;
  switch (mode) {
    case NearestMode::round_prefer_floor:
      chosen = fraction > 0.5 ? base + 1 : base;
      break;
    case NearestMode::round_prefer_ceil:
      chosen = fraction >= 0.5 ? base + 1 : base;
      break;
    case NearestMode::floor:
      chosen = base;
      break;
    case NearestMode::ceil:
      chosen = std::ceil(x);
      break;
  }
  // Clamp as a double first: x may be far outside the axis (never beyond int64, though).
  return static_cast<int64_t>(std::clamp(chosen, 0.0, static_cast<double>(in_length - 1)));
}

std::array<double, 4> cubic_coefficients(double t, double a) {
  // Keys' cubic convolution kernel evaluated at distances 1 + t, t, 1 - t and 2 - t.
  const double s = 1 - t;
  return {((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a, ((a + 2) * t - (a + 3)) * t * t + 1,
          ((a + 2) * s - (a + 3)) * s * s + 1, ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a};
}

ResizeTaps resize_taps(const ResizeParams& params, size_t axis, int64_t in_length, int64_t out_index) {
  const int64_t out_length = params.sizes[axis];
  const double x = source_coordinate(params.coordinate_mode, out_index, params.scales[axis], in_length, out_length);
  const int64_t last = in_length - 1;
  ResizeTaps taps;
  switch (params.mode) {
    case ResizeMode::nearest:
      taps.count = 1;
      taps.index[0] = nearest_index(params.nearest_mode, x, in_length);
      taps.weight[0] = 1.0;
      break;
    case ResizeMode::linear: {
      // Clamping the coordinate is the same as repeating the edge values beyond the axis.
      const double clamped = std::clamp(x, 0.0, static_cast<double>(last));
      const double base = std::floor(clamped);
      taps.count = 2;
      taps.index = {static_cast<int64_t>(base), std::min(static_cast<int64_t>(base) + 1, last), 0, 0};
      taps.weight = {1 - (clamped - base), clamped - base, 0, 0};
      break;
    }
    case ResizeMode::cubic: {
      // Beyond [-3, in_length + 2] every tap clamps to the same edge element (or, excluding the
      // outside, every tap is dropped), so clamping x there changes nothing but keeps the
      // conversion to an index defined whatever the scale.
      const double clamped = std::clamp(x, -3.0, static_cast<double>(in_length + 2));
      const double base = std::floor(clamped);
      const double t = clamped - base;
      taps.count = 4;
      taps.weight = cubic_coefficients(t, params.cubic_coeff_a);
      double total = 0;
      for (int i = 0; i < 4; ++i) {
        const int64_t index = static_cast<int64_t>(base) - 1 + i;
        if (params.exclude_outside && (index < 0 || index > last)) taps.weight[i] = 0;
        total += taps.weight[i];
        taps.index[i] = std::clamp<int64_t>(index, 0, last);
      }
      if (params.exclude_outside && total != 0)
        for (double& weight : taps.weight) weight /= total;
      break;
    }
  }
  return taps;
}

}  // namespace mt
