// The int8 arithmetic of mt's quantization scheme in shaders (lib/ops/int8_arithmetic.h). int8
// tensors live on the device as floats holding their integer values (-128..127, exact in fp16 too);
// int8 weights as 32-bit words of 4 signed bytes. Sums of products are exact integers: int32, or
// fp32 sums flushed into int32 before they could reach 2^24.
// A shader including this with MT_INT8_DOT defined (after #extension GL_EXT_spirv_intrinsics) also
// gets dot4x8, the signed packed 4x8-bit dot product of VK_KHR_shader_integer_dot_product.

// The 4 signed bytes of a word, lowest first.
vec4 unpack_int8(int word) {
  return vec4(bitfieldExtract(word, 0, 8), bitfieldExtract(word, 8, 8), bitfieldExtract(word, 16, 8),
              bitfieldExtract(word, 24, 8));
}

// 4 integer values in -128..127 as the 4 signed bytes of a word, lowest first.
uint pack_int8(vec4 v) {
  ivec4 q = ivec4(v) & 255;
  return uint(q.x | (q.y << 8) | (q.z << 16) | (q.w << 24));
}

// requantize() of int8_arithmetic.h on 4 lanes: the accumulator times the fp32 multiplier, clamped
// to [lo, hi] relative to the zero point, rounded half to even, plus the zero point (lo, hi and the
// zero point are integers held as floats).
vec4 requantize(ivec4 acc, vec4 multiplier, float zero_point, float lo, float hi) {
  precise vec4 v = vec4(acc) * multiplier;
  return roundEven(clamp(v, lo - zero_point, hi - zero_point)) + zero_point;
}

#ifdef MT_INT8_DOT
// OpSDot (4450) with PackedVectorFormat4x8Bit (format 0): capabilities DotProductInput4x8BitPacked
// (6018) and DotProduct (6019).
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6018, 6019], id = 4450)
int sdot(uint a, uint b, spirv_literal int format);
int dot4x8(uint a, uint b) { return sdot(a, b, 0); }
#endif
