#!/usr/bin/env bash
# mt-prepack --backend vulkan (lavapipe unless MT_VULKAN_ICD names another driver). For each model, the
# fused model (mt-convert | mt-fuse) run on vulkan is what its prepacked forms must reproduce:
#   fp32: every element within 1e-6 relative (+ 1e-7 x range for elements near zero); the same
#         dispatches read the same weights, so in practice the outputs are identical;
#   fp16: the fp16 tolerances of vulkan_models.sh (5e-2 x range, cosine >= 0.999) against the fused
#         model in fp16, which also runs with --precision fp16 left out (the model's precision wins).
# Every conv2d/conv_transpose2d (one group, or depthwise) and linear weight and bias is stored in a
# vulkan layout; grouped weights (op_conv_transpose_*) stay row-major. Then the refusals: a contradicting --precision (status 2), other backends (4), files
# whose vulkan tensors were tampered with (3), a device without fp16 (MT_VULKAN_DISABLE_FP16=1, 4).
set -euo pipefail
: "${MT_SOURCE_DIR:?MT_SOURCE_DIR must name the source tree}"
: "${MT_TEST_MODELS:?MT_TEST_MODELS must name the directory scripts/export_models.py --set ci wrote}"
source "$MT_SOURCE_DIR/tests/integration/vulkan_common.bash"
require_vulkan_device
python=/usr/bin/python3
mtfile="$MT_SOURCE_DIR/tests/integration/mtfile.py"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export XDG_CACHE_HOME="$work/cache"

models="mobilenet_v3_small squeezenet1_1 lraspp_mobilenet_v3_large op_conv_bn_relu_opset13 op_conv_transpose_opset13
        op_conv_transpose_opset9"
count=0
for name in $models; do
  dir="$MT_TEST_MODELS/$name"
  [[ -f "$dir/model.onnx" && -f "$dir/input.npy" ]] || fail "$name: missing from $MT_TEST_MODELS (run the export fixture)"
  fused="$work/$name.mt"
  mt-convert -q "$dir/model.onnx" | mt-fuse -q --no-verify -o "$fused" || fail "$name: mt-convert | mt-fuse failed"
  for precision in fp32 fp16; do
    packed="$work/$name.$precision.mt"
    mt-prepack -q --backend vulkan --precision "$precision" "$fused" -o "$packed" || fail "$name: mt-prepack $precision failed"
    mt-run -q --device vulkan --precision "$precision" "$fused" --input "$dir/input.npy" \
      --output "$work/$name.$precision.npy" > /dev/null || fail "$name: the fused model failed on vulkan $precision"
    if [[ $precision == fp32 ]]; then
      tolerance=(--atol-range 1e-7 --rtol 1e-6 --min-cosine 0.999999)
    else
      tolerance=(--atol-range 5e-2 --rtol 0 --min-cosine 0.999)
    fi
    # No --precision: the model's own.
    mt-run -q --device vulkan "$packed" --input "$dir/input.npy" --compare "$work/$name.$precision.npy" \
      "${tolerance[@]}" > "$work/out" || fail "$name: prepacked $precision differs: $(grep compare "$work/out" || true)"
    printf '%-40s %s %9d -> %9d bytes: %s\n' "$name" "$precision" "$(stat -c %s "$fused")" "$(stat -c %s "$packed")" \
      "$(grep -o 'max abs error.*' "$work/out")"
    "$python" - "$packed" "$precision" "$MT_SOURCE_DIR/tests/integration" <<'PY' || fail "$name: layouts of the $precision model"
import sys
sys.path.insert(0, sys.argv[3])
import mtfile
_, g, _ = mtfile.read(sys.argv[1])
suffix = ".f16" if sys.argv[2] == "fp16" else ""
tensors = {t["name"]: t for t in g["tensors"]}
packed = set()
for n in g["nodes"]:
    if n["op"] not in ("conv2d", "conv_transpose2d", "linear"):
        continue
    for i, name in enumerate(n["inputs"][1:3], 1):
        group = n["attrs"].get("group", 1)
        depthwise = n["op"] == "conv2d" and group > 1 and tensors[name]["shape"][:2] == [group, 1] if i == 1 else False
        if i == 1 and group != 1 and not depthwise:  # packed per group at planning (mt-prepack(1))
            if tensors[name].get("layout"):
                sys.exit(f"{n['name']}: grouped weights {name} have layout {tensors[name]['layout']!r}")
            continue
        layout = tensors[name].get("layout", "") if name else None
        if name and not (layout.startswith("vk_") and layout.endswith(suffix) and (suffix or "." not in layout)):
            sys.exit(f"{n['name']} input {i} ({name}) has layout {layout!r}")
        if name:
            packed.add(name)
assert g["metadata"]["backend"] == {"name": "vulkan", "precision": sys.argv[2]}, g["metadata"]["backend"]
assert g["metadata"]["prepack"]["weights_reordered"] == len(packed) > 0, (g["metadata"]["prepack"], len(packed))
PY
    count=$((count + 1))
  done
