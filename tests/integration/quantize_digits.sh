#!/usr/bin/env bash
# mt-quantize end to end on the shipped digits classifier: convert (batch 20) | fuse | quantize
# with models/digits-calib.npy, then top-1 accuracy of fp32 and int8 on the 360 held-out test
# images (18 batches) on the reference backend, and the int8 model again on the cpu backend
# (XNNPACK's int8 operators): int8 within 0.5 points of fp32 on both; the weights about 4x
# smaller; the JSON report's structure; the quant parameters in the file; --keep-fp32 by node and by
# op type; --sensitivity; a result the cpu backend refuses is never written; usage errors.
set -euo pipefail

: "${MT_SOURCE_DIR:?MT_SOURCE_DIR must name the source tree}"
source "$MT_SOURCE_DIR/tests/integration/common.bash"
python=/usr/bin/python3
models="$MT_SOURCE_DIR/models"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mt-convert "$models/digits.onnx" --input-shape image:20,1,8,8 | mt-fuse -q | \
  mt-quantize --calibration "$models/digits-calib.npy" --report "$work/report.json" -o "$work/int8.mt"
mt-convert "$models/digits.onnx" --input-shape image:20,1,8,8 | mt-fuse -q -o "$work/fp32.mt"

# The test set in 18 batches of 20.
"$python" - "$models/digits-test.npy" "$work" <<'PY'
import sys
import numpy as np
x = np.load(sys.argv[1])
assert x.shape == (360, 1, 8, 8), x.shape
for b in range(18):
    np.save(f"{sys.argv[2]}/batch{b:02d}.npy", np.ascontiguousarray(x[b * 20:(b + 1) * 20]))
PY
for kind in fp32 int8; do
  for b in $(seq -w 0 17); do
    mt-run -d reference -q "$work/$kind.mt" -i "$work/batch$b.npy" -o "$work/$kind-logits$b.npy" > /dev/null
  done
done
for b in $(seq -w 0 17); do
  mt-run -d cpu -q "$work/int8.mt" -i "$work/batch$b.npy" -o "$work/int8-cpu-logits$b.npy" > /dev/null
done

"$python" - "$models/digits-test-labels.npy" "$work" <<'PY'
import json, struct, sys
import numpy as np
labels = np.load(sys.argv[1])
work = sys.argv[2]
acc = {}
for kind in ("fp32", "int8", "int8-cpu"):
    logits = np.concatenate([np.load(f"{work}/{kind}-logits{b:02d}.npy") for b in range(18)])
    acc[kind] = 100.0 * float((logits.argmax(axis=1) == labels).mean())
print(f"top-1 accuracy: fp32 {acc['fp32']:.2f}%, int8 {acc['int8']:.2f}% (reference), {acc['int8-cpu']:.2f}% (cpu)")
assert acc["fp32"] > 97.0, acc
assert acc["int8"] >= acc["fp32"] - 0.5, acc
assert acc["int8-cpu"] >= acc["fp32"] - 0.5, acc

def graph(path):
    data = open(path, "rb").read()
    offset, size = struct.unpack_from("<QQ", data, 24)
    return json.loads(data[offset:offset + size])

def weight_bytes(g):
    return sum(t["size"] for t in g["tensors"] if "size" in t)

fp32, int8 = graph(f"{work}/fp32.mt"), graph(f"{work}/int8.mt")
ratio = weight_bytes(fp32) / weight_bytes(int8)
print(f"weight bytes: fp32 {weight_bytes(fp32)}, int8 {weight_bytes(int8)} ({ratio:.2f}x)")
assert 3.5 < ratio <= 4.0, ratio
import os
file_ratio = os.path.getsize(f"{work}/fp32.mt") / os.path.getsize(f"{work}/int8.mt")
print(f"file size: fp32 {os.path.getsize(f'{work}/fp32.mt')}, int8 {os.path.getsize(f'{work}/int8.mt')} ({file_ratio:.2f}x)")
assert file_ratio > 2.5, file_ratio  # headers and JSON weigh more in a 40 KB model than in a real one
ops = [n["op"] for n in int8["nodes"]]
assert ops.count("quantize") == 1 and ops.count("dequantize") == 1, ops
assert ops.count("conv2d") == 2 and ops.count("linear") == 1, ops
tensors = {t["name"]: t for t in int8["tensors"]}
convs = [n for n in int8["nodes"] if n["op"] == "conv2d"]
for node in convs:
    w = tensors[node["inputs"][1]]
    # Per-channel parameters live in a binary table in the data section (mt-format(5)).
    assert w["dtype"] == "int8" and w["quant"]["axis"] == 0 and "scales" not in w["quant"], w
    assert w["quant"]["table_offset"] % 64 == 0, w
    assert tensors[node["inputs"][2]]["dtype"] == "int32"
    assert tensors[node["outputs"][0]]["quant"]["axis"] == -1

