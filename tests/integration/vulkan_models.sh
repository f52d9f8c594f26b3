#!/usr/bin/env bash
# The small ci test models ($MT_TEST_MODELS, scripts/export_models.py --set ci) on the vulkan backend
# (lavapipe unless MT_VULKAN_ICD names another driver), compared with the cpu backend on the model's
# own input:
#   fp32: every element within 1e-3 x the output's range, cosine >= 0.9999;
#   fp16: cosine >= 0.999, no NaN or infinity, every element within 5e-2 x the range.
# Then the pipeline cache: two starts of one model with an empty cache directory; the first writes
# the cache file, the second loads it (checked through the -v log). Both start times (plan + first
# inference) are printed, not compared: lavapipe's VkPipelineCache holds no compiled code (it compiles
# shaders at their first dispatch, into Mesa's own shader cache under $XDG_CACHE_HOME), so there the
# second start is faster thanks to Mesa's cache; GPU drivers keep their binaries in the VkPipelineCache.
# Last, the answers without a device: mt-opnames --check vulkan agrees with a device present, and
# mt-run --device vulkan fails with one line and status 4.
set -euo pipefail
: "${MT_SOURCE_DIR:?MT_SOURCE_DIR must name the source tree}"
: "${MT_TEST_MODELS:?MT_TEST_MODELS must name the directory scripts/export_models.py --set ci wrote}"
source "$MT_SOURCE_DIR/tests/integration/vulkan_common.bash"
require_vulkan_device

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A private pipeline cache, so that the first start below is a cold one.
export XDG_CACHE_HOME="$work/cache"

# Small models keep lavapipe (a CPU) within the test's time: classifiers with every op family the
# vision models use, the segmentation model (resize, sigmoid), the model families (a vision
# transformer: layer_norm, matmul, softmax, gelu; a YOLO-style head: split, pow, silu; the
# super-resolution network's DepthToSpace) and every op_* graph.
models="mobilenet_v3_small squeezenet1_1 shufflenet_v2_x1_0 mobilenet_v2 lraspp_mobilenet_v3_large vit_tiny yolo_head super_resolution"
# op_if_runtime_opset13 included: its If selects with greater and where, on bool tensors.
for dir in "$MT_TEST_MODELS"/op_*; do
  models+=" $(basename "$dir")"
done

count=0
for name in $models; do
  dir="$MT_TEST_MODELS/$name"
  [[ -f "$dir/model.onnx" && -f "$dir/input.npy" ]] || fail "$name: missing from $MT_TEST_MODELS (run the export fixture)"
  model="$work/$name.mt"
  mt-convert -q "$dir/model.onnx" -o "$model" || fail "$name: mt-convert failed"
  mt-run -q --device cpu "$model" --input "$dir/input.npy" --output "$work/$name.cpu.npy" >/dev/null ||
    fail "$name: the cpu backend failed"
  start=$(date +%s.%N)
  mt-run -q --device vulkan "$model" --input "$dir/input.npy" --compare "$work/$name.cpu.npy" \
    --atol-range 1e-3 --rtol 0 --min-cosine 0.9999 >"$work/fp32.txt" ||
    fail "$name: vulkan fp32 differs from cpu: $(grep compare "$work/fp32.txt" || true)"
  middle=$(date +%s.%N)
  mt-run -q --device vulkan --precision fp16 "$model" --input "$dir/input.npy" --compare "$work/$name.cpu.npy" \
    --atol-range 5e-2 --rtol 0 --min-cosine 0.999 >"$work/fp16.txt" ||
    fail "$name: vulkan fp16 differs from cpu: $(grep compare "$work/fp16.txt" || true)"
  end=$(date +%s.%N)
  printf '%-45s fp32 %5.1fs: %s\n%-45s fp16 %5.1fs: %s\n' "$name" "$(echo "$middle - $start" | bc)" \
    "$(grep -o 'max abs error.*' "$work/fp32.txt")" "" "$(echo "$end - $middle" | bc)" \
    "$(grep -o 'max abs error.*' "$work/fp16.txt")"
  count=$((count + 1))
