#version 450
// conv2d of int8 tensors with float sums of unpacked weights: conv2d_int8.glsl.
#include "conv2d_int8.glsl"
