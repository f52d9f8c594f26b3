#!/usr/bin/python3
"""Writes small pre-quantized ONNX models (QDQ and QLinear*) for the tests of mt-convert's QDQ import.

Usage: make_qdq_test_models.py OUT_DIR

For each model NAME it writes OUT_DIR/NAME.onnx, OUT_DIR/NAME.in<K>.npy (seeded inputs, one per graph
input, in order) and lists NAME, the output scale, and how many of its ops mt-convert should make int8 and
how many it should leave float32, on stdout. Each is
built with the onnx helper API and covers one pattern of lib/import/fold_qdq.cpp:
  qdq_conv            uint8 activations, int8 per-channel weights, int32 bias, Relu folded into the clamp
  qdq_depthwise       int8 activations, per-tensor weights, group = channels, stride 2, Clip(0, 6) folded
  qdq_gemm            Gemm (transB) with int8 per-tensor weights and int32 bias
  qdq_gemm_transposed Gemm without transB, int8 weights per column, Relu folded
  qdq_matmul          MatMul with int8 weights per column (axis 1), uint8 activations, a 3-D input
  qdq_add             Add of two uint8 tensors with different scales, Relu folded
  qdq_pools           MaxPool, AveragePool, GlobalAveragePool and Concat between Q/DQ pairs
  qdq_concat_requantize Concat of int8 and uint8 inputs whose scales and zero points differ from the output's
                      (PyTorch's quantized cat, ShuffleNetV2's blocks): int8 concat requantizing each input
  qdq_silu            x * Sigmoid(x) between a DequantizeLinear and a QuantizeLinear (SiLU, EfficientNet): int8 silu
  qlinear_conv        QLinearConv (uint8 x, int8 per-channel weights, int32 bias)
  qlinear_matmul      QLinearMatMul (uint8 a, int8 b)
  qdq_conv_zero_point weights with a nonzero zero point: imported as an exact float32 conv
  conv_integer        ConvInteger as quantize_dynamic writes it (Cast, Mul by the scales, Add the bias), uint8
                      x from a QuantizeLinear, uint8 weights with a nonzero zero point: float32 on exact integers
  conv_integer_int8   ConvInteger with int8 x and int8 weights, zero points 0 and -3
  matmul_integer      MatMulInteger, int8 a (zero point -5), int8 b with a zero point per column, a 3-D a
  matmul_integer_uint8 MatMulInteger, uint8 a and uint8 b with per-tensor zero points
  dynamic_matmul      quantize_dynamic's MatMul: DynamicQuantizeLinear, MatMulInteger, Cast, Mul by x_scale * w_scale
  dynamic_conv        quantize_dynamic's Conv: DynamicQuantizeLinear, ConvInteger, Cast, Mul by the scales, Add bias
(the integer ops run float32 on exact integers: no op count, None, and a tolerance of 1e-5 instead of a scale)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13


def _init(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


class Builder:
    def __init__(self):
        self.nodes, self.inits, self.count = [], [], 0

    def const(self, array, hint="c"):
        self.count += 1
        name = f"{hint}{self.count}"
        self.inits.append(_init(name, array))
        return name

    def node(self, op, inputs, **attrs):
        self.count += 1
        out = f"{op.lower()}{self.count}"
        self.nodes.append(helper.make_node(op, inputs, [out], name=f"{op}_{self.count}", **attrs))
        return out

    def q(self, x, scale, zero, axis=None):
        zp = self.const(zero, "zp")
        return self.node("QuantizeLinear", [x, self.const(np.float32(scale), "s"), zp],
                         **({} if axis is None else {"axis": axis}))

    def dq(self, x, scale, zero, axis=None):
        return self.node("DequantizeLinear", [x, self.const(np.asarray(scale, np.float32), "s"),
                                              self.const(zero, "zp")], **({} if axis is None else {"axis": axis}))

    def qdq(self, x, scale, zero):
        return self.dq(self.q(x, scale, zero), scale, zero)

    def model(self, inputs, output):
        self.nodes[-1].output[0] = "y"
        graph = helper.make_graph(self.nodes, "qdq", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
                                                      for n, s in inputs],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])], self.inits)
        m = helper.make_model(graph, producer_name="make_qdq_test_models",
                              opset_imports=[helper.make_opsetid("", OPSET)])
        onnx.checker.check_model(m)
        return m


def weights(rng, shape):
    return rng.integers(-127, 128, size=shape, dtype=np.int8)


def conv_weights(rng, out_channels, per_channel):
    return (rng.uniform(0.002, 0.01, out_channels) if per_channel else np.array([0.006])).astype(np.float32)


def qdq_conv(rng):
    b = Builder()
    xs, xz = 0.02, np.uint8(120)
    ws = conv_weights(rng, 8, True)
    w = b.dq(b.const(weights(rng, (8, 3, 3, 3))), ws, np.zeros(8, np.int8), axis=0)
    bias = b.dq(b.const(rng.integers(-2000, 2000, 8, dtype=np.int32)), (xs * ws).astype(np.float32),
                np.zeros(8, np.int32), axis=0)
    y = b.node("Relu", [b.node("Conv", [b.qdq("x", xs, xz), w, bias], pads=[1, 1, 1, 1])])
    b.qdq(y, 0.03, np.uint8(0))
    return b.model([("x", [1, 3, 10, 10])], "y"), 0.03, (1, 0)


def qdq_depthwise(rng):
    b = Builder()
    w = b.dq(b.const(weights(rng, (4, 1, 3, 3))), np.float32(0.01), np.int8(0))
    y = b.node("Conv", [b.qdq("x", 0.025, np.int8(-3)), w], group=4, strides=[2, 2], pads=[1, 1, 1, 1])
    y = b.node("Clip", [y, b.const(np.float32(0)), b.const(np.float32(6))])
    b.qdq(y, 0.02, np.int8(-128))
    return b.model([("x", [1, 4, 9, 9])], "y"), 0.02, (1, 0)


def qdq_gemm(rng):
    b = Builder()
    xs, ws = 0.03, np.float32(0.004)
    w = b.dq(b.const(weights(rng, (8, 16))), ws, np.int8(0))
    bias = b.dq(b.const(rng.integers(-500, 500, 8, dtype=np.int32)), np.float32(xs * ws), np.int32(0))
    y = b.node("Gemm", [b.qdq("x", xs, np.int8(5)), w, bias], transB=1)
    b.qdq(y, 0.05, np.int8(-10))
    return b.model([("x", [2, 16])], "y"), 0.05, (1, 0)


def qdq_gemm_transposed(rng):
    b = Builder()
    xs, ws = 0.03, rng.uniform(0.002, 0.006, 6).astype(np.float32)
    w = b.dq(b.const(weights(rng, (16, 6))), ws, np.zeros(6, np.int8), axis=1)
    bias = b.dq(b.const(rng.integers(-500, 500, 6, dtype=np.int32)), (xs * ws).astype(np.float32),
                np.zeros(6, np.int32), axis=0)
    y = b.node("Relu", [b.node("Gemm", [b.qdq("x", xs, np.uint8(128)), w, bias])])
    b.qdq(y, 0.05, np.uint8(0))
    return b.model([("x", [3, 16])], "y"), 0.05, (1, 0)


def qdq_matmul(rng):
    b = Builder()
    w = b.dq(b.const(weights(rng, (16, 8))), rng.uniform(0.002, 0.006, 8).astype(np.float32), np.zeros(8, np.int8),
             axis=1)
    y = b.node("MatMul", [b.qdq("x", 0.02, np.uint8(128)), w])
    b.qdq(y, 0.04, np.uint8(131))
    return b.model([("x", [1, 3, 16])], "y"), 0.04, (1, 0)


def qdq_add(rng):
    b = Builder()
    y = b.node("Relu", [b.node("Add", [b.qdq("a", 0.02, np.uint8(128)), b.qdq("b", 0.035, np.uint8(100))])])
    b.qdq(y, 0.03, np.uint8(0))
    return b.model([("a", [1, 4, 5, 5]), ("b", [1, 4, 5, 5])], "y"), 0.03, (1, 0)


def qdq_pools(rng):
    b = Builder()
    s, z = 0.04, np.uint8(128)
    x = b.qdq("x", s, z)
    m = b.qdq(b.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]), s, z)
    a = b.qdq(b.node("AveragePool", [m], kernel_shape=[2, 2]), 0.015, np.uint8(120))
    g = b.qdq(b.node("GlobalAveragePool", [a]), 0.02, np.uint8(128))
    g2 = b.qdq(b.node("GlobalAveragePool", [m]), 0.02, np.uint8(128))
    b.qdq(b.node("Concat", [g, g2], axis=1), 0.02, np.uint8(128))
    return b.model([("x", [1, 6, 9, 9])], "y"), 0.02, (5, 0)


def qdq_concat_requantize(rng):
    b = Builder()
    x1 = b.qdq("x", 0.03, np.uint8(100))
    x2 = b.qdq(b.node("Neg", ["x"]), 0.045, np.int8(7))
    b.qdq(b.node("Concat", [x1, x2], axis=1), 0.05, np.uint8(128))
    return b.model([("x", [1, 5, 4, 3])], "y"), 0.05, (1, 0)


def qdq_silu(rng):
    b = Builder()
    x = b.qdq("x", 0.03, np.uint8(110))
    b.qdq(b.node("Mul", [x, b.node("Sigmoid", [x])]), 0.02, np.uint8(14))
    return b.model([("x", [1, 4, 5, 5])], "y"), 0.02, (1, 0)


def qlinear_conv(rng):
    b = Builder()
    xs, ws = 0.02, conv_weights(rng, 6, True)
    x = b.q("x", xs, np.uint8(110))
    y = b.node("QLinearConv", [x, b.const(np.float32(xs)), b.const(np.uint8(110)), b.const(weights(rng, (6, 3, 3, 3))),
                               b.const(ws), b.const(np.zeros(6, np.int8)), b.const(np.float32(0.05)),
                               b.const(np.uint8(128)), b.const(rng.integers(-3000, 3000, 6, dtype=np.int32))],
               pads=[1, 1, 1, 1], strides=[2, 2])
    b.dq(y, 0.05, np.uint8(128))
    return b.model([("x", [1, 3, 8, 8])], "y"), 0.05, (1, 0)


def qlinear_matmul(rng):
    b = Builder()
    x = b.q("x", 0.02, np.uint8(128))
    y = b.node("QLinearMatMul", [x, b.const(np.float32(0.02)), b.const(np.uint8(128)), b.const(weights(rng, (12, 5))),
                                 b.const(np.float32(0.005)), b.const(np.int8(0)), b.const(np.float32(0.03)),
                                 b.const(np.uint8(128))])
    b.dq(y, 0.03, np.uint8(128))
    return b.model([("x", [4, 12])], "y"), 0.03, (1, 0)


def qdq_conv_zero_point(rng):
    b = Builder()
    w = b.dq(b.const(weights(rng, (4, 3, 3, 3))), np.float32(0.01), np.int8(3))
    y = b.node("Conv", [b.qdq("x", 0.02, np.uint8(128)), w])
    b.qdq(y, 0.04, np.uint8(128))
    return b.model([("x", [1, 3, 6, 6])], "y"), 0.04, (0, 1)


def integer_op(b, op, x, xs, xz, w, ws, wz, scale_shape, **attrs):
    """x quantized at (xs, xz), op(x, w, xz, wz), then Cast and Mul by xs * ws as quantize_dynamic writes them."""
    y = b.node(op, [b.q(x, xs, xz), b.const(w, "w"), b.const(xz, "zp"), b.const(wz, "zp")], **attrs)
    y = b.node("Cast", [y], to=TensorProto.FLOAT)
    return b.node("Mul", [y, b.const((np.float32(xs) * np.asarray(ws, np.float32)).reshape(scale_shape), "s")])


def conv_integer(rng):
    b = Builder()
    w = rng.integers(0, 256, (6, 3, 3, 3), dtype=np.uint8)
    y = integer_op(b, "ConvInteger", "x", 0.02, np.uint8(110), w, 0.004, np.uint8(131), [1, 1, 1, 1],
                   pads=[1, 1, 1, 1], strides=[2, 1])
    b.node("Add", [y, b.const(rng.uniform(-1, 1, (1, 6, 1, 1)).astype(np.float32), "bias")])
    return b.model([("x", [1, 3, 9, 8])], "y"), 1e-5, (0, 0)


def conv_integer_int8(rng):
    b = Builder()
    integer_op(b, "ConvInteger", "x", 0.03, np.int8(0), weights(rng, (5, 4, 1, 3)), 0.005, np.int8(-3), [],
               dilations=[1, 2], group=1)
    return b.model([("x", [1, 4, 6, 7])], "y"), 1e-5, (0, 0)


def matmul_integer(rng):
    b = Builder()
    ws = rng.uniform(0.002, 0.006, 5).astype(np.float32)
    integer_op(b, "MatMulInteger", "x", 0.02, np.int8(-5), weights(rng, (16, 5)), ws,
               rng.integers(-4, 5, 5, dtype=np.int8), [5])
    return b.model([("x", [2, 3, 16])], "y"), 1e-5, (0, 0)


def matmul_integer_uint8(rng):
    b = Builder()
    integer_op(b, "MatMulInteger", "x", 0.025, np.uint8(128), rng.integers(0, 256, (12, 7), dtype=np.uint8), 0.003,
               np.uint8(120), [])
    return b.model([("x", [4, 12])], "y"), 1e-5, (0, 0)


def dynamic_integer_op(b, op, x, w, ws, wz, **attrs):
    """DynamicQuantizeLinear(x), op(x_q, w, x_zero, wz), Cast, Mul by x_scale * ws: quantize_dynamic's output."""
    b.count += 1
    xq, x_scale, x_zero = (f"{n}{b.count}" for n in ("xq", "x_scale", "x_zero"))
    b.nodes.append(helper.make_node("DynamicQuantizeLinear", [x], [xq, x_scale, x_zero], name=f"dql{b.count}"))
    y = b.node("Cast", [b.node(op, [xq, b.const(w, "w"), x_zero, b.const(wz, "zp")], **attrs)], to=TensorProto.FLOAT)
    return b.node("Mul", [y, b.node("Mul", [x_scale, b.const(np.float32(ws), "s")])])


