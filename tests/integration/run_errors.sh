#!/usr/bin/env bash
# mt-run's errors, each with its exit status and a message naming what is wrong: wrong input shape
# or dtype, missing input, unknown input name, unreadable or undecodable image, corrupt, Fortran-order
# and big-endian .npy files, unknown or unbuilt device, a model prepacked for another backend, a
# reference of the wrong shape, and a failed --compare. Also that a PNG with torchvision
# preprocessing and a good --compare succeed. Model: squeezenet1_1 from $MT_TEST_MODELS (an RGB input).
set -euo pipefail

: "${MT_SOURCE_DIR:?MT_SOURCE_DIR must name the source tree}"
source "$MT_SOURCE_DIR/tests/integration/common.bash"
: "${MT_TEST_MODELS:?MT_TEST_MODELS must name the directory scripts/export_models.py --set ci wrote}"
python=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dir="$MT_TEST_MODELS/squeezenet1_1"
model="$work/model.mt"

[[ -f "$dir/model.onnx" ]] || fail "$dir/model.onnx missing (run scripts/export_models.py --set ci)"
mt-convert "$dir/model.onnx" -o "$model"
device=cpu
mt-run --list-devices | grep -qx cpu || device=reference

# Input arrays of the wrong shape and dtype, Fortran order, big-endian, and corrupt files.
"$python" - "$work" <<'PY'
import sys
import numpy as np
w = sys.argv[1]
np.save(f"{w}/small.npy", np.zeros((1, 3, 100, 100), np.float32))
np.save(f"{w}/int64.npy", np.zeros((1, 3, 224, 224), np.int64))
np.save(f"{w}/fortran.npy", np.asfortranarray(np.zeros((1, 3, 224, 224), np.float32)))
np.save(f"{w}/bigendian.npy", np.zeros((1, 3, 224, 224), ">f4"))
np.save(f"{w}/float64.npy", np.zeros((1, 3, 224, 224), np.float64))
open(f"{w}/truncated.npy", "wb").write(open(f"{w}/int64.npy", "rb").read()[:5000])
open(f"{w}/badmagic.npy", "wb").write(b"PK\x03\x04" + b"\0" * 200)
header = b"{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 224, 224), 'x': 1}"
header += b" " * (118 - len(header) - 1) + b"\n"
open(f"{w}/badheader.npy", "wb").write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + b"\0" * 602112)
# A 64x48 RGB gradient image.
import zlib, struct
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 64, 48, 8, 2, 0, 0, 0))
png += chunk(b"IDAT", zlib.compress(b"".join(b"\0" + bytes(v for x in range(64) for v in (x * 4, y * 5, 128))
                                            for y in range(48))))
png += chunk(b"IEND", b"")
open(f"{w}/gradient.png", "wb").write(png)
open(f"{w}/notimage.png", "wb").write(b"this is not an image\n")
PY

echo "== input errors (exit 3, naming the input, the expected and the given shape or dtype)"
expect 3 "input 'input': $work/small.npy holds float32 1x3x100x100, the model expects float32 1x3x224x224" \
  mt-run --device "$device" "$model" --input "$work/small.npy"
expect 3 "holds int64 1x3x224x224, the model expects float32 1x3x224x224" mt-run "$model" --input input="$work/int64.npy"
expect 3 "missing input: 'input' (float32 1x3x224x224)" mt-run --device "$device" "$model"
expect 2 "the model has no input 'image'" mt-run "$model" --input image="$work/small.npy"
expect 2 "input 'input' is given twice" mt-run "$model" --input "$work/small.npy" --input input="$work/small.npy"

echo "== images"
expect 3 "$work/missing.png: no such file" mt-run "$model" --input "$work/missing.png"
expect 3 "$work/notimage.png: cannot decode image" mt-run "$model" --input "$work/notimage.png"
expect 3 "holds float32 1x3x100x50, the model expects float32 1x3x224x224" \
  mt-run "$model" --input "$work/gradient.png" --size 100,50
