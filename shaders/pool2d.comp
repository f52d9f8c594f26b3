#version 450
// max_pool2d / avg_pool2d on packed NCHW tensors, one invocation per output texel. Padding is -inf
// for max; avg divides by the taps on the input, or with count_include_pad by the taps on the padded
// input (lib/ops/eval/pool.cpp). The int8 variants (lib/ops/eval/quantized*.cpp, values stored as
// floats: int8.glsl): max over the taps on the input from -128, requantized unless input and output
// parameters are equal; avg the exact sum of (x - x_zero) over the taps on the input, requantized
// by x_scale / (count y_scale) with count as for float.
// spec 3: OP (0 max, 1 avg, 2 int8 max, 3 int8 avg), 4-9: KH, KW, SH, SW, DH, DW.
// params: planes (N * channel blocks), H, W, OH, OW, pad top, left, bottom, right, count_include_pad;
// int8: x_zero, y_zero, then for max: equal parameters (0/1), x_scale / y_scale; for avg: x_scale,
// y_scale; then channel blocks and channels (int8 zero points make padding lanes non-zero: zeroed).
#include "common.glsl"
#include "int8.glsl"

layout(constant_id = 3) const int OP = 0;
layout(constant_id = 4) const int KH = 1;
layout(constant_id = 5) const int KW = 1;
layout(constant_id = 6) const int SH = 1;
layout(constant_id = 7) const int SW = 1;
layout(constant_id = 8) const int DH = 1;
layout(constant_id = 9) const int DW = 1;

TEXELS_IN(1, X);
layout(std430, binding = 2) writeonly buffer Y { SVEC4 y[]; };

void main() {
  int H = p[1], W = p[2], OH = p[3], OW = p[4];
  int ox = int(gl_GlobalInvocationID.x), oy = int(gl_GlobalInvocationID.y), plane = int(gl_GlobalInvocationID.z);
  if (ox >= OW || oy >= OH || plane >= p[0]) return;
  int top = oy * SH - p[5], left = ox * SW - p[6];
  vec4 r;
  float x_zero = float(p[10]), y_zero = float(p[11]);
  if (OP == 0 || OP == 2) {
    r = vec4(OP == 0 ? -1.0 / 0.0 : -128.0);
    for (int ky = 0; ky < KH; ++ky) {
      int iy = top + ky * DH;
      if (iy < 0 || iy >= H) continue;
      for (int kx = 0; kx < KW; ++kx) {
        int ix = left + kx * DW;
        if (ix < 0 || ix >= W) continue;
        vec4 v = texelFetch(X, (plane * H + iy) * W + ix);
        r = mix(r, v, bvec4(uvec4(greaterThan(v, r)) | uvec4(isnan(v))));
      }
    }
    if (OP == 2 && p[12] == 0) r = requantize(ivec4(r - x_zero), vec4(pf(13)), y_zero, -128.0, 127.0);
  } else {
    vec4 sum = vec4(0.0);
    int rows = 0, columns = 0, padded_rows = 0, padded_columns = 0;
    for (int ky = 0; ky < KH; ++ky) {
      int iy = top + ky;
      padded_rows += iy >= -p[5] && iy < H + p[7] ? 1 : 0;
      if (iy < 0 || iy >= H) continue;
      ++rows;
      for (int kx = 0; kx < KW; ++kx) {
        int ix = left + kx;
        if (ix < 0 || ix >= W) continue;
        sum += texelFetch(X, (plane * H + iy) * W + ix) - (OP == 3 ? x_zero : 0.0);
      }
    }
    for (int kx = 0; kx < KW; ++kx) {
      int ix = left + kx;
      padded_columns += ix >= -p[6] && ix < W + p[8] ? 1 : 0;
      columns += ix >= 0 && ix < W ? 1 : 0;
    }
    float count = float(p[9] != 0 ? padded_rows * padded_columns : rows * columns);
    if (OP == 1) r = sum / count;
    else r = requantize(ivec4(sum), vec4(pf(12) / (count * pf(13))), y_zero, -128.0, 127.0);
  }
  if (OP >= 2) {
    int valid = p[15] - (plane % p[14]) * 4;
    for (int l = valid; l < 4; ++l) r[l] = 0.0;
  }
  y[(plane * OH + oy) * OW + ox] = SVEC4(r);
}
