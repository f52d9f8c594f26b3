#!/usr/bin/env bash
# mt-fuse on every test model of `export_models.py --list --set ${MT_MODEL_SET:-ci}` in $MT_TEST_MODELS:
# mt-convert, then mt-fuse with its own check on the model's real input (--verify-input: fused vs
# unfused within 1e-4 x range) and a JSON report; the fused model must still match the PyTorch output
# (mt-run --compare expected.npy, max abs error <= 1e-4 x range, cosine >= 0.99999) on the reference
# backend and, when built, on cpu; and the op counts must fall as far as optimize_for_mobile takes
# them (EXPECTED_OPS below: the only ops left; GONE_OPS: ops that must have been replaced). Then the
# command line: pipes, --passes/--disable, --list-passes, usage and input errors, and a check that
# fails (exit 5, nothing written) and is bisected to the pass application responsible.
set -euo pipefail

: "${MT_SOURCE_DIR:?MT_SOURCE_DIR must name the source tree}"
source "$MT_SOURCE_DIR/tests/integration/common.bash"
: "${MT_TEST_MODELS:?MT_TEST_MODELS must name the directory scripts/export_models.py wrote}"
python=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Runs a command that must exit with status $1; its stdout goes to $work/out, stderr to $work/err.
expect_status() {
  local want=$1
  shift
  local status=0
  "$@" > "$work/out" 2> "$work/err" || status=$?
  [[ $status -eq $want ]] || { cat "$work/err" >&2; fail "exit $status (want $want): $*"; }
}

# What PyTorch's optimize_for_mobile leaves of these networks (BatchNorm folded, ReLU/ReLU6 fused into
# the convolutions and adds, hardswish/hardsigmoid as single ops), in mt's op names.
declare -A EXPECTED_OPS=(
  [mobilenet_v2]="conv2d add global_avg_pool flatten reshape linear"
  [mobilenet_v3_small]="conv2d add hardswish hardsigmoid mul global_avg_pool flatten reshape linear"
  [mobilenet_v3_large]="conv2d add hardswish hardsigmoid mul global_avg_pool flatten reshape linear"
  [resnet18]="conv2d add max_pool2d global_avg_pool flatten reshape linear"
  [resnet50]="conv2d add max_pool2d global_avg_pool flatten reshape linear"
  [squeezenet1_1]="conv2d max_pool2d concat global_avg_pool flatten reshape"
  [shufflenet_v2_x1_0]="conv2d max_pool2d concat split slice reshape transpose global_avg_pool linear"
  [lraspp_mobilenet_v3_large]="conv2d add hardswish hardsigmoid mul global_avg_pool avg_pool2d resize sigmoid"
  [op_conv_bn_relu_opset9]="conv2d"
  [op_conv_bn_relu_opset13]="conv2d"
  [op_conv_transpose_opset9]="conv_transpose2d"
  [op_conv_transpose_opset13]="conv_transpose2d"
)
# Primitive spellings that must have been recognised.
declare -A GONE_OPS=(
  [op_gelu_opset13]="erf div"
  [op_gelu_tanh_opset17]="tanh"
  [op_layernorm_opset13]="reduce_mean pow sqrt sub div"
  [op_hardswish_opset13]="hardsigmoid"
  [vit_tiny]="erf reduce_mean pow sqrt"
)

