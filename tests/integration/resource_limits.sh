#!/usr/bin/env bash
# Resource limits and signals (man/mt.7, GUARANTEES). A model too large for the memory available is
# refused before the allocation, with one line naming the size, status 1: a model file larger than
# the address space `ulimit -v` leaves, and a model whose planned arena (intermediate tensors) is; the
# same model runs under a limit it fits in. mt-bench and mt-run stopped by SIGINT or SIGTERM while
# they run die by that signal (status 130, 143) and leave no report and no output file.
set -euo pipefail

: "${MT_SOURCE_DIR:?MT_SOURCE_DIR must name the source tree}"
: "${MT_TEST_MODELS:?MT_TEST_MODELS must name the directory scripts/export_models.py --set ci wrote}"
source "$MT_SOURCE_DIR/tests/integration/common.bash"
work=$(mktemp -d)
writer=
cleanup() {
  [[ -z $writer ]] || kill "$writer" 2> /dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
out_dir="$work/written"
mkdir -p "$out_dir"

# The address space mt-run needs for itself (libraries, heap, a small model): the smallest power of two
# of MiB it runs under. The limits below are that plus what each case needs.
small="$work/small.mt"
mt-convert "$MT_TEST_MODELS/op_conv_bn_relu_opset13/model.onnx" -o "$small"
base_kib=$((32 * 1024))
until bash -c "ulimit -v $base_kib && exec mt-run '$small' --random-input" > /dev/null 2>&1; do
  base_kib=$((base_kib * 2))
  ((base_kib <= 8 * 1024 * 1024)) || fail "mt-run does not run on a small model even under an 8 GiB address-space limit"
done
echo "mt-run runs a small model in $((base_kib / 1024)) MiB of address space"

# ---- a model file larger than the address space left: refused before mapping it ------------------
# (Sparse: the size is all that is checked, so the test writes nothing to disk.)
truncate -s 2G "$work/sparse.mt"
expect 1 "not enough memory: mapping $work/sparse.mt needs 2147483648 bytes (2048.0 MiB)" \
  bash -c "ulimit -v $((base_kib + 128 * 1024)) && exec mt-run '$work/sparse.mt' --random-input -o '$out_dir/y.npy'"
expect_no_output "$out_dir"
grep -qF "available under the address-space limit (ulimit -v)" "$work/err" || fail "the limit is not named: $(cat "$work/err")"

# ---- a planned arena larger than the memory available --------------------------------------------
# x[1,16,32,32] resized 64x to [1,16,2048,2048] (256 MiB), then ReLU and a global average: an arena
# of at least 256 MiB from a model of a few hundred bytes.
/usr/bin/python3 - "$work/wide.onnx" << 'PY'
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
scales = numpy_helper.from_array(np.array([1, 1, 64, 64], np.float32), "scales")
nodes = [helper.make_node("Resize", ["x", "", "scales"], ["big"], mode="nearest"),
         helper.make_node("Relu", ["big"], ["r"]),
         helper.make_node("GlobalAveragePool", ["r"], ["y"])]
graph = helper.make_graph(nodes, "wide", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 32, 32])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 1, 1])], [scales])
onnx.save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1])
PY
mt-convert "$work/wide.onnx" -o "$work/wide.mt"
for device in cpu reference; do
  expect 1 "not enough memory: the planned arena (intermediate tensors) needs" \
    bash -c "ulimit -v $((base_kib + 128 * 1024)) && exec mt-run '$work/wide.mt' --device $device --random-input -o '$out_dir/y.npy'"
  expect_no_output "$out_dir"
  # With room for it, the same model runs.
  bash -c "ulimit -v $((base_kib + 1536 * 1024)) && exec mt-run '$work/wide.mt' --device $device --random-input -o '$out_dir/y.npy'" \
    > /dev/null || fail "wide.mt on $device under a limit it fits in"
  [[ -s "$out_dir/y.npy" ]] || fail "wide.mt on $device wrote no output"
  rm "$out_dir/y.npy"
done

# ---- SIGINT and SIGTERM ---------------------------------------------------------------------------
# mt-bench measuring for two minutes, stopped after 3 s (loaded and measuring by then; earlier, the
# promise is the same): no report on stdout.
mt-convert "$MT_TEST_MODELS/mobilenet_v2/model.onnx" -o "$work/mbv2.mt"
for signal in INT TERM; do
  want=$((128 + $(kill -l "$signal")))
  status=0
  timeout --preserve-status -s "$signal" 3 mt-bench "$work/mbv2.mt" --device cpu --min-time 120 --format json \
    > "$work/report.json" 2> "$work/err" || status=$?
  [[ $status -eq $want ]] || fail "mt-bench, SIG$signal: status $status, expected $want: $(cat "$work/err")"
  [[ ! -s "$work/report.json" ]] || fail "mt-bench, SIG$signal: wrote a report: $(head -c 200 "$work/report.json")"
  echo "ok   mt-bench, SIG$signal while measuring: status $status, no report"
done
# mt-run with its model planned, waiting for its input from a pipe that never delivers: nothing
# written to -o or --output-dir, not even a temporary file.
mkfifo "$work/input.npy"
for signal in INT TERM; do
  want=$((128 + $(kill -l "$signal")))
  sleep 60 > "$work/input.npy" &
  writer=$!
  status=0
  timeout --preserve-status -s "$signal" 2 mt-run "$work/mbv2.mt" --input "$work/input.npy" -o "$out_dir/y.npy" \
    --output-dir "$out_dir/all" > "$work/out" 2> "$work/err" || status=$?
  kill "$writer" 2> /dev/null || true
  wait "$writer" 2> /dev/null || true
  writer=
  [[ $status -eq $want ]] || fail "mt-run, SIG$signal: status $status, expected $want: $(cat "$work/err")"
  expect_no_output "$out_dir"
  echo "ok   mt-run, SIG$signal while waiting for its input: status $status, nothing written"
done
echo "resource_limits: all cases passed"