report = json.load(open(f"{work}/report.json"))
assert report["samples"] == 5 and report["int8_nodes"] == 4, report
layers = report["layers"]
assert [l["op"] for l in layers].count("conv2d") == 2
assert all(layers[i]["sqnr_db"] <= layers[i + 1]["sqnr_db"] for i in range(len(layers) - 1)), layers
assert all(l["sqnr_db"] > 15 and 0 < l["cosine"] <= 1.0 + 1e-9 for l in layers), layers
out = report["outputs"][0]
assert out["tensor"] == "logits" and out["cosine"] > 0.99 and out["top1_agreement"] >= 0.95, out
PY

# The vulkan backend runs int8 models (its runs are checked in tests/integration/vulkan_models.sh):
# mt-opnames --check vulkan accepts every node without a device, and mt-prepack --backend vulkan
# stores the int8 weights int8 in its layouts (mt-prepack(1)), no device needed either.
if mt-run --list-devices | grep -qx vulkan; then
  mt-opnames --check vulkan "$work/int8.mt" > "$work/vulkan-check.txt" 2>&1 ||
    fail "mt-opnames --check vulkan refuses the int8 model: $(cat "$work/vulkan-check.txt")"
  mt-prepack -q --backend vulkan "$work/int8.mt" -o "$work/int8-vulkan.mt" ||
    fail "mt-prepack --backend vulkan refused the int8 model"
  "$python" - "$work/int8-vulkan.mt" "$MT_SOURCE_DIR/tests/integration" <<'PY' || fail "mt-prepack --backend vulkan: int8 layouts"
import sys
sys.path.insert(0, sys.argv[2])
import mtfile
_, g, _ = mtfile.read(sys.argv[1])
tensors = {t["name"]: t for t in g["tensors"]}
layouts = sorted(tensors[n["inputs"][1]].get("layout", "") for n in g["nodes"] if n["op"] in ("conv2d", "linear"))
assert layouts == ["vk_conv2d_i8", "vk_conv2d_i8", "vk_linear_i8"], layouts
PY
fi

# Methods, keep-fp32, quantize-io, auto-fallback.
mt-quantize -q "$work/fp32.mt" --calibration "$models/digits-calib.npy" --method entropy -o "$work/entropy.mt"
mt-quantize -q "$work/fp32.mt" --calibration "$models/digits-calib.npy" --method percentile --percentile 99.9 \
  --max-samples 2 -o "$work/percentile.mt"
