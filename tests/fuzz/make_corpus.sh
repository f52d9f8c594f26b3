#!/usr/bin/env bash
# Seed corpora for the fuzz targets, from real files: DIR/onnx (the importer test models, a small
# conv net, and every op_* model scripts/export_models.py exports for CI: one per op and opset),
# DIR/model (those converted to .mt by the mt-convert on PATH, one also prepacked for cpu), DIR/npy (arrays of every dtype and
# rank numpy writes, and the exported models' inputs and outputs) and DIR/image (PNG, JPEG and PPM
# of several sizes and channel counts written by PIL, and the test images of tests/data/image).
# The op models come from $MT_TEST_MODELS when it names a directory scripts/export_models.py
# --set ci wrote (the tests' models), else they are exported here.
#   tests/fuzz/make_corpus.sh DIR
set -euo pipefail
out=$1
src="$(cd "$(dirname "$0")/../.." && pwd)"
mkdir -p "$out"/{onnx,model,npy,image}
/usr/bin/python3 "$src/scripts/make_onnx_test_models.py" "$out/onnx" > /dev/null
rm -f "$out"/*.bin "$out/onnx"/*.bin
if [[ -n ${MT_TEST_MODELS:-} && -d $MT_TEST_MODELS ]]; then
  exported=$MT_TEST_MODELS
else
  ops=$(/usr/bin/python3 "$src/scripts/export_models.py" --list --set ci | grep '^op_' | paste -sd,)
  /usr/bin/python3 "$src/scripts/export_models.py" --only "$ops" --out "$out/exported" 2> /dev/null
  exported=$out/exported
fi
for dir in "$exported"/op_*/; do
  name=$(basename "$dir")
  cp "$dir/model.onnx" "$out/onnx/$name.onnx"
  cp "$dir/input.npy" "$out/npy/$name.input.npy"
  cp "$dir/expected.npy" "$out/npy/$name.expected.npy"
done
rm -rf "$out/exported"
cp "$src"/tests/data/image/*.{png,jpg,ppm,pgm} "$src"/tests/data/image/hostile/* "$out/image/"
/usr/bin/python3 - "$out" << 'PY'
import io, os, sys
import numpy as np
from PIL import Image
import onnx
from onnx import TensorProto, helper, numpy_helper
out = sys.argv[1]
rng = np.random.default_rng(0)
# A conv net touching several importers.
w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w")
b = numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "b")
shape = numpy_helper.from_array(np.array([1, -1], np.int64), "shape")
fw = numpy_helper.from_array(rng.standard_normal((5, 64)).astype(np.float32), "fw")
nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
         helper.make_node("BatchNormalization", ["c", "s", "b", "b", "s"], ["n"]),
         helper.make_node("Relu", ["n"], ["r"]),
         helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
         helper.make_node("Reshape", ["p", "shape"], ["f"]),
         helper.make_node("Gemm", ["f", "fw"], ["g"], transB=1),
         helper.make_node("Softmax", ["g"], ["y"], axis=1)]
s = numpy_helper.from_array(np.ones(4, np.float32), "s")
graph = helper.make_graph(nodes, "net", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])], [w, b, s, shape, fw])
onnx.save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), f"{out}/onnx/net.onnx")
# Wide enough for the cpu backend's packed layouts once prepacked (below): Winograd F(2x2, 3x3), a 1x1
# conv on the packed GEMM, a linear layer on it.
w3 = numpy_helper.from_array(rng.standard_normal((32, 16, 3, 3)).astype(np.float32) * 0.1, "w3")
w1 = numpy_helper.from_array(rng.standard_normal((32, 32, 1, 1)).astype(np.float32) * 0.1, "w1")
fc = numpy_helper.from_array(rng.standard_normal((20, 32)).astype(np.float32), "fc")
nodes = [helper.make_node("Conv", ["x", "w3"], ["a"], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["a"], ["r"]),
         helper.make_node("Conv", ["r", "w1"], ["c"]),
         helper.make_node("GlobalAveragePool", ["c"], ["p"]),
         helper.make_node("Flatten", ["p"], ["f"]),
         helper.make_node("Gemm", ["f", "fc"], ["y"], transB=1)]
graph = helper.make_graph(nodes, "wide", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 12, 12])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 20])], [w3, w1, fc])
onnx.save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), f"{out}/onnx/wide.onnx")
for i, (dtype, shape) in enumerate([(np.float32, (2, 3)), (np.float64, (4,)), (np.int64, (1, 2, 2)), (np.uint8, (3, 1)),
                                    (np.int8, ()), (np.float16, (2, 2, 2, 2)), (np.int32, (0, 3)), (np.bool_, (5,))]):
    np.save(f"{out}/npy/a{i}.npy", (rng.standard_normal(shape) * 10).astype(dtype))
np.save(f"{out}/npy/fortran.npy", np.asfortranarray(rng.standard_normal((3, 4)).astype(np.float32)))
for i, (mode, size) in enumerate([("RGB", (8, 6)), ("L", (5, 5)), ("RGBA", (4, 7)), ("P", (3, 3)), ("LA", (2, 9))]):
    image = Image.fromarray(rng.integers(0, 255, size[::-1] + ((len(mode),) if len(mode) > 1 else ()), dtype=np.uint8)
                            if mode != "P" else rng.integers(0, 255, size[::-1], dtype=np.uint8), mode if mode != "P" else "L")
    if mode == "P":
        image = image.convert("P")
    for fmt in ["PNG", "JPEG", "PPM"]:
        try:
            converted = image if fmt in ("PNG", "GIF") else image.convert("RGB")
            converted.save(f"{out}/image/i{i}.{fmt.lower()}", fmt)
        except (OSError, ValueError):
            pass
PY
convert=$(command -v mt-convert || true)
for model in "$out"/onnx/*.onnx; do
  "$convert" "$model" -o "$out/model/$(basename "$model" .onnx).mt" 2> /dev/null || true
done
ls "$out/model" | grep -q . || { echo "make_corpus: no .mt seeds (no working mt-convert)" >&2; exit 1; }
# Prepacked seeds: the cpu layouts for AVX-512 and for generic CPUs (packed GEMM panels, Winograd's points).
prepack=$(dirname "$convert")/mt-prepack
if [[ -x $prepack && -f "$out/model/wide.mt" ]]; then
  for target in avx512 generic; do
    "$prepack" --backend cpu --cpu "$target" "$out/model/wide.mt" -o "$out/model/wide.cpu-$target.mt" 2> /dev/null || true
  done
fi
