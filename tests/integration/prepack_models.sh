#!/usr/bin/env bash
# mt-prepack --backend cpu on every test model of `export_models.py --list --set ${MT_MODEL_SET:-ci}` in
# $MT_TEST_MODELS: `mt-convert | mt-fuse | mt-prepack --backend cpu` must compute what the unfused model
# computes on cpu (mt-run --compare: max abs error <= 1e-4 x range, cosine >= 0.99999) with 1 and 2
# threads, and so must the model prepacked with --input-layout nhwc fed the channels-last input; its
# weights are stored in the cpu layouts of this CPU's kernels (or OHWI for XNNPACK's) and nowhere else.
# Then the --cpu targets on mobilenet_v2 (a model for AVX-512 refused as on a generic CPU, through
# MT_CPU_TARGET; a generic one running there), and the command line on a small model: refusals by
# other backends and tools (status 4, one line naming the backend the model was packed for),
# mt-opnames --info, pipes, usage errors.
set -euo pipefail

: "${MT_SOURCE_DIR:?MT_SOURCE_DIR must name the source tree}"
source "$MT_SOURCE_DIR/tests/integration/common.bash"
: "${MT_TEST_MODELS:?MT_TEST_MODELS must name the directory scripts/export_models.py wrote}"
python=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if ! mt-run --list-devices | grep -qx cpu; then
  echo "prepack_models: this build has no cpu backend; nothing to test"
  exit 0
fi

models=$("$python" "$MT_SOURCE_DIR/scripts/export_models.py" --list --set "${MT_MODEL_SET:-ci}")
failures=()
count=0
for name in $models; do
  dir="$MT_TEST_MODELS/$name"
  for file in model.onnx input.npy info.json; do
    [[ -f "$dir/$file" ]] || { failures+=("$name: $dir/$file missing (run scripts/export_models.py)"); continue 2; }
  done
  input_name=$("$python" -c 'import json, sys; print(json.load(open(sys.argv[1]))["input"]["name"])' "$dir/info.json")
  # The unfused model's cpu output is what every prepacked variant must reproduce.
  if ! { mt-convert -q "$dir/model.onnx" -o "$work/$name.mt" &&
         mt-run -q --device cpu "$work/$name.mt" --input "$dir/input.npy" --output "$work/$name.ref.npy" > /dev/null; } \
      2> "$work/err"; then
    failures+=("$name: unfused model on cpu: $(tail -1 "$work/err")")
    continue
  fi
  rank=$("$python" -c 'import numpy, sys; print(numpy.load(sys.argv[1]).ndim)' "$dir/input.npy")
  layouts=(nchw)
  if [[ $rank -eq 4 ]]; then
    layouts+=(nhwc)
    "$python" -c 'import numpy, sys; numpy.save(sys.argv[2], numpy.ascontiguousarray(numpy.load(sys.argv[1]).transpose(0, 2, 3, 1)))' \
      "$dir/input.npy" "$work/$name.nhwc.npy"
  fi
  for layout in "${layouts[@]}"; do
    packed="$work/$name.$layout.mt"
    if ! mt-convert -q "$dir/model.onnx" | mt-fuse -q --verify-input "$input_name=$dir/input.npy" |
        mt-prepack -q --backend cpu --input-layout "$layout" > "$packed" 2> "$work/err"; then
      failures+=("$name: mt-convert | mt-fuse | mt-prepack --input-layout $layout: $(tail -1 "$work/err")")
      continue
    fi
    input="$dir/input.npy"
    [[ $layout == nchw ]] || input="$work/$name.nhwc.npy"
    for threads in 1 2; do
      status=0
      mt-run --device cpu --threads "$threads" "$packed" --input "$input" \
        --compare "$work/$name.ref.npy" --atol-range 1e-4 --rtol 0 --min-cosine 0.99999 \
        > "$work/out" 2> "$work/err" || status=$?
      result=$(grep '^compare ' "$work/out" | sed 's/^compare [^ ]* with [^:]*: //' || true)
      printf '%-44s %s %s thread(s): %s\n' "$name" "$layout" "$threads" "${result:-exit $status: $(tail -1 "$work/err")}"
      [[ $status -eq 0 ]] || failures+=("$name prepacked ($layout), $threads thread(s): exit $status: ${result:-$(tail -1 "$work/err")}")
      count=$((count + 1))
    done
  done
  # Conv weights are stored in a cpu layout or for XNNPACK (ohwi), linear weights in a cpu layout or
  # row-major (no other op reads one in these models), nothing else in a layout.
  "$python" - "$work/$name.nchw.mt" "$MT_SOURCE_DIR/tests/integration" <<'PY' 2> "$work/err" ||
