// Shared by every shader: storage precision, the parameter buffer, and addressing of tensors in the
// packed layout (kernels/vulkan/plan/packed_layout.h): the packed axis (1, or 0 for rank-1 tensors) is cut
// into blocks of 4 channels, and a texel (one vec4) holds the 4 channels of one block at one position.
// Lanes past the end of the packed axis are padding and are always written as zero.

#ifdef MT_FP16
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define SVEC4 f16vec4   // storage
#define SFLOAT float16_t
#define AVEC4 f16vec4   // element-wise arithmetic; accumulations stay vec4
#define AFLOAT float16_t
#else
#define SVEC4 vec4
#define SFLOAT float
#define AVEC4 vec4
#define AFLOAT float
#endif

// Texel buffers (NodeContext::fetch): a tensor read with texelFetch(name, texel), vec4 in both
// precisions (the view's format converts from fp16); int32 words as ivec4 or int texels.
#define TEXELS_IN(b, name) layout(set = 0, binding = b) uniform samplerBuffer name
#define INTS_IN(b, name) layout(set = 0, binding = b) uniform isamplerBuffer name
// The element at scalar offset o (as LOAD's) of a texel buffer.
#define FETCH(name, o) texelFetch(name, (o) >> 2)[(o) & 3]

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

// Every dispatch's parameters: 32-bit words (floats by their bits), laid out per shader.
layout(std430, set = 0, binding = 0) readonly buffer Params { int p[]; };
float pf(int i) { return intBitsToFloat(p[i]); }

#define MAX_RANK 6
// A view is 14 words at p[v]: rank, packed axis, dims[6], texel strides[6]. Coordinates along an
// axis of size 1 read index 0, which is how views of broadcast operands work.
#define VIEW_WORDS 14
int v_rank(int v) { return p[v]; }
int v_packed(int v) { return p[v + 1]; }
int v_dim(int v, int a) { return p[v + 2 + a]; }

// Scalar offset (in elements of the storage type) of the element at coordinates c.
int v_offset(int v, int c[MAX_RANK]) {
  int rank = p[v], packed = p[v + 1], texel = 0, lane = 0;
  for (int a = 0; a < rank; ++a) {
    int ca = p[v + 2 + a] == 1 ? 0 : c[a];
    if (a == packed) {
      texel += (ca >> 2) * p[v + 8 + a];
      lane = ca & 3;
    } else {
      texel += ca * p[v + 8 + a];
    }
  }
  return texel * 4 + lane;
}

// How many padding lanes follow the element at c, which its writer must zero: non-zero only for
// the last element along the packed axis.
int v_pad_after(int v, int c[MAX_RANK]) {
  int packed = p[v + 1], d = p[v + 2 + packed];
  return c[packed] == d - 1 ? 3 - (c[packed] & 3) : 0;
}

// Row-major coordinates of flat index e over the dims of view v.
void v_coords(int v, int e, out int c[MAX_RANK]) {
  for (int a = 0; a < MAX_RANK; ++a) c[a] = 0;
  for (int a = p[v] - 1; a >= 0; --a) {
    int d = p[v + 2 + a];
    c[a] = e % d;
    e /= d;
  }
}

// Flat invocation index of a 1-D or 2-D (for more than 65535 groups) dispatch.
int global_index() {
  return int(gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x);
}
int group_index() { return int(gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x); }

#define LOAD(buf, o) float(buf[(o) >> 2][(o) & 3])
#define STORE(buf, o, value) buf[(o) >> 2][(o) & 3] = SFLOAT(value)
// Writes value at o and zeroes the `pad` lanes after it.
#define STORE_PADDED(buf, o, value, pad) \
  {                                      \
    STORE(buf, o, value);                \
    for (int k_ = 1; k_ <= (pad); ++k_) STORE(buf, (o) + k_, 0.0); \
  }