# Checks the JSON report and the op counts of the fused model. $1 name, $2 report, $3 fused model.
check_fused() {
  mt-opnames --counts --format json "$3" > "$work/ops.json"
  "$python" - "$1" "$2" "$work/ops.json" "${EXPECTED_OPS[$1]-}" "${GONE_OPS[$1]-}" <<'PY'
import json, sys
name, report_path, ops_path, expected, gone = sys.argv[1:6]
report = json.load(open(report_path))
ops = json.load(open(ops_path))["ops"]
problems = []
if not (report["ok"] and report["converged"] and report["verification"]["ok"]):
    problems.append(f"report says ok={report['ok']} converged={report['converged']}")
if report["ops_after"] != ops:
    problems.append(f"report ops_after {report['ops_after']} differ from mt-opnames {ops}")
if report["nodes_after"] > report["nodes_before"]:
    problems.append(f"nodes grew: {report['nodes_before']} -> {report['nodes_after']}")
changed = sum(a["nodes_removed"] for a in report["applications"])
if report["nodes_before"] - report["nodes_after"] > changed:
    problems.append("the applications account for fewer removed nodes than disappeared")
if expected:
    extra = sorted(set(ops) - set(expected.split()))
    if extra:
        problems.append(f"ops optimize_for_mobile would not leave: {', '.join(f'{op} x{ops[op]}' for op in extra)}")
for op in gone.split():
    if op in ops:
        problems.append(f"{op} x{ops[op]} left (should have been recognised)")
if problems:
    sys.exit(f"{name}: " + "; ".join(problems))
print(f"{report['nodes_before']} -> {report['nodes_after']} nodes, {report['rounds']} rounds")
PY
}

models=$("$python" "$MT_SOURCE_DIR/scripts/export_models.py" --list --set "${MT_MODEL_SET:-ci}")
devices=$(mt-run --list-devices)
runs=(reference)
if grep -qx cpu <<< "$devices"; then runs+=(cpu); fi

failures=()
count=0
for name in $models; do
  dir="$MT_TEST_MODELS/$name"
  for file in model.onnx input.npy expected.npy info.json; do
    [[ -f "$dir/$file" ]] || { failures+=("$name: $dir/$file missing (run scripts/export_models.py)"); continue 2; }
  done
  input_name=$("$python" -c 'import json, sys; print(json.load(open(sys.argv[1]))["input"]["name"])' "$dir/info.json")
  if ! mt-convert "$dir/model.onnx" -o "$work/$name.mt" 2> "$work/err"; then
    failures+=("$name: mt-convert: $(tail -1 "$work/err")")
    continue
  fi
  if ! mt-fuse "$work/$name.mt" -o "$work/$name.fused.mt" --verify-input "$input_name=$dir/input.npy" \
      --report "$work/$name.json" 2> "$work/err"; then
    failures+=("$name: mt-fuse: $(tail -1 "$work/err")")
    continue
  fi
  if ! summary=$(check_fused "$name" "$work/$name.json" "$work/$name.fused.mt" 2> "$work/err"); then
    failures+=("$(tail -1 "$work/err")")
    summary="op check failed"
  fi
  for device in "${runs[@]}"; do
    status=0
    mt-run --device "$device" "$work/$name.fused.mt" --input "$dir/input.npy" \
      --compare "$dir/expected.npy" --atol-range 1e-4 --rtol 0 --min-cosine 0.99999 \
      > "$work/out" 2> "$work/err" || status=$?
    result=$(grep '^compare ' "$work/out" | sed 's/^compare [^ ]* with [^:]*: //' || true)
    printf '%-44s %s; %-9s %s\n' "$name" "$summary" "$device" "${result:-exit $status: $(tail -1 "$work/err")}"
    [[ $status -eq 0 ]] || failures+=("$name fused on $device: exit $status: ${result:-$(tail -1 "$work/err")}")
    count=$((count + 1))
  done
