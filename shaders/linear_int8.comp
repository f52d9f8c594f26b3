#version 450
// linear of int8 tensors with float sums of unpacked weights: linear_int8.glsl.
#include "linear_int8.glsl"
