#!/usr/bin/env bash
# mt-convert on bad input: every case must exit with its documented status, print one line on stderr
# naming the file and what is wrong, and leave no -o file behind (not even a temporary one). Also the
# usage errors of --input-shape, the list of unsupported ops, and the success paths the errors border
# on (a static model, --input-shape, external data). Models come from scripts/make_onnx_test_models.py.
set -euo pipefail

: "${MT_SOURCE_DIR:?MT_SOURCE_DIR must name the source tree}"
source "$MT_SOURCE_DIR/tests/integration/common.bash"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
models="$work/models"
/usr/bin/python3 "$MT_SOURCE_DIR/scripts/make_onnx_test_models.py" "$models"
out="$work/written/model.mt"
mkdir -p "$work/written"

# expect_convert STATUS TEXT ARGS...: mt-convert ARGS -o $out is refused (expect) and writes nothing.
expect_convert() {
  local status=$1 text=$2
  shift 2
  expect "$status" "$text" mt-convert "$@" -o "$out"
  expect_no_output "$work/written"
}

# Invalid input (3): the path and the reason.
expect_convert 3 "$models/missing.onnx: no such file" "$models/missing.onnx"
expect_convert 3 "$models: is a directory" "$models"
expect_convert 3 "$models/empty.onnx: empty file, expected an ONNX model" "$models/empty.onnx"
expect_convert 3 "$models/not_onnx.onnx: not an ONNX model" "$models/not_onnx.onnx"
expect_convert 3 "$models/truncated.onnx: not an ONNX model, or truncated" "$models/truncated.onnx"
expect_convert 3 "$models/checker_fails.onnx: fails the ONNX checker:" "$models/checker_fails.onnx"
expect_convert 3 "input 'nowhere'" "$models/checker_fails.onnx"
expect_convert 3 "external data location '../escaping.bin' is outside the model's directory" "$models/escaping.onnx"
expect_convert 3 "external data range 8+16 is beyond the end of external.bin (16 bytes)" "$models/past_end.onnx"

# An existing -o target survives a failed run untouched.
echo "keep me" > "$work/existing.mt"
status=0
mt-convert "$models/truncated.onnx" -o "$work/existing.mt" 2> /dev/null || status=$?
[[ $status -eq 3 && "$(cat "$work/existing.mt")" == "keep me" ]] || fail "a failed run changed an existing -o file"

# Usage (2): dynamic inputs are listed with their symbolic shapes and the flag to use.
expect_convert 2 "inputs with dynamic dimensions: x: batch x 3 x 8 x 8; give static shapes with --input-shape NAME:D0,D1,... (e.g. --input-shape x:1,3,8,8)" \
  "$models/dynamic.onnx"
expect_convert 2 "image: batch x 3 x h x w; mask: batch x 1 x h x w" "$models/two_inputs.onnx"
expect_convert 2 "inputs with dynamic dimensions: mask: batch x 1 x h x w; give" "$models/two_inputs.onnx" --input-shape image:1,3,4,4
expect_convert 2 "--input-shape names 'y', which is not an input of the model; its inputs are: image, mask" \
  "$models/two_inputs.onnx" --input-shape y:1,3,4,4
expect_convert 2 "gives rank 2, but the model declares 'x' as batch x 3 x 8 x 8" "$models/dynamic.onnx" --input-shape x:1,3
expect_convert 2 "--input-shape 'x:1,three': dimension 'three' is not a positive integer" "$models/dynamic.onnx" --input-shape x:1,three
expect_convert 2 "--input-shape is given twice for input 'x'" "$models/dynamic.onnx" --input-shape x:1,3,8,8 --input-shape x:2,3,8,8

# Unsupported (4): every op type, with counts and node names, in one line.
expect_convert 4 "unsupported ONNX ops: Multinomial (1 node: sample_a), RandomUniformLike (2 nodes: random_a, random_b)" "$models/unsupported.onnx"
expect_convert 4 "$models/pad_opset1.onnx: opset 1 is older than 9, and ONNX's version converter cannot upgrade it:" \
  "$models/pad_opset1.onnx"
expect_convert 4 "for Pad" "$models/pad_opset1.onnx"

# Operands mt needs at conversion that are graph inputs: the refusal names those inputs and the flag,
# --list-value-inputs lists them, --input-value pins them (checked against the declared inputs).
echo "== run-time operands and --input-value"
values="$work/values"
mkdir -p "$values"
/usr/bin/python3 -c "
import numpy as np, sys
d = sys.argv[1]
np.save(d + '/shape.npy', np.array([3, 4], np.int64))
np.save(d + '/start.npy', np.array([1], np.int64))
np.save(d + '/shape_f32.npy', np.array([3, 4], np.float32))
np.save(d + '/shape_3.npy', np.array([3, 4, 1], np.int64))
np.save(d + '/x.npy', np.arange(12, dtype=np.float32).reshape(2, 6))
np.save(d + '/want.npy', np.arange(12, dtype=np.float32).reshape(3, 4)[:, 1:])
" "$values"
expect_convert 4 "node 'reshape_a' (Reshape): input 'shape' (shape) must be known at conversion, but it is computed at run time from graph input 'shape'" \
  "$models/runtime_shape.onnx"
expect_convert 4 "mt plans static shapes: give the value of shape at conversion with --input-value shape=FILE.npy" \
  "$models/runtime_shape.onnx" --input-value start="$values/start.npy"
expect_convert 4 "node 'slice_a' (Slice): input 'start' (starts) must be known at conversion, but it is computed at run time from graph input 'start'; mt plans static shapes: give the value of start at conversion with --input-value start=FILE.npy" \
  "$models/runtime_shape.onnx" --input-value shape="$values/shape.npy"