done
echo "vulkan matches cpu on $count models (fp32 and fp16)"

# int8 models: mt-quantize's mobilenet_v3_small (calibrated on its own input: conv, depthwise and
# pointwise, add, mul, hardswish, hardsigmoid, global average pooling, linear) and pre-quantized
# ONNX through mt-convert's QDQ import (scripts/make_qdq_test_models.py: conv, depthwise, Gemm,
# MatMul, Add, max/avg/global pooling, Concat, QLinearConv, QLinearMatMul, zero points). The vulkan
# shaders compute the reference kernels' integers exactly (exact sums, the same fp32
# requantization), so fp32 and fp16 plans hold the same int8 values and differ only in the float
# outputs' rounding; the cpu backend's XNNPACK int8 operators (on CPUs without AVX512-VNNI) may land
# one step away per layer. Tolerance (mt-quantize(1), BACKENDS): every element within 1e-2 x the
# output's range (2.5 steps of an output quantized over its range), cosine >= 0.9999; the QDQ
# models within one step of their output scale. Each with int8 dot products (MT_VULKAN_INT8_DOT=1:
# lavapipe has them, though it does not call them accelerated) and without (MT_VULKAN_INT8_DOT=0: fp32
# sums of unpacked weights).
model="$work/mobilenet_v3_small.mt"
input="$MT_TEST_MODELS/mobilenet_v3_small/input.npy"
mt-fuse -q --no-verify "$model" -o "$work/fused.mt" && mt-quantize -q "$work/fused.mt" --calibration "$input" -o "$work/int8.mt" ||
  fail "mt-quantize of mobilenet_v3_small failed"
mt-run -q --device cpu "$work/int8.mt" --input "$input" --output "$work/int8.cpu.npy" >/dev/null || fail "int8: the cpu backend failed"
for precision in fp32 fp16; do
  for dot in 1 0; do
    MT_VULKAN_INT8_DOT=$dot mt-run -q --device vulkan --precision "$precision" "$work/int8.mt" --input "$input" \
      --compare "$work/int8.cpu.npy" --atol-range 1e-2 --rtol 0 --min-cosine 0.9999 >"$work/int8.txt" ||
      fail "int8 mobilenet_v3_small: vulkan $precision (MT_VULKAN_INT8_DOT=$dot) differs from cpu: $(grep compare "$work/int8.txt" || true)"
    echo "int8 mobilenet_v3_small $precision, int8 dot products $dot: $(grep -o 'max abs error.*' "$work/int8.txt")"
  done
done
/usr/bin/python3 - "$MT_SOURCE_DIR/scripts" "$work/qdq" <<'PY' || fail "QDQ models on vulkan"
import os, subprocess, sys
import numpy as np
import onnx
sys.path.insert(0, sys.argv[1])
import make_qdq_test_models
work = sys.argv[2]
os.makedirs(work)
failures, checked = [], 0
for name, scale, counts in make_qdq_test_models.write_all(work):
    if counts is None or counts[0] == 0:  # only the models with int8 ops
        continue
    base = os.path.join(work, name)
    subprocess.run(["mt-convert", "-q", base + ".onnx", "-o", base + ".mt"], check=True)
    inputs = sorted(f for f in os.listdir(work) if f.startswith(name + ".in") and f.endswith(".npy"))
    names = [i.name for i in onnx.load(base + ".onnx").graph.input]
    feeds = [a for n, f in zip(names, inputs) for a in ("--input", f"{n}={os.path.join(work, f)}")]
    outputs = {}
    for device, env in [("cpu", {}), ("vulkan", {"MT_VULKAN_INT8_DOT": "1"}), ("vulkan", {"MT_VULKAN_INT8_DOT": "0"})]:
        out = f"{base}.{device}{env.get('MT_VULKAN_INT8_DOT', '')}.npy"
        subprocess.run(["mt-run", "-q", "--device", device, base + ".mt", *feeds, "--output", out], check=True,
                       env={**os.environ, **env}, stdout=subprocess.DEVNULL)
        outputs[out] = np.load(out)
    cpu, *gpu = outputs.values()
    steps = max(float(np.max(np.abs(g - cpu))) / scale for g in gpu)
    print(f"QDQ {name}: vulkan within {steps:.3f} output steps of cpu")
    checked += 1
    if not steps <= 1.0 + 1e-4:
        failures.append(f"{name}: vulkan {steps:.3f} output steps from cpu")