done
echo "prepacked vulkan models match the unprepacked ones: $count (model, precision) pairs"

# An int8 model (mt-quantize of mobilenet_v3_small): its int8 conv2d, depthwise and linear weights are
# stored int8 in the vk_conv2d_i8, vk_depthwise_i8 and vk_linear_i8 layouts whatever the precision
# (one byte a weight plus channel padding: a quarter of the fp32 layouts' bytes), int32 biases stay
# row-major; the outputs are exactly those of the unprepacked int8 model in the same precision.
int8_input="$MT_TEST_MODELS/mobilenet_v3_small/input.npy"
mt-quantize -q "$work/mobilenet_v3_small.mt" --calibration "$int8_input" -o "$work/int8.mt" || fail "mt-quantize failed"
for precision in fp32 fp16; do
  mt-prepack -q --backend vulkan --precision "$precision" "$work/int8.mt" -o "$work/int8.$precision.mt" ||
    fail "int8: mt-prepack $precision failed"
  mt-run -q --device vulkan --precision "$precision" "$work/int8.mt" --input "$int8_input" \
    --output "$work/int8.$precision.npy" >/dev/null || fail "int8: the unprepacked model failed on vulkan $precision"
  mt-run -q --device vulkan "$work/int8.$precision.mt" --input "$int8_input" --compare "$work/int8.$precision.npy" \
    --atol 0 --rtol 0 >"$work/out" || fail "int8: prepacked $precision differs: $(grep compare "$work/out" || true)"
  "$python" - "$work/int8.$precision.mt" "$work/mobilenet_v3_small.fp32.mt" "$MT_SOURCE_DIR/tests/integration" <<'PY' ||
import sys
sys.path.insert(0, sys.argv[3])
import mtfile
_, g, _ = mtfile.read(sys.argv[1])
_, fp32, _ = mtfile.read(sys.argv[2])
tensors = {t["name"]: t for t in g["tensors"]}
int8_bytes = numel = 0
for n in g["nodes"]:
    if n["op"] not in ("conv2d", "linear"):
        continue
    w = tensors[n["inputs"][1]]
    assert w["dtype"] == "int8", (n["name"], w["dtype"])
    depthwise = n["op"] == "conv2d" and n["attrs"].get("group", 1) > 1
    expected = "vk_linear_i8" if n["op"] == "linear" else "vk_depthwise_i8" if depthwise else "vk_conv2d_i8"
    assert w.get("layout") == expected, (n["name"], w.get("layout"), expected)
    if len(n["inputs"]) > 2 and n["inputs"][2]:
        b = tensors[n["inputs"][2]]
        assert b["dtype"] == "int32" and not b.get("layout"), (n["name"], b)
    int8_bytes += w["size"]
    count = 1
    for d in w["shape"]:
        count *= d
    numel += count
fp32_bytes = sum(t["size"] for t in fp32["tensors"] if t.get("layout", "") in ("vk_conv2d", "vk_depthwise", "vk_linear"))
print(f"int8 weights in vulkan layouts: {int8_bytes} bytes for {numel} weights; fp32 layouts: {fp32_bytes} bytes "
      f"({fp32_bytes / int8_bytes:.2f}x)")
assert int8_bytes < 1.1 * numel and fp32_bytes > 3.6 * int8_bytes, (int8_bytes, numel, fp32_bytes)
PY
    fail "int8: layouts of the $precision model"
done
tamper_int8() {  # OUT PYTHON: edit the first tensor with a vk_conv2d_i8 layout (t)
  "$python" "$mtfile" edit "$work/int8.fp32.mt" "$work/$1" "t = next(t for t in g['tensors'] if t.get('layout') == 'vk_conv2d_i8')
$2"
}
tamper_int8 i8rank.mt 't["layout"] = "vk_linear_i8"'
expect 3 "layout 'vk_linear_i8' needs an int8 tensor of rank 2" mt-run --device vulkan "$work/i8rank.mt" --input "$int8_input"
# No fp16 form of an int8 layout: an unknown tag (row-major, here of the same size), which vulkan refuses.
tamper_int8 i8f16.mt 't["layout"] = "vk_conv2d_i8.f16"'
expect 4 "has layout 'vk_conv2d_i8.f16', which vulkan does not read here" \
  mt-run --device vulkan "$work/i8f16.mt" --input "$int8_input"
tamper_int8 i8dtype.mt 't["layout"] = "vk_conv2d"'
expect 3 "layout 'vk_conv2d' needs a float32 tensor of rank 4, not int8" mt-run --device vulkan "$work/i8dtype.mt" --input "$int8_input"
echo "int8 model prepacked for vulkan: weights int8 in both precisions, outputs equal"

