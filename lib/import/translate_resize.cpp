// Rules for Resize (opsets 10, 11, 13, 18) and Upsample (opset 9): the constant scales or sizes
// become the full output shape of mt's resize, with the coordinate rules of each version. A 1-D
// signal (rank 3, N x C x L) is resized as N x C x 1 x L, which every backend's resize runs: an
// axis of size 1 kept at size 1 samples its only element exactly in every mode.
#include <cmath>
#include <set>

#include "lib/import/translators.h"

namespace mt::onnx_import {
namespace {

const std::set<std::string, std::less<>> kTransforms = {"half_pixel", "pytorch_half_pixel", "align_corners",
                                                        "asymmetric", "tf_half_pixel_for_nn"};
const std::set<std::string, std::less<>> kNearestModes = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};

// ONNX: output = floor(input * scale).
int64_t scaled_size(const OnnxNode& node, int64_t in, double scale) {
  if (!(scale > 0.0) || !std::isfinite(scale)) node.invalid("scale {} must be positive", scale);
  const double out = std::floor(static_cast<double>(in) * scale);
  if (out > static_cast<double>(kMaxElements)) node.invalid("scale {} gives a too large output", scale);
  return static_cast<int64_t>(out);
}

// Emits mt's resize of the node's input 0 with `attrs` ("sizes" and, when given, "scales" for every
// axis); a rank-3 input goes through a unit axis at 2.
void emit_resize(ImportContext& ctx, const OnnxNode& node, Attributes attrs) {
  if (ctx.input_info(node, 0).shape.size() != 3) {
    ctx.emit1(node, "resize", {ctx.input(node, 0)}, std::move(attrs), node.output(0));
    return;
  }
  auto sizes = std::get<std::vector<int64_t>>(attrs.at("sizes"));
  sizes.insert(sizes.begin() + 2, 1);
  attrs["sizes"] = sizes;
  if (auto it = attrs.find("scales"); it != attrs.end()) {
    auto scales = std::get<std::vector<double>>(it->second);
    if (!scales.empty()) scales.insert(scales.begin() + 2, 1.0);
    it->second = scales;
  }
  const std::string x = ctx.input(node, 0);
  const std::string x_2d =
      ctx.emit1(node, "unsqueeze", {x}, {{"axes", std::vector<int64_t>{2}}}, ctx.fresh_name(x + "/2d"));
  const std::string y_2d = ctx.emit1(node, "resize", {x_2d}, std::move(attrs), ctx.fresh_name(node.output(0) + "/2d"));
  ctx.emit1(node, "squeeze", {y_2d}, {{"axes", std::vector<int64_t>{2}}}, node.output(0));
}

// Upsample (opset 9) and Resize-10: scales only and asymmetric coordinates. Their nearest mode
// has no nearest_mode attribute: ONNX Runtime rounds down when enlarging and up when shrinking.
void legacy_resize(ImportContext& ctx, const OnnxNode& node) {
  const Shape input = ctx.input_info(node, 0).shape;
  const auto scales = ctx.const_floats(node, 1, "scales");
  if (scales.size() != input.size()) node.invalid("scales has {} values for rank {}", scales.size(), input.size());
  std::string mode = node.attr_string("mode", "nearest");
  if (mode == "bilinear") mode = "linear";
  if (mode != "nearest" && mode != "linear") node.unsupported("mode '{}'", mode);
  Shape sizes;
  bool enlarges = false, shrinks = false;
  for (size_t i = 0; i < input.size(); ++i) {
    sizes.push_back(scaled_size(node, input[i], scales[i]));
    enlarges |= scales[i] > 1.0;
    shrinks |= scales[i] < 1.0;
  }
  if (mode == "nearest" && enlarges && shrinks)
    node.unsupported("nearest resizing that enlarges some axes and shrinks others");
  emit_resize(ctx, node,
              {{"sizes", sizes},
               {"scales", scales},
               {"mode", mode},
               {"coordinate_transformation_mode", std::string("asymmetric")},
               {"nearest_mode", std::string(shrinks ? "ceil" : "floor")}});
}

// Resize-11/13/18: X, roi, scales, sizes (exactly one of scales and sizes), and from 18 axes,
// keep_aspect_ratio_policy and antialias.
void resize(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  if (node.opset() < 11) return legacy_resize(ctx, node);
  const Shape input = ctx.input_info(node, 0).shape;
  const size_t rank = input.size();
  const std::string mode = node.attr_string("mode", "nearest");
  if (mode != "nearest" && mode != "linear" && mode != "cubic") node.unsupported("mode '{}'", mode);
  const std::string transform = node.attr_string("coordinate_transformation_mode", "half_pixel");
  if (transform == "tf_crop_and_resize")
    node.unsupported("coordinate_transformation_mode 'tf_crop_and_resize' (uses roi)");
  if (!kTransforms.count(transform)) node.unsupported("coordinate_transformation_mode '{}'", transform);
  if (node.attr_int("antialias", 0) != 0) node.unsupported("antialias=1");
  const std::string nearest_mode = node.attr_string("nearest_mode", "round_prefer_floor");
  if (!kNearestModes.count(nearest_mode)) node.unsupported("nearest_mode '{}'", nearest_mode);
  const std::string policy = node.attr_string("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
    node.invalid("unknown keep_aspect_ratio_policy '{}'", policy);

  std::vector<double> scales;
  std::vector<int64_t> sizes;
  ctx.require_known(node, {{2, "scales"}, {3, "sizes"}});
  if (node.has_input(2)) scales = ctx.const_floats(node, 2, "scales");
  if (node.has_input(3)) sizes = ctx.const_ints(node, 3, "sizes");
  if (scales.empty() == sizes.empty()) node.invalid("needs exactly one of scales and sizes");

  std::vector<int64_t> axes;
  for (int64_t axis : node.attr_ints("axes")) axes.push_back(node_axis(node, axis, rank));
  if (axes.empty())
    for (size_t i = 0; i < rank; ++i) axes.push_back(static_cast<int64_t>(i));
  const size_t given = scales.empty() ? sizes.size() : scales.size();
  if (given != axes.size())
    node.invalid("{} has {} values for {} axes", scales.empty() ? "sizes" : "scales", given, axes.size());

  Shape out = input;
  std::vector<double> full_scales(rank, 1.0);
  bool use_scales = !scales.empty();
  for (size_t j = 0; j < axes.size(); ++j) {
    const auto a = static_cast<size_t>(axes[j]);
    if (use_scales) {
      full_scales[a] = scales[j];
      out[a] = scaled_size(node, input[a], scales[j]);
      // ONNX's align_corners divides by the resized length input * scale, which scales make
      // fractional; mt's resize maps corners onto the whole output length (the same for length 1).
      if (transform == "align_corners" && out[a] > 1 &&
          static_cast<double>(input[a]) * scales[j] != static_cast<double>(out[a]))
        node.unsupported(
            "align_corners with scale {:g} on axis {} of length {}: ONNX then maps the corners onto the "
            "fractional length {:g}, mt (as PyTorch) onto the output length {} (give sizes)",
            scales[j], a, input[a], static_cast<double>(input[a]) * scales[j], out[a]);
    } else {
      if (sizes[j] < 0) node.invalid("sizes has a negative value {}", sizes[j]);
      out[a] = sizes[j];
    }
  }
  if (!use_scales && policy != "stretch") {
    // One scale for every axis listed: the largest that fits in sizes (not_larger) or the
    // smallest that covers them (not_smaller); sizes are then rounded half up.
    double scale = policy == "not_larger" ? INFINITY : 0.0;
    for (size_t j = 0; j < axes.size(); ++j) {
      const int64_t in = input[static_cast<size_t>(axes[j])];
      if (in == 0) node.invalid("cannot keep the aspect ratio of an empty axis");
      const double s = static_cast<double>(sizes[j]) / static_cast<double>(in);
      scale = policy == "not_larger" ? std::min(scale, s) : std::max(scale, s);
    }
    for (int64_t a : axes) {
      full_scales[static_cast<size_t>(a)] = scale;
      out[static_cast<size_t>(a)] =
          static_cast<int64_t>(std::floor(scale * static_cast<double>(input[static_cast<size_t>(a)]) + 0.5));
    }
    use_scales = true;
  }
  Attributes attrs{{"sizes", out},
                   {"mode", mode},
                   {"coordinate_transformation_mode", transform},
                   {"nearest_mode", nearest_mode},
                   {"cubic_coeff_a", node.attr_float("cubic_coeff_a", -0.75)},
                   {"exclude_outside", node.attr_int("exclude_outside", 0)}};
  if (use_scales) attrs["scales"] = full_scales;
  emit_resize(ctx, node, std::move(attrs));
}

void upsample(ImportContext& ctx, const OnnxNode& node, const std::string&) { legacy_resize(ctx, node); }

}  // namespace

void add_resize_translators(TranslatorTable& table) {
  table.add("Resize", resize);
  table.add("Upsample", upsample);
}

}  // namespace mt::onnx_import
