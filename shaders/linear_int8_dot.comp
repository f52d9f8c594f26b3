#version 450
// linear of int8 tensors on int8 dot products (VK_KHR_shader_integer_dot_product): linear_int8.glsl.
#extension GL_EXT_spirv_intrinsics : require
#define MT_INT8_DOT 1
#include "linear_int8.glsl"