def dynamic_matmul(rng):
    b = Builder()
    y = dynamic_integer_op(b, "MatMulInteger", "x", weights(rng, (16, 5)), 0.004, np.int8(0))
    b.node("Add", [y, b.const(rng.uniform(-1, 1, 5).astype(np.float32), "bias")])
    return b.model([("x", [2, 3, 16])], "y"), 1e-5, None


def dynamic_conv(rng):
    b = Builder()
    w = rng.integers(0, 256, (6, 3, 3, 3), dtype=np.uint8)
    y = dynamic_integer_op(b, "ConvInteger", "x", w, 0.004, np.uint8(128), pads=[1, 1, 1, 1])
    b.node("Add", [y, b.const(rng.uniform(-1, 1, (1, 6, 1, 1)).astype(np.float32), "bias")])
    return b.model([("x", [1, 3, 9, 8])], "y"), 1e-5, None


MODELS = [qdq_conv, qdq_depthwise, qdq_gemm, qdq_gemm_transposed, qdq_matmul, qdq_add, qdq_pools,
          qdq_concat_requantize, qdq_silu, qlinear_conv, qlinear_matmul, qdq_conv_zero_point, conv_integer, conv_integer_int8, matmul_integer, matmul_integer_uint8,
          dynamic_matmul, dynamic_conv]


def write_all(out):
    """Writes every model and its inputs into OUT; returns [(name, output scale, (int8 ops, float32 ops))]."""
    os.makedirs(out, exist_ok=True)
    listed = []
    for k, make in enumerate(MODELS):
        rng = np.random.default_rng(1000 + k)
        m, scale, counts = make(rng)
        name = make.__name__
        onnx.save_model(m, os.path.join(out, f"{name}.onnx"))
        for i, value in enumerate(m.graph.input):
            shape = [d.dim_value for d in value.type.tensor_type.shape.dim]
            # Beyond the quantization ranges on both sides, so that saturation is covered too.
            np.save(os.path.join(out, f"{name}.in{i}.npy"), rng.uniform(-3.0, 3.5, shape).astype(np.float32))
        listed.append((name, scale, counts))
    return listed


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    for name, scale, counts in write_all(sys.argv[1]):
        print(name, scale, *(counts or ("-", "-")))
