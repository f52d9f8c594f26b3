#!/usr/bin/python3
"""Writes the small ONNX models the mt-convert integration tests use into a directory.

Usage: make_onnx_test_models.py OUT_DIR

Each model is built with the onnx helper API (no PyTorch), is a few hundred bytes, and exists to
exercise one path of the importer:
  relu.onnx            valid: y = relu(x), x static 1x3x4x4
  dynamic.onnx         valid but x is batch x 3 x 8 x 8 (needs --input-shape)
  two_inputs.onnx      valid, inputs 'image' and 'mask' with symbolic dimensions
  unsupported.onnx     valid ONNX using ops mt lacks: Unique twice, RandomUniformLike once, plus a Relu
  checker_fails.onnx   a node reads a tensor nothing defines (the ONNX checker rejects it)
  truncated.onnx       relu.onnx cut in half
  not_onnx.onnx        a text file
  empty.onnx           zero bytes
  external.onnx        y = x + w with w in external.bin beside it (valid)
  escaping.onnx        like external.onnx but its data location is ../escaping.bin
  past_end.onnx        external data whose offset+length runs past the end of its file
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(nodes, inputs, outputs, initializers=(), opset=13):
    graph = helper.make_graph(nodes, "test", inputs, outputs, list(initializers))
    return helper.make_model(graph, producer_name="make_onnx_test_models", opset_imports=[helper.make_opsetid("", opset)])


def tensor(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def save(m, out, name):
    onnx.save_model(m, os.path.join(out, name))


def external_model(out, name, location, offset=0, length=None):
    """y = x + w, with w (4 floats, 1 2 3 4) stored in a raw file at `location`."""
    w = numpy_helper.from_array(np.array([1, 2, 3, 4], dtype=np.float32), "w")
    w.ClearField("raw_data")
    w.data_location = TensorProto.EXTERNAL
    entries = {"location": location, "offset": str(offset)}
    if length is not None:
        entries["length"] = str(length)
    for key, value in entries.items():
        entry = w.external_data.add()
        entry.key, entry.value = key, value
    m = model([helper.make_node("Add", ["x", "w"], ["y"])], [tensor("x", [4])], [tensor("y", [4])], [w])
    save(m, out, name)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)

    relu = model([helper.make_node("Relu", ["x"], ["y"])], [tensor("x", [1, 3, 4, 4])], [tensor("y", [1, 3, 4, 4])])
    save(relu, out, "relu.onnx")
    data = relu.SerializeToString()
    with open(os.path.join(out, "truncated.onnx"), "wb") as f:
        f.write(data[: len(data) // 2])

    save(model([helper.make_node("Relu", ["x"], ["y"])], [tensor("x", ["batch", 3, 8, 8])],
               [tensor("y", ["batch", 3, 8, 8])]), out, "dynamic.onnx")
    save(model([helper.make_node("Mul", ["image", "mask"], ["y"])],
               [tensor("image", ["batch", 3, "h", "w"]), tensor("mask", ["batch", 1, "h", "w"])],
               [tensor("y", ["batch", 3, "h", "w"])]), out, "two_inputs.onnx")

    k = numpy_helper.from_array(np.array([2], dtype=np.int64), "k")
    unsupported = model(
        [helper.make_node("RandomUniformLike", ["x"], ["r1"], name="random_a"),
         helper.make_node("RandomUniformLike", ["r1"], ["r2"], name="random_b"),
         helper.make_node("Multinomial", ["r2"], ["m"], name="sample_a"),
         helper.make_node("Cast", ["m"], ["y"], name="cast_a", to=TensorProto.FLOAT)],
        [tensor("x", [1, 8])], [tensor("y", [1, 1])], [k])
    save(unsupported, out, "unsupported.onnx")

    # Operands mt needs at conversion, fed as graph inputs (--input-value pins them): y = x reshaped to
    # `shape`, then sliced from `start` on its last axis (the slice is checked once the reshape converts).
    save(model([helper.make_node("Reshape", ["x", "shape"], ["r"], name="reshape_a"),
                helper.make_node("Slice", ["r", "start", "end", "axis"], ["y"], name="slice_a")],
               [tensor("x", [2, 6]), tensor("shape", [2], TensorProto.INT64), tensor("start", [1], TensorProto.INT64)],
               [tensor("y", [3, 3])],
               [numpy_helper.from_array(np.array([100], dtype=np.int64), "end"),
                numpy_helper.from_array(np.array([-1], dtype=np.int64), "axis")]), out, "runtime_shape.onnx")

    # Opsets before 9: one ONNX's version converter upgrades, one it cannot (no Pad adapter from opset 1).
    save(model([helper.make_node("Relu", ["x"], ["y"])], [tensor("x", [1, 3, 4, 4])], [tensor("y", [1, 3, 4, 4])],
               opset=7), out, "relu_opset7.onnx")
    save(model([helper.make_node("Pad", ["x"], ["y"], name="pad_a", paddings=[0, 1, 0, 1])], [tensor("x", [1, 4])],
               [tensor("y", [1, 6])], opset=1), out, "pad_opset1.onnx")

    broken = model([helper.make_node("Add", ["x", "nowhere"], ["y"])], [tensor("x", [4])], [tensor("y", [4])])
    save(broken, out, "checker_fails.onnx")

    with open(os.path.join(out, "not_onnx.onnx"), "w") as f:
        f.write("this is a text file, not an ONNX model\n")
    open(os.path.join(out, "empty.onnx"), "wb").close()

    weights = np.array([1, 2, 3, 4], dtype=np.float32).tobytes()
    with open(os.path.join(out, "external.bin"), "wb") as f:
        f.write(weights)
    external_model(out, "external.onnx", "external.bin", 0, 16)
    with open(os.path.join(os.path.dirname(os.path.abspath(out)), "escaping.bin"), "wb") as f:
        f.write(weights)
    external_model(out, "escaping.onnx", "../escaping.bin", 0, 16)
    external_model(out, "past_end.onnx", "external.bin", 8, 16)


if __name__ == "__main__":
    main()