assert checked >= 9, checked
sys.exit("; ".join(failures) if failures else 0)
PY

# Pipeline cache: a cold start in an empty cache directory, then a warm one.
export XDG_CACHE_HOME="$work/cold-cache"
model="$work/mobilenet_v2.mt"
input="$MT_TEST_MODELS/mobilenet_v2/input.npy"
start=$(date +%s.%N)
mt-run -v --device vulkan "$model" --input "$input" >/dev/null 2>"$work/first.log" || fail "first start failed"
middle=$(date +%s.%N)
cache_file=$(ls "$XDG_CACHE_HOME"/mt/vulkan-*.cache 2>/dev/null | head -1)
[[ -n "$cache_file" ]] || fail "the first start left no pipeline cache in $XDG_CACHE_HOME/mt: $(cat "$work/first.log")"
grep -q "pipeline cache .*: loaded" "$work/first.log" && fail "the first start claims to have loaded a cache"
mt-run -v --device vulkan "$model" --input "$input" >/dev/null 2>"$work/second.log" || fail "second start failed"
end=$(date +%s.%N)
grep -q "pipeline cache $cache_file: loaded [0-9]* bytes" "$work/second.log" ||
  fail "the second start did not load $cache_file: $(cat "$work/second.log")"
describe_start() {  # mt-run's own plan and run times from its -v log
  grep -o 'planned in [0-9.]* ms, ran in [0-9.]* ms' "$1"
}
printf 'mobilenet_v2 starts (mt-run wall time): first %.2fs (cold caches; %s), second %.2fs (%s; pipeline cache %s bytes)\n' \
  "$(echo "$middle - $start" | bc)" "$(describe_start "$work/first.log")" "$(echo "$end - $middle" | bc)" \
  "$(describe_start "$work/second.log")" "$(stat -c %s "$cache_file")"
# A damaged cache file is ignored, not fatal.
printf 'garbage' >"$cache_file"
mt-run -vv --device vulkan "$model" --input "$input" >/dev/null 2>"$work/damaged.log" ||
  fail "a damaged pipeline cache made the run fail: $(tail -3 "$work/damaged.log")"
grep -q "ignoring pipeline cache" "$work/damaged.log" || fail "a damaged pipeline cache was not reported at debug level"
# MT_CACHE_DIR moves the cache file; set but empty, there is none.
MT_CACHE_DIR="$work/own-cache" mt-run -q --device vulkan "$model" --input "$input" >/dev/null || fail "run with MT_CACHE_DIR failed"
[[ -f "$work/own-cache/$(basename "$cache_file")" ]] || fail "MT_CACHE_DIR=$work/own-cache: no $(basename "$cache_file") there"
MT_CACHE_DIR= mt-run -vv --device vulkan "$model" --input "$input" >/dev/null 2>"$work/nocache.log" ||
  fail "run with an empty MT_CACHE_DIR failed"
grep -q "no pipeline cache at (no cache directory)" "$work/nocache.log" || fail "MT_CACHE_DIR= still used a cache file"

# mt-bench on vulkan: a report valid against docs/mt-bench.schema.json that names the GPU, and a
# --profile from GPU timestamps that times every node of the model.
mt-bench -q --device vulkan --profile -w 0 -n 2 -f json "$model" >"$work/bench.json" || fail "mt-bench --device vulkan failed"
/usr/bin/python3 - "$MT_SOURCE_DIR/docs/mt-bench.schema.json" "$work/bench.json" <<'PY' ||
import json, sys
import jsonschema
schema, report = (json.load(open(path)) for path in sys.argv[1:3])
jsonschema.validate(report, schema)
setup, profile = report["setup"], report["profile"]
assert setup["device"] == "vulkan" and setup["gpu"] == 0 and setup["precision"] == "fp32", setup
assert setup["gpu_name"], "no GPU name"
assert profile["runs"] == 2 and profile["total_ms"] > 0, profile["total_ms"]
assert all(n["time_ms"] >= 0 for n in profile["nodes"])
assert sum(n["time_ms"] > 0 for n in profile["nodes"]) >= len(profile["nodes"]) // 2, "most nodes timed at 0"
print(f"mt-bench --device vulkan --profile: {len(profile['nodes'])} nodes, {profile['total_ms']:.1f} ms in nodes "
      f"(GPU timestamps), median run {report['timing']['latency_ms']['median']:.1f} ms on {setup['gpu_name']}")