mt-run -d reference -q "$work/entropy.mt" -i "$work/batch00.npy" > /dev/null
linear=$("$python" -c "
import json, struct, sys
d = open(sys.argv[1], 'rb').read(); o, s = struct.unpack_from('<QQ', d, 24)
print([n['name'] for n in json.loads(d[o:o + s])['nodes'] if n['op'] == 'linear'][0])" "$work/fp32.mt")
mt-quantize -q "$work/fp32.mt" --calibration "$models/digits-calib.npy" --keep-fp32 "$linear" --report "$work/kept.json" \
  -o "$work/kept.mt"
"$python" -c "
import json, sys
r = json.load(open(sys.argv[1]))
assert [n['op'] for n in r['float_nodes']] == ['linear'] and r['float_nodes'][0]['reason'] == '--keep-fp32', r" "$work/kept.json"
mt-quantize -q "$work/fp32.mt" --calibration "$models/digits-calib.npy" --quantize-io -o "$work/io.mt"
mt-quantize -q "$work/fp32.mt" --calibration "$models/digits-calib.npy" --auto-fallback 200 --report "$work/all.json" \
  -o "$work/fallback.mt"
"$python" -c "
import json, sys
r = json.load(open(sys.argv[1]))
assert r['int8_nodes'] == 0 and len(r['auto_fallback']) >= 1, r" "$work/all.json"

# Empirical bias correction: every conv/linear bias is rewritten, and int8 accuracy stays within
# 0.5 points of fp32 (on the cpu backend).
mt-quantize -q "$work/fp32.mt" --calibration "$models/digits-calib.npy" --bias-correction -o "$work/corrected.mt"
for b in $(seq -w 0 17); do
  mt-run -d cpu -q "$work/corrected.mt" -i "$work/batch$b.npy" -o "$work/corrected-logits$b.npy" > /dev/null
done
"$python" - "$models/digits-test-labels.npy" "$work" <<'PY'
import json, struct, sys
import numpy as np
labels, work = np.load(sys.argv[1]), sys.argv[2]
acc = {}
for kind in ("fp32", "corrected"):
    logits = np.concatenate([np.load(f"{work}/{kind}-logits{b:02d}.npy") for b in range(18)])
    acc[kind] = 100.0 * float((logits.argmax(axis=1) == labels).mean())
print(f"top-1 accuracy with --bias-correction: {acc['corrected']:.2f}% (fp32 {acc['fp32']:.2f}%)")
assert acc["corrected"] >= acc["fp32"] - 0.5, acc

def biases(path):
    """The int32 bias values of every conv2d / linear, in node order (mt-format(5): tensor offsets
    are relative to the data section, whose offset is the header's u64 at byte 40)."""
    data = open(path, "rb").read()
    offset, size = struct.unpack_from("<QQ", data, 24)
    data_start = struct.unpack_from("<Q", data, 40)[0]
    g = json.loads(data[offset:offset + size])
    tensors = {t["name"]: t for t in g["tensors"]}
    found = []
    for n in g["nodes"]:
        if n["op"] in ("conv2d", "linear"):
            t = tensors[n["inputs"][2]]
            assert t["dtype"] == "int32", t
            start = data_start + t["offset"]
            found.append(np.frombuffer(data[start:start + t["size"]], dtype="<i4"))
    return found
plain, corrected = biases(f"{work}/int8.mt"), biases(f"{work}/corrected.mt")
assert len(plain) == len(corrected) == 3, (plain, corrected)
changed = sum(int((p != c).sum()) for p, c in zip(plain, corrected))
print(f"--bias-correction changed {changed} of {sum(len(p) for p in plain)} bias values")
assert changed > 0
PY

# --keep-fp32 op:TYPE keeps every node of the type.
mt-quantize -q "$work/fp32.mt" --calibration "$models/digits-calib.npy" --keep-fp32 op:linear,op:max_pool2d \
  --report "$work/kept-ops.json" -o "$work/kept-ops.mt"
"$python" -c "
import json, sys
r = json.load(open(sys.argv[1]))
assert sorted(n['op'] for n in r['float_nodes']) == ['linear', 'max_pool2d'], r['float_nodes']
assert r['int8_nodes'] == 2, r" "$work/kept-ops.json"

# --sensitivity: every int8 layer ranked by the output SQNR it costs alone, worst first; each alone
# costs no more than all of them together (the report's output SQNR); the printed --keep-fp32 option
# lists the layers below the threshold and works as printed. No model is written.
mt-quantize -q "$work/fp32.mt" --calibration "$models/digits-calib.npy" --sensitivity 1000 --json > "$work/sens.json"
mt-quantize -q "$work/fp32.mt" --calibration "$models/digits-calib.npy" --sensitivity 1000 > "$work/sens.txt"
mt-quantize -q "$work/fp32.mt" --calibration "$models/digits-calib.npy" --sensitivity 0 > "$work/sens0.txt"
"$python" - "$work" <<'PY'
import json, sys
work = sys.argv[1]
s = json.load(open(f"{work}/sens.json"))
full = json.load(open(f"{work}/report.json"))["outputs"][0]["sqnr_db"]
sqnr = [l["output_sqnr_db"] for l in s["layers"]]
print("sensitivity:", [(l["node"], round(l["output_sqnr_db"], 1)) for l in s["layers"]], f"all int8: {full:.1f} dB")
assert sorted(l["op"] for l in s["layers"]) == ["conv2d", "conv2d", "linear", "max_pool2d"], s
assert sqnr == sorted(sqnr) and all(q >= full - 0.5 for q in sqnr), (sqnr, full)
assert s["keep_fp32"] == [l["node"] for l in s["layers"]], s
text = open(f"{work}/sens.txt").read().splitlines()
assert text[-1] == "--keep-fp32 " + ",".join(s["keep_fp32"]), text
assert open(f"{work}/sens0.txt").read().splitlines()[-1].startswith("# no layer"), open(f"{work}/sens0.txt").read()
PY
# shellcheck disable=SC2046
mt-quantize -q "$work/fp32.mt" --calibration "$models/digits-calib.npy" $(tail -1 "$work/sens.txt") \
  --report "$work/sens-kept.json" -o "$work/sens-kept.mt"
"$python" -c "
import json, sys
assert json.load(open(sys.argv[1]))['int8_nodes'] == 0" "$work/sens-kept.json"
expect 2 "--sensitivity writes no model" mt-quantize "$work/fp32.mt" --calibration "$models/digits-calib.npy" --sensitivity 30 -o "$work/x.mt"
expect 2 "--json applies to --sensitivity only" mt-quantize "$work/fp32.mt" --calibration "$models/digits-calib.npy" --json -o "$work/x.mt"
expect 2 "--keep-fp32: 'softmaxx' is not an mt op type" mt-quantize "$work/fp32.mt" --calibration "$models/digits-calib.npy" --keep-fp32 op:softmaxx -o "$work/x.mt"

# mt-quantize never writes a model the cpu backend refuses. A conv whose fused clamp is empty
# (act_min = act_max: valid, the reference runs it; cpu refuses it): in int8 cpu's check refuses it
# (on the VNNI and XNNPACK paths alike), so it stays float32, where cpu's check refuses it too.
# Quantized as is or kept float32 by hand: status 4 naming the node, no file.
"$python" "$MT_SOURCE_DIR/tests/integration/mtfile.py" edit "$work/fp32.mt" "$work/empty-clamp.mt" \
  "g['nodes'][1]['attrs']['act_max'] = g['nodes'][1]['attrs']['act_min'] = 0.0"
conv2=$("$python" -c "
import json, struct, sys
d = open(sys.argv[1], 'rb').read(); o, s = struct.unpack_from('<QQ', d, 24)
print(json.loads(d[o:o + s])['nodes'][1]['name'])" "$work/fp32.mt")
mt-run -d reference -q "$work/empty-clamp.mt" -i "$work/batch00.npy" > /dev/null
mkdir "$work/refused"
refused="backend 'cpu' cannot run node '$conv2' (conv2d) of the quantized model: act_min 0 >= act_max 0 not supported"
expect 4 "$refused" \
  mt-quantize -q "$work/empty-clamp.mt" --calibration "$models/digits-calib.npy" -o "$work/refused/int8.mt"
expect_no_output "$work/refused"
status=0
mt-quantize "$work/empty-clamp.mt" --calibration "$models/digits-calib.npy" -o "$work/refused/int8.mt" 2> "$work/err" ||
  status=$?
[[ $status -eq 4 ]] || fail "empty clamp: exit status $status, expected 4"
grep -qF "backend 'cpu' refuses int8 node '$conv2' (conv2d): act_min 0 >= act_max 0 leaves an empty int8 output range; it stays float32" \
  "$work/err" || fail "empty clamp: no warning that the int8 node stays float32: $(cat "$work/err")"
expect 4 "$refused" \
  mt-quantize "$work/empty-clamp.mt" --calibration "$models/digits-calib.npy" --keep-fp32 "$conv2" -o "$work/refused/int8.mt"
expect_no_output "$work/refused"

expect 2 "--calibration is required" mt-quantize "$work/fp32.mt" -o "$work/x.mt"
expect 2 "--keep-fp32: the model has no node 'no_such_node'" mt-quantize "$work/fp32.mt" --calibration "$models/digits-calib.npy" --keep-fp32 no_such_node -o "$work/x.mt"
expect 2 "--percentile applies to --method percentile only" mt-quantize "$work/fp32.mt" --calibration "$models/digits-calib.npy" --percentile 99 -o "$work/x.mt"
expect 3 "digits-test-labels.npy: dtype int64 but input 'image' is float32" mt-quantize "$work/fp32.mt" --calibration "$models/digits-test-labels.npy" -o "$work/x.mt"
echo "quantize_digits: ok"
