#version 450
// Moves elements between tensors by coordinates, one invocation per element of an iteration space:
// reshape, transpose, slice, expand, pad, and the pieces of concat and split.
// Output coordinate k = obase[k] + I[k]. Input coordinate j = base[j] + step[j] * I[src[j]]
// (src[j] < 0: base[j] alone), or in reshape mode the row-major index of I laid over the input's
// dims. An input coordinate outside the input reads `value` (pad mode 0), the nearest edge (1) or
// the reflection (2).
// params: count, mode (0 affine, 1 reshape), pad mode, value, view I (iteration dims), view Y,
// view X, obase[6], base[6], step[6], src[6].
#include "common.glsl"

layout(std430, binding = 1) readonly buffer X { SVEC4 x[]; };
layout(std430, binding = 2) writeonly buffer Y { SVEC4 y[]; };

const int VI = 4, VY = VI + VIEW_WORDS, VX = VY + VIEW_WORDS;
const int OBASE = VX + VIEW_WORDS, BASE = OBASE + 6, STEP = BASE + 6, SRC = STEP + 6;

void main() {
  int e = global_index();
  if (e >= p[0]) return;
  int it[MAX_RANK], co[MAX_RANK], ci[MAX_RANK];
  v_coords(VI, e, it);
  for (int k = 0; k < MAX_RANK; ++k) co[k] = p[OBASE + k] + it[k];
  float value = pf(3);
  bool inside = true;
  if (p[1] == 1) {
    v_coords(VX, e, ci);
  } else {
    for (int j = 0; j < MAX_RANK; ++j) ci[j] = 0;
    for (int j = 0; j < v_rank(VX); ++j) {
      int s = p[SRC + j];
      int cj = p[BASE + j] + (s >= 0 ? p[STEP + j] * it[s] : 0);
      int d = v_dim(VX, j);
      if (cj < 0 || cj >= d) {
        if (p[2] == 0) inside = false;
        else if (p[2] == 1) cj = clamp(cj, 0, d - 1);
        else cj = clamp(cj < 0 ? -cj : 2 * (d - 1) - cj, 0, d - 1);  // clamped: stays in the buffer
      }
      ci[j] = cj;
    }
  }
  if (inside) value = LOAD(x, v_offset(VX, ci));
  STORE_PADDED(y, v_offset(VY, co), value, v_pad_after(VY, co));
}
