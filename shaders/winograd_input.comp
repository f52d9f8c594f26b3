#version 450
// Winograd F(2x2, 3x3), step 1 of 3: the input transform. Each invocation takes the 4x4 input
// patch of one 2x2 output tile of one input block (zero outside the image) and writes its 16
// transformed texels B^T d B to V[position][image, input block][tile], position = 4 row + column.
// params: N, ICB, H, W, TH, TW (output tiles down and across), pad_top, pad_left.
#include "common.glsl"

TEXELS_IN(1, X);
layout(std430, binding = 2) writeonly buffer V { SVEC4 v[]; };

void main() {
  int planes = p[0] * p[1], H = p[2], W = p[3], TW = p[5], T = p[4] * p[5];
  int t = int(gl_GlobalInvocationID.x), z = int(gl_GlobalInvocationID.y);
  if (t >= T || z >= planes) return;
  int iy0 = (t / TW) * 2 - p[6], ix0 = (t % TW) * 2 - p[7];
  vec4 d[4][4];
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) {
      int iy = iy0 + r, ix = ix0 + c;
      d[r][c] = iy >= 0 && iy < H && ix >= 0 && ix < W ? texelFetch(X, (z * H + iy) * W + ix) : vec4(0.0);
    }
  // B^T d (rows), then (B^T d) B (columns); B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1].
  vec4 s[4][4];
  for (int c = 0; c < 4; ++c) {
    s[0][c] = d[0][c] - d[2][c];
    s[1][c] = d[1][c] + d[2][c];
    s[2][c] = d[2][c] - d[1][c];
    s[3][c] = d[1][c] - d[3][c];
  }
  int stride = planes * T, base = z * T + t;
  for (int r = 0; r < 4; ++r) {
    v[(4 * r + 0) * stride + base] = SVEC4(s[r][0] - s[r][2]);
    v[(4 * r + 1) * stride + base] = SVEC4(s[r][1] + s[r][2]);
    v[(4 * r + 2) * stride + base] = SVEC4(s[r][2] - s[r][1]);
    v[(4 * r + 3) * stride + base] = SVEC4(s[r][1] - s[r][3]);
  }
}
