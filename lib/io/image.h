// Images (PNG, JPEG, binary PNM; decoded by lib/io/image_decode.h) turned into a model input tensor
// the way torchvision preprocesses them: resize, scale to [0, 1], normalise, NCHW or NHWC.
#pragma once

#include <string>
#include <vector>

#include "lib/io/npy.h"

namespace mt {

struct ImagePreprocess {
  int height = 0;  // resize to height x width; 0 keeps the image's own size
  int width = 0;
  int channels = 3;                // 3: RGB, 1: grayscale (converted from whatever the file holds)
  std::vector<float> mean;         // per channel, applied after scaling to [0, 1]; empty = 0
  std::vector<float> std;          // per channel; empty = 1
  bool nhwc = false;               // layout of the result: [1, C, H, W] (default) or [1, H, W, C]
};

// Decodes an image file and returns a float32 tensor of shape [1, C, H, W] (or [1, H, W, C]):
// value = (pixel / 255 - mean[c]) / std[c]. Errors (unreadable or undecodable file, absurd
// dimensions, bad options) are Error(invalid_input) naming the file.
HostArray load_image(const std::string& path, const ImagePreprocess& options);

// Bilinear resize of an interleaved float image (h x w x channels) with pixel centres at
// half-integers; when shrinking, the triangle filter widens with the scale so every source pixel
// contributes (antialiasing, as PIL does for torchvision's Resize).
std::vector<float> resize_bilinear(const std::vector<float>& pixels, int height, int width, int channels,
                                   int out_height, int out_width);

}  // namespace mt