import sys
sys.path.insert(0, sys.argv[2])
import mtfile
_, g, _ = mtfile.read(sys.argv[1])
conv = {n["inputs"][1] for n in g["nodes"]
        if n["op"] == "conv2d" or (n["op"] == "conv_transpose2d" and n["attrs"].get("group", 1) == 1)}
linear = {n["inputs"][1] for n in g["nodes"] if n["op"] == "linear"}
for t in g["tensors"]:
    layout = t.get("layout")
    packed = layout is not None and layout.startswith("cpu_")
    ok = layout is None or (t["name"] in conv and "offset" in t and (layout == "ohwi" or packed)) or \
        (t["name"] in linear and packed)
    if not ok:
        sys.exit(f"tensor {t['name']} has layout {layout}")
backend = g["metadata"].get("backend", {})
if backend.get("name") != "cpu" or backend.get("target") not in ("avx512", "avx2", "generic"):
    sys.exit(f"metadata backend {backend}")
PY
    failures+=("$name: $(tail -1 "$work/err")")
done
[[ $count -gt 0 || ${#failures[@]} -gt 0 ]] || fail "no models listed"

# --cpu: a model for AVX-512 (packed GEMM panels, Winograd's packed points) is refused as on a CPU
# without it (MT_CPU_TARGET=generic), before planning, in one line naming a weight and the fix; it runs
# where the CPU has AVX-512. A model for generic CPUs (Winograd's points, OHWI) runs as on one and here.
if [[ -f "$work/mobilenet_v2.mt" ]]; then
  mt-prepack -q --backend cpu --cpu avx512 "$work/mobilenet_v2.mt" -o "$work/mv2.avx512.mt"
  mt-prepack -q --backend cpu --cpu generic "$work/mobilenet_v2.mt" -o "$work/mv2.generic.mt"
  mt-opnames --info "$work/mv2.avx512.mt" | grep -q '^backend: cpu (prepacked: activations nhwc, inputs nchw, for avx512, ' ||
    fail "mt-opnames --info: $(mt-opnames --info "$work/mv2.avx512.mt" | grep backend)"
  input="$MT_TEST_MODELS/mobilenet_v2/input.npy"
  for tool in "mt-run --device cpu $work/mv2.avx512.mt --input $input" \
              "mt-bench --device cpu $work/mv2.avx512.mt --iterations 1 --warmup 0"; do
    # shellcheck disable=SC2086 # the words of $tool are its arguments
    expect 4 "but the stem conv needs AVX-512F, which the target generic (MT_CPU_TARGET) excludes (and 52 more weights)" \
      env MT_CPU_TARGET=generic $tool
  done
  if grep -qw avx512f /proc/cpuinfo; then  # its float kernels need AVX-512F only
    mt-run -q --device cpu "$work/mv2.avx512.mt" --input "$input" --compare "$work/mobilenet_v2.ref.npy" \
      --atol-range 1e-4 --rtol 0 --min-cosine 0.99999 > /dev/null || fail "the model for avx512 differs on this CPU"
  else
    expect 4 "needs AVX-512F, which this CPU lacks" mt-run --device cpu "$work/mv2.avx512.mt" --input "$input"
  fi
  for target in generic ""; do  # "": this CPU's
    env ${target:+MT_CPU_TARGET=$target} mt-run -q --device cpu "$work/mv2.generic.mt" --input "$input" \
      --compare "$work/mobilenet_v2.ref.npy" --atol-range 1e-4 --rtol 0 --min-cosine 0.99999 > /dev/null 2> "$work/err" ||
      failures+=("mobilenet_v2 for --cpu generic, MT_CPU_TARGET=${target:-unset}: $(tail -1 "$work/err")")
  done
  expect 2 "--cpu applies to --backend cpu only" mt-prepack --backend vulkan --cpu avx2 "$work/mobilenet_v2.mt" -o "$work/x.mt"
  expect 2 "--cpu: avx512f not in {avx512,avx2,generic}" mt-prepack --backend cpu --cpu avx512f "$work/mobilenet_v2.mt" -o "$work/x.mt"
  expect 2 "MT_CPU_TARGET must be generic, avx2 or avx512, got 'sse'" env MT_CPU_TARGET=sse mt-run "$work/mv2.generic.mt" --random-input
  expect 4 "the model is prepacked for backend 'cpu' already" mt-prepack --backend cpu --cpu avx512 "$work/mv2.avx512.mt" -o "$work/x.mt"
else
  failures+=("mobilenet_v2 missing: the --cpu checks did not run")
fi

# The command line, on a small model with BatchNorm and ReLU left in by the exporter.
model="$MT_TEST_MODELS/op_conv_bn_relu_opset13"
if [[ -f "$model/model.onnx" ]]; then
  mt-convert -q "$model/model.onnx" -o "$work/cbr.mt"
  mt-prepack --backend cpu "$work/cbr.mt" -o "$work/cbr.cpu.mt"

  # mt-prepack folds BatchNorm and fuses the relu itself (no mt-fuse in between), and records the backend.
  mt-opnames --counts "$work/cbr.cpu.mt" > "$work/out"
  [[ $(cat "$work/out") =~ ^conv2d\ +2$ ]] || fail "ops after mt-prepack: $(cat "$work/out")"
  mt-opnames --info "$work/cbr.cpu.mt" > "$work/out"
  grep -Eq '^backend: cpu \(prepacked: activations nhwc, inputs nchw, for (avx512|avx2|generic), 2 weights reordered\)$' "$work/out" ||
    fail "mt-opnames --info: $(cat "$work/out")"
  mt-opnames --info --format json "$work/cbr.cpu.mt" |
    "$python" -c 'import json, sys; m = json.load(sys.stdin)["metadata"]; sys.exit(0 if m["backend"]["name"] == "cpu" and m["prepack"]["weights_reordered"] == 2 else f"metadata: {m}")'
  mt-prepack --backend cpu --input-layout nhwc "$work/cbr.mt" -o "$work/cbr.nhwc.mt"
  mt-opnames --info "$work/cbr.nhwc.mt" | grep -q '^input:   input float32 1x8x10x12 (nhwc: callers pass 1x10x12x8)$' ||
    fail "mt-opnames --info on an nhwc input: $(mt-opnames --info "$work/cbr.nhwc.mt")"

  # Other backends and tools refuse the packed model, naming the backend and the fix.
  expect 4 "was prepacked for backend 'cpu' and cannot run on 'reference': use --device cpu, or run the model from before mt-prepack" \
    mt-run --device reference "$work/cbr.cpu.mt" --random-input
  [[ $(wc -l < "$work/err") -eq 1 ]] || fail "the wrong-backend error is not one line: $(cat "$work/err")"
  expect 4 "was prepacked for backend 'cpu' and cannot run on 'reference'" \
    mt-bench --device reference "$work/cbr.cpu.mt" --iterations 1 --warmup 0
  expect 4 "the model is prepacked for backend 'cpu' already: run mt-prepack on the model from before it" \
    mt-prepack --backend cpu "$work/cbr.cpu.mt" -o "$work/x.mt"
  expect 4 "the model is prepacked for backend 'cpu': run mt-fuse on the model from before mt-prepack" \
    mt-fuse --no-verify "$work/cbr.cpu.mt" -o "$work/x.mt"
  [[ ! -e "$work/x.mt" ]] || fail "a refused mt-prepack or mt-fuse wrote its output"

  # An NHWC-declared input takes N,H,W,C data; NCHW data is refused naming both shapes.
  expect 3 "holds float32 1x8x10x12, the model expects float32 1x10x12x8 (nhwc)" \
    mt-run --device cpu "$work/cbr.nhwc.mt" --input "$model/input.npy"
  mt-run --device cpu "$work/cbr.nhwc.mt" --random-input > /dev/null

  # An image fed to an NHWC-declared input is decoded for the logical NCHW shape and reordered: the same
  # result as the NCHW model's (a random 40x30 PNM image, resized to the model's 224x224).
  if [[ -f "$work/mobilenet_v2.nhwc.mt" && -f "$work/mobilenet_v2.nchw.mt" ]]; then
    "$python" -c 'import os, sys; open(sys.argv[1], "wb").write(b"P6 40 30 255\n" + os.urandom(40 * 30 * 3))' "$work/image.ppm"
    mt-run -q --device cpu "$work/mobilenet_v2.nchw.mt" --input "$work/image.ppm" --output "$work/image.npy" > /dev/null
    mt-run -q --device cpu "$work/mobilenet_v2.nhwc.mt" --input "$work/image.ppm" --compare "$work/image.npy" \
      --atol 1e-6 --rtol 0 > /dev/null || fail "an image into the NHWC input differs from the NCHW model's result"
  else
    failures+=("mobilenet_v2 missing: the image check did not run")
  fi

  # An int8 model (mt-quantize) keeps working: the int8 weights are stored in the VNNI layouts (OHWI
  # for XNNPACK's), and the prepacked model gives bit-identical results, with NCHW and with NHWC input.
  if command -v mt-quantize > /dev/null; then
    digits="$MT_SOURCE_DIR/models"
    mt-convert -q "$digits/digits.onnx" --input-shape image:20,1,8,8 | mt-fuse -q |
      mt-quantize -q --calibration "$digits/digits-calib.npy" -o "$work/int8.mt"
    mt-prepack --backend cpu "$work/int8.mt" -o "$work/int8.cpu.mt"
    mt-prepack --backend cpu --input-layout nhwc "$work/int8.mt" -o "$work/int8.nhwc.mt"
    "$python" -c 'import numpy, sys; x = numpy.load(sys.argv[1])[:20]; numpy.save(sys.argv[2], x); numpy.save(sys.argv[3], numpy.ascontiguousarray(x.transpose(0, 2, 3, 1)))' \
      "$digits/digits-test.npy" "$work/digits.npy" "$work/digits.nhwc.npy"
    # The conv weights, and the linear one where its kernel is the VNNI GEMM.
    mt-opnames --info "$work/int8.cpu.mt" | grep -Eq '^backend: cpu \(prepacked: .*, [23] weights reordered\)$' ||
      fail "int8 model: $(mt-opnames --info "$work/int8.cpu.mt" | grep backend)"
    mt-run -q --device cpu "$work/int8.mt" --input "$work/digits.npy" --output "$work/int8.npy" > /dev/null
    mt-run -q --device cpu "$work/int8.cpu.mt" --input "$work/digits.npy" --compare "$work/int8.npy" --atol 0 --rtol 0 \
      > /dev/null || fail "the prepacked int8 model differs from the int8 model"
    mt-run -q --device cpu "$work/int8.nhwc.mt" --input "$work/digits.nhwc.npy" --compare "$work/int8.npy" --atol 0 \
      --rtol 0 > /dev/null || fail "the prepacked int8 model with NHWC input differs from the int8 model"
  fi

  # Pipes end to end, stdin to stdout.
  mt-convert -q "$model/model.onnx" | mt-fuse -q | mt-prepack --backend cpu | mt-run --device cpu --input "$model/input.npy" \
    --compare "$model/expected.npy" --atol-range 1e-4 --rtol 0 > "$work/out"
  grep -q '^compare .*: ok$' "$work/out" || fail "pipe: $(cat "$work/out")"

  # Usage errors: no backend, a backend without a prepacked form, an unknown layout.
  expect 2 "--backend is required" mt-prepack "$work/cbr.mt" -o "$work/x.mt"
  # The backends with a prepacked form: cpu, and vulkan when it is built in (mt-prepack(1)).
  backends=cpu
  if mt-run --list-devices | grep -qx vulkan; then backends=cpu,vulkan; fi
  expect 2 "--backend: reference not in {$backends}" mt-prepack --backend reference "$work/cbr.mt" -o "$work/x.mt"
  expect 2 "--input-layout: nwhc not in {nchw,nhwc}" mt-prepack --backend cpu --input-layout nwhc "$work/cbr.mt" -o "$work/x.mt"
  [[ ! -e "$work/x.mt" ]] || fail "a failed mt-prepack wrote its output"
  if command -v script > /dev/null; then  # script(1) gives stdout a terminal, which is refused
    status=0
    script -qec "mt-prepack --backend cpu '$work/cbr.mt'" /dev/null > "$work/tty" 2>&1 || status=$?
    [[ $status -eq 2 ]] || fail "mt-prepack to a terminal: exit status $status, expected 2"
    grep -qF "refusing to write a binary model to a terminal" "$work/tty" || fail "terminal refusal: $(cat "$work/tty")"
  fi
  mt-prepack --help | grep -q -- "--backend {$backends} " || fail "mt-prepack --help does not list the backends: $(mt-prepack --help)"
else
  failures+=("op_conv_bn_relu_opset13 missing: the command-line checks did not run")
fi

if [[ ${#failures[@]} -gt 0 ]]; then
  printf 'FAIL: %s\n' "${failures[@]}" >&2
  echo "prepack_models: ${#failures[@]} failures, $count runs" >&2
  exit 1
fi
echo "prepack_models: all $count runs of prepacked models match the unfused models on cpu"
