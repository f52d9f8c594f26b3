#include "lib/ops/max_pool_indices.h"

#include <cmath>

namespace mt {

void max_pool2d_indices(const Window2d& window, const Shape& input, const Shape& output, bool column_major,
                        const float* x, int64_t* indices) {
  const int64_t planes = input[0] * input[1], height = input[2], width = input[3];
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oh = 0; oh < output[2]; ++oh)
      for (int64_t ow = 0; ow < output[3]; ++ow) {
        int64_t best = -1;
        for (int64_t kh = 0; kh < window.kernel[0]; ++kh) {
          const int64_t ih = oh * window.stride[0] - window.pad_begin[0] + kh * window.dilation[0];
          if (ih < 0 || ih >= height) continue;
          for (int64_t kw = 0; kw < window.kernel[1]; ++kw) {
            const int64_t iw = ow * window.stride[1] - window.pad_begin[1] + kw * window.dilation[1];
            if (iw < 0 || iw >= width) continue;
            const int64_t at = (p * height + ih) * width + iw;
            if (best < 0 || (std::isnan(x[at]) && !std::isnan(x[best])) || x[at] > x[best]) best = at;
          }
        }
        if (column_major && best >= 0) {
          const int64_t in_plane = best - p * height * width;
          best = p * height * width + (in_plane % width) * height + in_plane / width;
        }
        indices[(p * output[2] + oh) * output[3] + ow] = best;
      }
}

}  // namespace mt
