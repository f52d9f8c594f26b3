#include "lib/ops/sample_loops.h"

#include <algorithm>
#include <cmath>

#include "lib/core/error.h"
#include "lib/ops/registry.h"

namespace mt {
namespace {

// Computed in float32, in the order PyTorch's CPU kernel computes grid_sample, so that the results
// agree with it (and with ONNX's test data, which it produced) to the last bit where possible.

float unnormalize(float coord, int64_t size, bool align_corners) {
  const auto n = static_cast<float>(size);
  return align_corners ? ((coord + 1.0f) / 2.0f) * (n - 1.0f) : ((coord + 1.0f) * n - 1.0f) / 2.0f;
}

float clip(float coord, int64_t size) { return std::min(static_cast<float>(size - 1), std::max(coord, 0.0f)); }

// Reflects `coord` into [twice_low / 2, twice_high / 2] (PyTorch's reflect_coordinates).
float reflect(float coord, int64_t twice_low, int64_t twice_high) {
  if (twice_low == twice_high) return 0.0f;
  const float low = static_cast<float>(twice_low) / 2.0f;
  const float span = static_cast<float>(twice_high - twice_low) / 2.0f;
  coord = std::fabs(coord - low);
  const float extra = std::fmod(coord, span);
  const float flips = std::floor(coord / span);  // its parity in float: no integer overflow
  return std::fmod(flips, 2.0f) == 0.0f ? extra + low : span - extra + low;
}

// A pixel coordinate after the padding mode: border clips, reflection reflects then clips.
float apply_padding(float coord, int64_t size, SamplePadding padding, bool align_corners) {
  if (padding == SamplePadding::border) return clip(coord, size);
  if (padding == SamplePadding::reflection) {
    coord = align_corners ? reflect(coord, 0, 2 * (size - 1)) : reflect(coord, -1, 2 * size - 1);
    return clip(coord, size);
  }
  return coord;
}

// Whether pixel coordinates are small enough to convert to integers (NaN is not): farther points
// read only padding zeros.
bool addressable(float x, float y) {
  constexpr float kFar = 1 << 30;
  return std::fabs(x) < kFar && std::fabs(y) < kFar;
}

// Pixel (ix, iy) of one plane, 0 outside it.
float pixel(const float* plane, int64_t height, int64_t width, int64_t ix, int64_t iy) {
  return ix >= 0 && ix < width && iy >= 0 && iy < height ? plane[iy * width + ix] : 0.0f;
}

// The cubic convolution weights of offset t in [0, 1) (A = -0.75, as PyTorch and ONNX's cubic).
void cubic_weights(float t, float w[4]) {
  constexpr float a = -0.75f;
  auto near = [](float x) { return ((a + 2.0f) * x - (a + 3.0f)) * x * x + 1.0f; };
  auto far = [](float x) { return ((a * x - 5.0f * a) * x + 8.0f * a) * x - 4.0f * a; };
  w[0] = far(t + 1.0f);
  w[1] = near(t);
  w[2] = near(1.0f - t);
  w[3] = far(2.0f - t);
}

float sample_bilinear(const GridSampleParams& p, const float* plane, float ix, float iy) {
  if (!addressable(ix, iy)) return 0.0f;
  const auto x0 = static_cast<int64_t>(std::floor(ix)), y0 = static_cast<int64_t>(std::floor(iy));
  const auto fx0 = static_cast<float>(x0), fy0 = static_cast<float>(y0);
  const float fx1 = fx0 + 1.0f, fy1 = fy0 + 1.0f;
  const float nw = (fx1 - ix) * (fy1 - iy), ne = (ix - fx0) * (fy1 - iy);
  const float sw = (fx1 - ix) * (iy - fy0), se = (ix - fx0) * (iy - fy0);
  return pixel(plane, p.height, p.width, x0, y0) * nw + pixel(plane, p.height, p.width, x0 + 1, y0) * ne +
         pixel(plane, p.height, p.width, x0, y0 + 1) * sw + pixel(plane, p.height, p.width, x0 + 1, y0 + 1) * se;
}

float sample_bicubic(const GridSampleParams& p, const float* plane, float ix, float iy) {
  if (std::isnan(ix) || std::isnan(iy)) return 0.0f;
  // Far points keep their side of the image, with finite tap weights.
  constexpr float kFar = 1 << 29;
  ix = std::clamp(ix, -kFar, kFar);
  iy = std::clamp(iy, -kFar, kFar);
  const float fx0 = std::floor(ix), fy0 = std::floor(iy);
  float wx[4], wy[4];
  cubic_weights(ix - fx0, wx);
  cubic_weights(iy - fy0, wy);
  // Each tap's coordinate goes through the padding mode on its own (PyTorch's get_value_bounded).
  auto tap = [&](float x, float y) {
    const float px = apply_padding(x, p.width, p.padding, p.align_corners);
    const float py = apply_padding(y, p.height, p.padding, p.align_corners);
    if (!addressable(px, py)) return 0.0f;
    return pixel(plane, p.height, p.width, static_cast<int64_t>(px), static_cast<int64_t>(py));
  };
  float rows[4];
  for (int i = 0; i < 4; ++i) {
    const float y = fy0 - 1.0f + static_cast<float>(i);
    rows[i] =
        tap(fx0 - 1.0f, y) * wx[0] + tap(fx0, y) * wx[1] + tap(fx0 + 1.0f, y) * wx[2] + tap(fx0 + 2.0f, y) * wx[3];
  }
  return rows[0] * wy[0] + rows[1] * wy[1] + rows[2] * wy[2] + rows[3] * wy[3];
}

// The sampling grid of one region along one axis: sampling_ratio, else ceil(bin size).
int64_t sampling_grid(const RoiAlignParams& p, float bin) {
  return p.sampling_ratio > 0 ? p.sampling_ratio : static_cast<int64_t>(std::ceil(bin));
}

// A region's start and bin size along one axis (x: coordinates 0 and 2 of the region).
struct RoiAxis {
  float start, bin;
};
RoiAxis roi_axis(const RoiAlignParams& p, const float* roi, int axis) {
  const float offset = p.half_pixel ? 0.5f : 0.0f;
  const float start = roi[axis] * p.spatial_scale - offset;
  float size = roi[axis + 2] * p.spatial_scale - offset - start;
  if (!p.half_pixel) size = std::max(size, 1.0f);
  return {start, size / static_cast<float>(axis == 0 ? p.out_width : p.out_height)};
}

}  // namespace

std::optional<SampleMode> sample_mode(std::string_view name) {
  if (name == "bilinear") return SampleMode::bilinear;
  if (name == "nearest") return SampleMode::nearest;
  if (name == "bicubic") return SampleMode::bicubic;
  return std::nullopt;
}

std::optional<SamplePadding> sample_padding(std::string_view name) {
  if (name == "zeros") return SamplePadding::zeros;
  if (name == "border") return SamplePadding::border;
  if (name == "reflection") return SamplePadding::reflection;
  return std::nullopt;
}

GridSampleParams grid_sample_params(const Node& node, const Shape& x, const Shape& grid) {
  return {x[0],
          x[1],
          x[2],
          x[3],
          grid[1],
          grid[2],
          *sample_mode(attr_string(node, "mode")),
          *sample_padding(attr_string(node, "padding_mode")),
          attr_int(node, "align_corners") != 0};
}

RoiAlignParams roi_align_params(const Node& node, const Shape& x, int64_t rois) {
  return {x[0],
          x[1],
          x[2],
          x[3],
          rois,
          attr_int(node, "output_height"),
          attr_int(node, "output_width"),
          attr_int(node, "sampling_ratio"),
          static_cast<float>(attr_float(node, "spatial_scale")),
          attr_int(node, "half_pixel") != 0,
          attr_string(node, "mode") == "max"};
}

void grid_sample_rows(const GridSampleParams& p, const float* x, const float* grid, float* y, int64_t begin,
                      int64_t end) {
  const int64_t plane = p.height * p.width, out_plane = p.out_height * p.out_width;
  for (int64_t row = begin; row < end; ++row) {
    const int64_t n = row / p.out_height, i = row % p.out_height;
    for (int64_t j = 0; j < p.out_width; ++j) {
      const float* point = grid + ((n * p.out_height + i) * p.out_width + j) * 2;
      float ix = unnormalize(point[0], p.width, p.align_corners);
      float iy = unnormalize(point[1], p.height, p.align_corners);
      if (p.mode != SampleMode::bicubic) {
        ix = apply_padding(ix, p.width, p.padding, p.align_corners);
        iy = apply_padding(iy, p.height, p.padding, p.align_corners);
      }
      for (int64_t c = 0; c < p.channels; ++c) {
        const float* image = x + (n * p.channels + c) * plane;
        float value = 0.0f;
        switch (p.mode) {
          case SampleMode::bilinear: value = sample_bilinear(p, image, ix, iy); break;
          case SampleMode::nearest:
            if (addressable(ix, iy))
              value = pixel(image, p.height, p.width, static_cast<int64_t>(std::nearbyint(ix)),
                            static_cast<int64_t>(std::nearbyint(iy)));
            break;
          case SampleMode::bicubic: value = sample_bicubic(p, image, ix, iy); break;
        }
        y[(n * p.channels + c) * out_plane + i * p.out_width + j] = value;
      }
    }
  }
}

void roi_align_check(const RoiAlignParams& p, const std::string& node, const float* rois, IndexData batch_indices) {
  for (int64_t r = 0; r < p.rois; ++r) {
    const int64_t b = batch_indices[r];
    if (b < 0 || b >= p.batch)
      invalid_input("node '{}' (roi_align): batch index {} of region {} is out of range for a batch of {}", node, b, r,
                    p.batch);
    // Adaptive sampling takes ceil(bin size) points per bin and axis: bounded, so that a region's
    // coordinates cannot make a run take forever.
    for (int axis : {0, 1}) {
      const float bin = roi_axis(p, rois + r * 4, axis).bin;
      if (!std::isfinite(bin) || (p.sampling_ratio == 0 && bin > kMaxAdaptiveSamples))
        invalid_input(
            "node '{}' (roi_align): region {} has bins of {} pixels along {}; mt samples at most {} points "
            "per bin and axis",
            node, r, bin, axis == 0 ? "x" : "y", kMaxAdaptiveSamples);
    }
  }
}

// Computed in float32 in the order ONNX Runtime's RoiAlign computes it.
void roi_align_rois(const RoiAlignParams& p, const float* x, const float* rois, IndexData batch_indices, float* y,
                    int64_t begin, int64_t end) {
  const auto height = static_cast<float>(p.height), width = static_cast<float>(p.width);
  for (int64_t r = begin; r < end; ++r) {
    const auto [start_w, bin_w] = roi_axis(p, rois + r * 4, 0);
    const auto [start_h, bin_h] = roi_axis(p, rois + r * 4, 1);
    const int64_t grid_h = sampling_grid(p, bin_h), grid_w = sampling_grid(p, bin_w);
    const auto count = static_cast<float>(std::max<int64_t>(grid_h * grid_w, 1));
    const int64_t image = batch_indices[r];
    for (int64_t c = 0; c < p.channels; ++c) {
      const float* plane = x + (image * p.channels + c) * p.height * p.width;
      for (int64_t ph = 0; ph < p.out_height; ++ph)
        for (int64_t pw = 0; pw < p.out_width; ++pw) {
          float result = 0.0f;
          bool first = true;
          for (int64_t iy = 0; iy < grid_h; ++iy) {
            const float sy = start_h + static_cast<float>(ph) * bin_h +
                             (static_cast<float>(iy) + 0.5f) * bin_h / static_cast<float>(grid_h);
            for (int64_t ix = 0; ix < grid_w; ++ix) {
              const float sx = start_w + static_cast<float>(pw) * bin_w +
                               (static_cast<float>(ix) + 0.5f) * bin_w / static_cast<float>(grid_w);
              float taps[4] = {0.0f, 0.0f, 0.0f, 0.0f};
              if (sy >= -1.0f && sy <= height && sx >= -1.0f && sx <= width) {  // NaN: outside
                float yy = std::max(sy, 0.0f), xx = std::max(sx, 0.0f);
                auto y_low = static_cast<int64_t>(yy), x_low = static_cast<int64_t>(xx);
                int64_t y_high = y_low + 1, x_high = x_low + 1;
                if (y_low >= p.height - 1) {
                  y_high = y_low = p.height - 1;
                  yy = static_cast<float>(y_low);
                }
                if (x_low >= p.width - 1) {
                  x_high = x_low = p.width - 1;
                  xx = static_cast<float>(x_low);
                }
                const float ly = yy - static_cast<float>(y_low), lx = xx - static_cast<float>(x_low);
                const float hy = 1.0f - ly, hx = 1.0f - lx;
                taps[0] = hy * hx * plane[y_low * p.width + x_low];
                taps[1] = hy * lx * plane[y_low * p.width + x_high];
                taps[2] = ly * hx * plane[y_high * p.width + x_low];
                taps[3] = ly * lx * plane[y_high * p.width + x_high];
              }
              if (p.max) {
                const float best = std::max(std::max(std::max(taps[0], taps[1]), taps[2]), taps[3]);
                result = first ? best : std::max(result, best);
              } else {
                result += taps[0] + taps[1] + taps[2] + taps[3];
              }
              first = false;
            }
          }
          y[((r * p.channels + c) * p.out_height + ph) * p.out_width + pw] = p.max ? result : result / count;
        }
    }
  }
}

void max_unpool(const MaxUnpoolParams& p, const std::string& node, const float* x, IndexData indices, float* y) {
  const int64_t positions = numel(p.index_shape);
  for (int64_t i = 0; i < p.count; ++i)
    if (indices[i] < 0 || indices[i] >= positions)
      invalid_input("node '{}' (max_unpool): index {} (element {} of the indices) is out of range for {} positions",
                    node, indices[i], i, positions);
  std::fill(y, y + numel(p.out_shape), 0.0f);
  const bool same = p.index_shape == p.out_shape;
  for (int64_t i = 0; i < p.count; ++i) {
    int64_t from = indices[i], to = 0, stride = 1;
    if (!same) {
      for (size_t d = p.index_shape.size(); d-- > 0;) {
        to += (from % p.index_shape[d]) * stride;
        from /= p.index_shape[d];
        stride *= p.out_shape[d];
      }
      from = to;
    }
    y[from] = x[i];
  }
}

}  // namespace mt