[[ "$(mt-convert --list-value-inputs "$models/runtime_shape.onnx")" == $'shape' ]] ||
  fail "--list-value-inputs: $(mt-convert --list-value-inputs "$models/runtime_shape.onnx")"
[[ "$(mt-convert --list-value-inputs "$models/runtime_shape.onnx" --input-value shape="$values/shape.npy")" == start ]] ||
  fail "--list-value-inputs with shape pinned does not list start alone"
[[ -z "$(mt-convert --list-value-inputs "$models/relu.onnx")" ]] || fail "--list-value-inputs lists inputs of relu.onnx"
expect_convert 3 "--input-value shape: $values/shape_f32.npy holds float32 [2], but the model declares 'shape' as int64 [2]" \
  "$models/runtime_shape.onnx" --input-value shape="$values/shape_f32.npy" --input-value start="$values/start.npy"
expect_convert 3 "holds int64 [3], but the model declares 'shape' as int64 [2]" \
  "$models/runtime_shape.onnx" --input-value shape="$values/shape_3.npy" --input-value start="$values/start.npy"
expect_convert 2 "--input-value names 'nope', which is not an input of the model; its inputs are: x, shape, start" \
  "$models/runtime_shape.onnx" --input-value nope="$values/shape.npy"
expect_convert 2 "--input-value is given twice for input 'shape'" \
  "$models/runtime_shape.onnx" --input-value shape="$values/shape.npy" --input-value shape="$values/shape.npy"
expect_convert 2 "--input-value 'shape': expected NAME=FILE.npy" "$models/runtime_shape.onnx" --input-value shape
expect_convert 3 "$values/missing.npy: no such file" "$models/runtime_shape.onnx" --input-value shape="$values/missing.npy"
expect_convert 2 "is given both --input-shape and --input-value" \
  "$models/runtime_shape.onnx" --input-value shape="$values/shape.npy" --input-shape shape:2
expect 2 "--list-value-inputs writes no model: drop -o" mt-convert --list-value-inputs "$models/runtime_shape.onnx" -o "$out"
expect_no_output "$work/written"
mt-convert "$models/runtime_shape.onnx" --input-value shape="$values/shape.npy" --input-value start="$values/start.npy" \
  -o "$out" || fail "runtime_shape.onnx with both inputs pinned did not convert"
mt-opnames "$out" | grep -q reshape || fail "the pinned model has no reshape"
for device in reference cpu; do
  mt-run -q --device "$device" "$out" -i x="$values/x.npy" --compare y="$values/want.npy" --atol 0 --rtol 0 > /dev/null ||
    fail "the pinned model's output on $device differs from numpy's reshape and slice"
done
expect 2 "the model has no input 'shape'" mt-run "$out" -i x="$values/x.npy" -i shape="$values/shape.npy"
rm -f "$out"

# The success paths next to those errors.
echo "== conversions that succeed"
mt-convert "$models/relu.onnx" -o "$out" || fail "relu.onnx did not convert"
[[ -s "$out" ]] || fail "relu.onnx: no output"
rm -f "$out"
mt-convert -v "$models/relu_opset7.onnx" -o "$out" 2> "$work/log" || fail "relu_opset7.onnx did not convert"
grep -qF "relu_opset7.onnx: upgraded from opset 7 to opset 9 with ONNX's version converter" "$work/log" ||
  fail "mt-convert -v does not report the opset upgrade: $(cat "$work/log")"
rm -f "$out"
mt-convert "$models/dynamic.onnx" --input-shape x:2,3,8,8 -o "$out" || fail "dynamic.onnx with --input-shape failed"
rm -f "$out"
mt-convert "$models/two_inputs.onnx" --input-shape image:1,3,4,4 --input-shape mask:1,1,4,4 -o "$out" ||
  fail "two_inputs.onnx with two --input-shape failed"
rm -f "$out"
mt-convert "$models/external.onnx" -o "$out" || fail "external.onnx did not convert"
rm -f "$out"
(cd "$work" && mt-convert models/external.onnx -o written/model.mt) || fail "external.onnx from another directory failed"
rm -f "$out"
mt-convert < "$models/relu.onnx" > "$out" || fail "reading the model from standard input failed"
[[ -s "$out" ]] || fail "stdin to stdout: no output"
rm -f "$out"
expect_convert 4 "external data ('external.bin') needs the model as a file path" - < "$models/external.onnx"
mt-convert --list-ops > "$work/ops" || fail "--list-ops failed"
for op in Conv Gemm Resize Shape; do grep -qx "$op" "$work/ops" || fail "--list-ops does not list $op"; done
# mt-convert(1)'s list of imported op types is --list-ops's.
sed -n '/op-list-begin/,/op-list-end/p' "$MT_SOURCE_DIR/man/mt-convert.1" | grep -v '^\.' | tr ',' '\n' |
  tr -d ' .' | grep -v '^$' | sort > "$work/man-ops"
sort "$work/ops" | diff -u "$work/man-ops" - >&2 ||
  fail "man/mt-convert.1's op list differs from mt-convert --list-ops (- the man page, + --list-ops)"

# A terminal on stdout is refused before anything is read (script(1) gives the command a pty).
if command -v script > /dev/null; then
  echo "== mt-convert to a terminal"
  status=0
  script -qec "mt-convert '$models/relu.onnx'" /dev/null > "$work/tty" 2>&1 || status=$?
  [[ $status -eq 2 ]] || fail "writing to a terminal: exit status $status, expected 2"
  grep -qF "refusing to write a binary model to a terminal" "$work/tty" || fail "terminal refusal message missing"
fi

echo "convert_errors: all cases passed"
