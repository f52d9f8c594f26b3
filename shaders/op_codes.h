// Operation codes of the element-wise shaders (their OP specialization constant), the one list
// both sides read: unary.comp and binary.comp include it to name the codes they branch on, and
// kernels/vulkan/ops/ops_elementwise.cpp to map an op name to the code it specializes with. Valid
// GLSL and C++ alike: the includer defines the macros it needs (the others expand to nothing).
//
// MT_UNARY_OP(op, CODE, value): unary.comp computes `op` when OP == CODE.
// MT_BINARY_OP(op, CODE, value): binary.comp computes `op` when OP == CODE.
// A code whose op is not an op name is a variant the planner chooses by attribute.
#ifndef MT_UNARY_OP
#define MT_UNARY_OP(op, CODE, value)
#endif
#ifndef MT_BINARY_OP
#define MT_BINARY_OP(op, CODE, value)
#endif

MT_UNARY_OP(relu, RELU, 0)
MT_UNARY_OP(clamp, CLAMP, 1)
MT_UNARY_OP(sigmoid, SIGMOID, 2)
MT_UNARY_OP(tanh, TANH, 3)
MT_UNARY_OP(hardswish, HARDSWISH, 4)
MT_UNARY_OP(hardsigmoid, HARDSIGMOID, 5)
MT_UNARY_OP(silu, SILU, 6)
MT_UNARY_OP(gelu, GELU, 7)
MT_UNARY_OP(gelu_tanh, GELU_TANH, 8)  // gelu with approximate = "tanh"
MT_UNARY_OP(leaky_relu, LEAKY_RELU, 9)
MT_UNARY_OP(elu, ELU, 10)
MT_UNARY_OP(exp, EXP, 11)
MT_UNARY_OP(log, LOG, 12)
MT_UNARY_OP(sqrt, SQRT, 13)
MT_UNARY_OP(neg, NEG, 14)
MT_UNARY_OP(abs, ABS, 15)
MT_UNARY_OP(reciprocal, RECIPROCAL, 16)
MT_UNARY_OP(floor, FLOOR, 17)
MT_UNARY_OP(ceil, CEIL, 18)
MT_UNARY_OP(erf, ERF, 19)
MT_UNARY_OP(softplus, SOFTPLUS, 20)
MT_UNARY_OP(logical_not, LOGICAL_NOT, 21)  // bool tensors are 0.0 / 1.0 here
MT_UNARY_OP(quantize, QUANTIZE, 22)      // float32 -> int8 values: alpha scale, beta zero point
MT_UNARY_OP(dequantize, DEQUANTIZE, 23)  // int8 values -> float32: alpha scale, beta zero point

MT_BINARY_OP(add, ADD, 0)
MT_BINARY_OP(sub, SUB, 1)
MT_BINARY_OP(mul, MUL, 2)
MT_BINARY_OP(div, DIV, 3)
MT_BINARY_OP(pow, POW, 4)
MT_BINARY_OP(max, MAX, 5)
MT_BINARY_OP(min, MIN, 6)
MT_BINARY_OP(prelu, PRELU, 7)
// The logic family: comparisons give 1.0 or 0.0, the boolean ops read 0.0 / 1.0 (vulkan's bool tensors).
MT_BINARY_OP(equal, EQUAL, 8)
MT_BINARY_OP(less, LESS, 9)
MT_BINARY_OP(less_or_equal, LESS_OR_EQUAL, 10)
MT_BINARY_OP(greater, GREATER, 11)
MT_BINARY_OP(greater_or_equal, GREATER_OR_EQUAL, 12)
MT_BINARY_OP(logical_and, LOGICAL_AND, 13)
MT_BINARY_OP(logical_or, LOGICAL_OR, 14)
MT_BINARY_OP(logical_xor, LOGICAL_XOR, 15)
MT_BINARY_OP(add_int8, ADD_INT8, 16)  // add of int8 operands (binary.comp's int8 parameters)
MT_BINARY_OP(mul_int8, MUL_INT8, 17)  // mul of int8 operands

#undef MT_UNARY_OP
#undef MT_BINARY_OP