done
[[ $count -gt 0 || ${#failures[@]} -gt 0 ]] || fail "no models listed"

# The command line, on a small model with BatchNorm and ReLU left in by the exporter.
model="$MT_TEST_MODELS/op_conv_bn_relu_opset13"
if [[ -f "$model/model.onnx" ]]; then
  mt-convert "$model/model.onnx" -o "$work/cbr.mt"

  # A pipe end to end: stdin to stdout.
  mt-convert "$model/model.onnx" | mt-fuse | mt-opnames --counts > "$work/out"
  grep -q '^conv2d  *2$' "$work/out" || fail "mt-convert | mt-fuse | mt-opnames: $(cat "$work/out")"

  expect_status 0 mt-fuse --list-passes
  [[ $(wc -l < "$work/out") -eq 13 ]] || fail "--list-passes lists $(wc -l < "$work/out") passes, want 13"
  grep -q '^fold_batch_norm ' "$work/out" || fail "--list-passes does not list fold_batch_norm"

  # --disable leaves a pass out; --passes runs only those named; the text report names the rewrites.
  expect_status 0 mt-fuse "$work/cbr.mt" --disable fold_batch_norm -o "$work/nobn.mt" --report
  grep -q '^batch_norm' <(mt-opnames "$work/nobn.mt") || fail "--disable fold_batch_norm folded BatchNorm"
  grep -q 'fold_batch_norm' "$work/err" && fail "--disable fold_batch_norm still reports it"
  expect_status 0 mt-fuse "$work/cbr.mt" --passes fold_batch_norm -o "$work/onlybn.mt" --report
  ops=$(mt-opnames "$work/onlybn.mt" | tr '\n' ' ')
  [[ "$ops" == *relu* && "$ops" != *batch_norm* ]] || fail "--passes fold_batch_norm left: $ops"
  grep -q 'folded batch_norm into conv2d: .* -> ' "$work/err" || fail "text report lacks the folding: $(cat "$work/err")"

  # Usage and input errors, each with its exit status and a message naming what is wrong.
  expect_status 2 mt-fuse "$work/cbr.mt" --passes fold_batchnorm -o "$work/x.mt"
  grep -q "unknown pass 'fold_batchnorm' (passes: remove_identities, " "$work/err" || fail "unknown pass: $(cat "$work/err")"
  expect_status 2 mt-fuse "$work/cbr.mt" --disable nope -o "$work/x.mt"
  expect_status 2 mt-fuse --report "$work/cbr.mt" -o "$work/x.mt"
  grep -q 'must name a .json file' "$work/err" || fail "--report MODEL: $(cat "$work/err")"
  expect_status 2 mt-fuse "$work/cbr.mt" --no-verify --bisect -o "$work/x.mt"
  expect_status 2 mt-fuse "$work/cbr.mt" --verify-input "$model/input.npy" -o "$work/x.mt"
  expect_status 2 mt-fuse "$work/cbr.mt" --verify-input "nosuch=$model/input.npy" -o "$work/x.mt"
  "$python" -c 'import numpy, sys; numpy.save(sys.argv[1], numpy.zeros((2, 2), numpy.float32))' "$work/small.npy"
  expect_status 3 mt-fuse "$work/cbr.mt" --verify-input "input=$work/small.npy" -o "$work/x.mt"
  grep -q "the data is float32 2x2, the model's input is float32" "$work/err" || fail "wrong shape: $(cat "$work/err")"
  [[ ! -e "$work/x.mt" ]] || fail "a failed mt-fuse wrote its output"

  # With a zero tolerance the rounding of folded BatchNorm weights counts as a divergence: exit 5,
  # nothing written, the output and the first diverging tensor named; --bisect finds the application.
  expect_status 5 mt-fuse "$work/cbr.mt" --atol 0 -o "$work/x.mt" --report "$work/fail.json"
  grep -q "does not match the original: output 'output' max abs error" "$work/err" || fail "exit 5 message: $(cat "$work/err")"
  grep -q "first diverging tensor present in both models" "$work/err" || fail "no localisation: $(cat "$work/err")"
  [[ ! -e "$work/x.mt" ]] || fail "mt-fuse wrote a model that failed its check"
  "$python" -c 'import json, sys; r = json.load(open(sys.argv[1])); sys.exit(0 if not r["ok"] and "failure" in r else "report does not record the failure")' "$work/fail.json"
  expect_status 5 mt-fuse "$work/cbr.mt" --atol 0 --bisect -o "$work/x.mt"
  grep -q "pass fold_batch_norm (round 1, application [0-9]*) breaks the model" "$work/err" || fail "--bisect: $(cat "$work/err")"
else
  failures+=("op_conv_bn_relu_opset13 missing: the command-line checks did not run")
fi

if [[ ${#failures[@]} -gt 0 ]]; then
  printf 'FAIL: %s\n' "${failures[@]}" >&2
  echo "fuse_models: ${#failures[@]} failures, $count runs" >&2
  exit 1
fi
echo "fuse_models: all $count runs of fused models match PyTorch, op counts as optimize_for_mobile leaves them (devices: ${runs[*]})"