m="$work/mobilenet_v3_small"
input="$MT_TEST_MODELS/mobilenet_v3_small/input.npy"
mt-opnames --check vulkan "$m.fp16.mt" > /dev/null || fail "mt-opnames --check vulkan refuses the prepacked model"
mt-opnames --info "$m.fp16.mt" | grep -q '^backend: vulkan (prepacked: activations nc4hw4, inputs nchw, fp16, ' ||
  fail "mt-opnames --info: $(mt-opnames --info "$m.fp16.mt" | grep backend)"

# mt-bench plans in the model's precision and says so.
mt-bench -q --device vulkan "$m.fp16.mt" --iterations 2 --warmup 0 --format json > "$work/bench.json"
"$python" -c 'import json, sys; p = json.load(open(sys.argv[1]))["setup"]["precision"]; sys.exit(0 if p == "fp16" else p)' \
  "$work/bench.json" || fail "mt-bench on the fp16 model did not plan fp16"

# Refusals: a contradicting precision, other backends, other tools, options that do not apply.
expect 2 "precision fp32 asked for, but the model was prepacked for vulkan fp16" \
  mt-run --device vulkan --precision fp32 "$m.fp16.mt" --input "$input"
expect 2 "precision fp16 asked for, but the model was prepacked for vulkan fp32" \
  mt-bench --device vulkan --precision fp16 "$m.fp32.mt" --iterations 1 --warmup 0
expect 4 "was prepacked for backend 'vulkan' and cannot run on 'cpu'" mt-run --device cpu "$m.fp32.mt" --input "$input"
expect 4 "was prepacked for backend 'vulkan' and cannot run on 'reference'" \
  mt-run --device reference "$m.fp16.mt" --input "$input"
expect 4 "the model is prepacked for backend 'vulkan' already" mt-prepack --backend vulkan "$m.fp32.mt" -o "$work/x.mt"
expect 4 "the model is prepacked for backend 'vulkan'" mt-fuse --no-verify "$m.fp32.mt" -o "$work/x.mt"
expect 2 "--precision applies to --backend vulkan only" mt-prepack --backend cpu --precision fp16 "$m.mt" -o "$work/x.mt"
expect 2 "--input-layout nhwc: the vulkan backend takes its inputs as they are (nchw)" \
  mt-prepack --backend vulkan --input-layout nhwc "$m.mt" -o "$work/x.mt"
[[ ! -e "$work/x.mt" ]] || fail "a refused command wrote its output"

# Tampered files: the stored size follows from layout, shape and precision, and is checked on load.
tamper() {  # OUT PYTHON: edit the first tensor with a vk_conv2d layout (t), the graph (g)
  "$python" "$mtfile" edit "$m.fp32.mt" "$work/$1" "t = next(t for t in g['tensors'] if t.get('layout') == 'vk_conv2d')
$2"
}
tamper f16.mt 't["layout"] = "vk_conv2d.f16"'
expect 3 "in layout 'vk_conv2d.f16' needs" mt-run --device vulkan "$work/f16.mt" --input "$input"
tamper rank.mt 't["layout"] = "vk_linear"'
expect 3 "layout 'vk_linear' needs a float32 tensor of rank 2" mt-run --device vulkan "$work/rank.mt" --input "$input"
tamper size.mt 't["size"] += 64'
expect 3 "bytes stored, but float32" mt-run --device vulkan "$work/size.mt" --input "$input"
tamper precision.mt 'g["metadata"]["backend"]["precision"] = "fp16"'
expect 3 "is stored in fp32 (layout 'vk_" \
  mt-run --device vulkan "$work/precision.mt" --input "$input"
tamper noprecision.mt 'del g["metadata"]["backend"]["precision"]'
expect 3 "has no precision fp32 or fp16" mt-run --device vulkan "$work/noprecision.mt" --input "$input"
# A weight in a layout its reader does not read (a conv2d weight declared transposed: same size).
tamper reader.mt 't["layout"] = "vk_conv_transpose2d"'
expect 4 "has layout 'vk_conv_transpose2d', which vulkan does not read here" \
  mt-run --device vulkan "$work/reader.mt" --input "$input"

# A device without fp16 (the testing knob, mt-run(1) ENVIRONMENT): --precision fp16 is refused in one line.
MT_VULKAN_DISABLE_FP16=1 mt-run --list-devices | grep -q 'precision fp16 not available' ||
  fail "MT_VULKAN_DISABLE_FP16=1: --list-devices still offers fp16"
export MT_VULKAN_DISABLE_FP16=1
expect 4 "cannot run --precision fp16: it lacks" mt-run --device vulkan --precision fp16 "$m.mt" --input "$input"
expect 4 "cannot run --precision fp16: it lacks" mt-run --device vulkan "$m.fp16.mt" --input "$input"
expect 4 "cannot run --precision fp16: it lacks" mt-bench --device vulkan --precision fp16 "$m.mt" --iterations 1
unset MT_VULKAN_DISABLE_FP16
echo "vulkan_prepack: all checks passed"