PY
  fail "mt-bench --device vulkan report: $(head -c 300 "$work/bench.json")"

# A model with ops vulkan does not run (two casts) is refused before anything runs, every such node
# listed, by mt-run and by mt-opnames --check vulkan with and without a device.
/usr/bin/python3 - "$work/cast.onnx" <<'PY'
import sys
from onnx import TensorProto, helper, save
nodes = [helper.make_node("Cast", ["x"], ["a"], to=TensorProto.INT32, name="to_int"),
         helper.make_node("Cast", ["a"], ["b"], to=TensorProto.FLOAT, name="to_float"),
         helper.make_node("Relu", ["b"], ["y"], name="relu")]
graph = helper.make_graph(nodes, "casts", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 3, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 3, 3])])
save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1])
PY
mt-convert -q "$work/cast.onnx" -o "$work/cast.mt" || fail "mt-convert of the cast model failed"
status=0
mt-run --device vulkan --random-input "$work/cast.mt" >/dev/null 2>"$work/refused.log" || status=$?
[[ $status -eq 4 ]] || fail "mt-run --device vulkan on a model with casts exited $status, expected 4"
grep -q "cannot run 2 nodes: to_int (cast: op not implemented), to_float (cast: op not implemented)" "$work/refused.log" ||
  fail "the refusal does not list both casts: $(cat "$work/refused.log")"
for icd in "$VK_ICD_FILENAMES" /nonexistent/icd.json; do
  status=0
  VK_ICD_FILENAMES=$icd mt-opnames -q --check vulkan "$work/cast.mt" >"$work/cast-check.txt" 2>/dev/null || status=$?
  [[ $status -eq 4 ]] || fail "mt-opnames --check vulkan on the cast model exited $status (VK_ICD_FILENAMES=$icd), expected 4"
  [[ "$(cut -f1 "$work/cast-check.txt" | tr '\n' ' ')" == "to_int to_float " ]] ||
    fail "mt-opnames --check vulkan (VK_ICD_FILENAMES=$icd) listed: $(cat "$work/cast-check.txt")"
done
echo "refused before running: $(cat "$work/refused.log")"

# Without a device: the same --check answer, and a one-line refusal with status 4.
mt-opnames --check vulkan "$work/mobilenet_v2.mt" >"$work/check.txt" || fail "mt-opnames --check vulkan rejects mobilenet_v2"
VK_ICD_FILENAMES=/nonexistent/icd.json mt-opnames --check vulkan "$work/mobilenet_v2.mt" >"$work/check-nodevice.txt" ||
  fail "mt-opnames --check vulkan needs a device"
cmp -s "$work/check.txt" "$work/check-nodevice.txt" || fail "mt-opnames --check vulkan answers differently without a device"
status=0
VK_ICD_FILENAMES=/nonexistent/icd.json mt-run --device vulkan "$model" --input "$input" >/dev/null 2>"$work/nodevice.log" ||
  status=$?
[[ $status -eq 4 ]] || fail "mt-run --device vulkan without a device exited $status, expected 4"
[[ $(wc -l <"$work/nodevice.log") -eq 1 ]] || fail "expected one line without a device, got: $(cat "$work/nodevice.log")"
grep -q "vulkan" "$work/nodevice.log" || fail "the refusal does not name vulkan: $(cat "$work/nodevice.log")"
echo "without a device: $(cat "$work/nodevice.log")"