expect 2 "--mean takes 1 or 3 values, got 2" mt-run "$model" --input "$work/gradient.png" --mean 0.5,0.5
mt-run --device "$device" "$model" --input "$work/gradient.png" --size 224,224 \
  --mean 0.485,0.456,0.406 --std 0.229,0.224,0.225 --topk 3 > "$work/out" || fail "a PNG input did not run"
grep -q "^output float32 1x1000: min" "$work/out" || fail "no output summary for a PNG input: $(cat "$work/out")"
echo "ok   a PNG with --size/--mean/--std runs"

echo "== corrupt and unsupported .npy files"
expect 3 "$work/truncated.npy: shape 1x3x224x224 int64 needs 1204224 data bytes, the file has 4872" \
  mt-run "$model" --input "$work/truncated.npy"
expect 3 "$work/badmagic.npy: not a .npy file (bad magic)" mt-run "$model" --input "$work/badmagic.npy"
expect 3 "unexpected key 'x'" mt-run "$model" --input "$work/badheader.npy"
expect 4 "Fortran-order arrays are not supported" mt-run "$model" --input "$work/fortran.npy"
expect 4 "big-endian arrays (>f4) are not supported" mt-run "$model" --input "$work/bigendian.npy"
expect 4 "dtype '<f8' is not supported" mt-run "$model" --input "$work/float64.npy"

echo "== devices and prepacked models"
expect 2 "--device: tpu not in {reference,cpu,vulkan}" mt-run --device tpu "$model" --random-input
if ! mt-run --list-devices | grep -qx vulkan; then
  expect 4 "device 'vulkan' is not built into this mt" mt-run --device vulkan "$model" --random-input
fi
"$python" "$MT_SOURCE_DIR/tests/integration/mtfile.py" edit "$model" "$work/prepacked.mt" 'g["metadata"]["backend"] = "vulkan"'
expect 4 "was prepacked for backend 'vulkan' and cannot run on '$device': use --device vulkan" \
  mt-run --device "$device" "$work/prepacked.mt" --random-input

# Nodes a backend cannot run are all listed, as mt-opnames --check lists them: here the weights of the
# first two convolutions claim a prepacked layout the reference backend does not read.
"$python" "$MT_SOURCE_DIR/tests/integration/mtfile.py" edit "$model" "$work/layout.mt" '
weights = [n["inputs"][1] for n in g["nodes"] if n["op"] == "conv2d"][:2]
for t in g["tensors"]:
    if t["name"] in weights:
        t["layout"] = "nhwc"'
expect 4 "backend 'reference' cannot run 2 nodes: " mt-run --device reference "$work/layout.mt" --random-input
[[ $(grep -o "(conv2d: tensor '[^']*' has layout nhwc" "$work/err" | wc -l) -eq 2 ]] ||
  fail "the unsupported nodes are not listed with op and reason: $(cat "$work/err")"

echo "== --compare"
expect 3 "output 'output' is float32 1x1000 but the reference $work/small.npy is float32 1x3x100x100" \
  mt-run --device "$device" "$model" --input "$dir/input.npy" --compare "$work/small.npy"
expect 5 "outputs differ from the reference beyond the tolerances" \
  mt-run --device "$device" "$model" --input "$work/gradient.png" --compare "$dir/expected.npy"
grep -q "FAILED: .* elements exceed" "$work/out" || fail "a failed --compare does not say why: $(cat "$work/out")"
mt-run --device "$device" "$model" --input "$dir/input.npy" --compare "$dir/expected.npy" --atol-range 1e-4 \
  --rtol 0 --min-cosine 0.99999 --json > "$work/out" || fail "--compare against the model's own expected output failed"
"$python" -c 'import json, sys; r = json.load(open(sys.argv[1])); assert r["passed"] and r["compare"][0]["cosine"] >= 0.99999, r' \
  "$work/out" || fail "--json report of a passing --compare is wrong"
echo "ok   --compare passes on the exported reference and --json reports it"
echo "run_errors: all checks passed"
