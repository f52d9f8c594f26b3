#!/usr/bin/env bash
# Hostile inputs through the real tools: every case must exit with its documented status (man/mt.7:
# 1 failure, 2 usage, 3 invalid input, 4 unsupported), say what is wrong in one line on stderr, and
# leave no output file (not even a temporary one) behind. Corrupt .mt files are crafted by
# tests/integration/mtfile.py, which re-seals edited sections with valid checksums so that the checks
# behind the checksum are reached. Also: closed stdin/stdout, EPIPE, a full disk, a file size limit,
# SIGINT while converting, a huge declared shape under `ulimit -v`, and an ONNX with 10^6 nodes.
set -euo pipefail

: "${MT_SOURCE_DIR:?MT_SOURCE_DIR must name the source tree}"
source "$MT_SOURCE_DIR/tests/integration/common.bash"
work=$(mktemp -d)
cleanup() {
  if mountpoint -q "$work/full" 2> /dev/null; then umount "$work/full"; fi
  rm -rf "$work"
}
trap cleanup EXIT
mtfile() { /usr/bin/python3 "$MT_SOURCE_DIR/tests/integration/mtfile.py" "$@"; }
out_dir="$work/written"
mkdir -p "$out_dir"
# Sanitizer builds (scripts/test-sanitizers.sh) reserve terabytes of address space: no ulimit -v.
sanitized=0
if grep -qa __asan_init "$(command -v mt-run)"; then sanitized=1; fi  # GCC links libasan, clang links it in

# expect_refused STATUS TEXT COMMAND...: the command is refused (expect), writing nothing on stdout or
# in $out_dir.
expect_refused() {
  expect "$@"
  expect_no_output "$out_dir"
}

# expect_model STATUS TEXT FILE: the same for a crafted model through every tool that reads one.
expect_model() {
  expect_refused "$1" "$2" mt-opnames "$3"
  expect_refused "$1" "$2" mt-fuse "$3" -o "$out_dir/fused.mt"
  expect_refused "$1" "$2" mt-run "$3" --random-input -o "$out_dir/y.npy"
}

# A small valid model: y = relu(conv(x, w, b)), x 1x3x8x8, w 4x3x3x3.
/usr/bin/python3 - "$work/base.onnx" << 'EOF'
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
rng = np.random.default_rng(1)
w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w")
b = numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "b")
nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["y"], name="relu")]
graph = helper.make_graph(nodes, "base", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])], [w, b])
onnx.save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1])
EOF
base="$work/base.mt"
mt-convert "$work/base.onnx" -o "$base"
mt-opnames "$base" > /dev/null
cp "$base" "$work/base.orig"

# ---- the file itself ----------------------------------------------------------------------------
: > "$work/empty.mt"
expect_model 3 "$work/empty.mt: empty file" "$work/empty.mt"
expect_model 3 "$work: is a directory, expected a file" "$work"
expect_model 3 "$work/missing.mt: no such file" "$work/missing.mt"
expect_refused 3 "not an mt model" mt-opnames "$work/base.onnx"

# Truncated at every section boundary (and one byte short of the end).
for at in $(mtfile boundaries "$base"); do
  head -c "$at" "$base" > "$work/cut.mt"
  if ((at < 8)); then
    expect_model 3 "not an mt model" "$work/cut.mt"
  else
    expect_model 3 "truncated" "$work/cut.mt"
  fi
done
cp "$base" "$work/long.mt" && printf 'x' >> "$work/long.mt"
expect_model 3 "trailing data" "$work/long.mt"

# Flipped bytes: caught by the checksum of the part they are in.
graph_at=200
data_at=$(($(stat -c %s "$base") - 100))
mtfile flip "$base" "$work/flip.mt" 30 && expect_model 3 "header checksum mismatch" "$work/flip.mt"
mtfile flip "$base" "$work/flip.mt" "$graph_at" && expect_model 3 "graph section checksum mismatch" "$work/flip.mt"
mtfile flip "$base" "$work/flip.mt" "$data_at" && expect_model 3 "data section checksum mismatch" "$work/flip.mt"
# mt-run and mt-bench verify the data section while they plan (mt-format(5)): refused all the same.
expect 3 "data section checksum mismatch" mt-bench "$work/flip.mt" --iterations 1
mtfile flip "$base" "$work/flip.mt" 9 && expect_model 3 "written by mt-" "$work/flip.mt"
# The bytes no checksum covers must be zero: header bytes 96 to 127, the padding before the data section.
mtfile flip "$base" "$work/flip.mt" 100 && expect_model 3 "reserved header bytes 96 to 127 are not zero" "$work/flip.mt"
graph_end=$(/usr/bin/python3 -c 'import struct, sys; h = open(sys.argv[1], "rb").read(128); print(sum(struct.unpack_from("<QQ", h, 24)))' "$base")
data_offset=$(/usr/bin/python3 -c 'import struct, sys; print(struct.unpack_from("<Q", open(sys.argv[1], "rb").read(128), 40)[0])' "$base")
if ((graph_end < data_offset)); then
  mtfile flip "$base" "$work/flip.mt" "$graph_end" &&
    expect_model 3 "the padding between the graph and data sections is not zero" "$work/flip.mt"
fi

# A format-3 file (sealed with the multiply-rotate checksum of formats 1 to 3) still reads; format 4's
# checksums under a format-3 header do not.
mtfile header "$base" "$work/v3-header-only.mt" format_version=3
expect_model 3 "graph section checksum mismatch" "$work/v3-header-only.mt"
mtfile edit "$work/v3-header-only.mt" "$work/v3.mt" 'pass'
mt-run "$work/v3.mt" --random-input > /dev/null || fail "a format-3 file does not run"

# Header offsets and sizes pointing outside the file (header re-sealed, so the checksum passes).
size=$(stat -c %s "$base")
mtfile header "$base" "$work/h.mt" graph_size=0xffffffffffffff00 && expect_model 3 "extends past the end" "$work/h.mt"
mtfile header "$base" "$work/h.mt" data_offset=0x4000000000000000 && expect_model 3 "does not end at the end" "$work/h.mt"
mtfile header "$base" "$work/h.mt" data_offset=65 && expect_model 3 "not 64-byte aligned" "$work/h.mt"
mtfile header "$base" "$work/h.mt" data_offset=64 && expect_model 3 "overlaps the graph section" "$work/h.mt"
mtfile header "$base" "$work/h.mt" file_size=0xffffffffffffffff && expect_model 3 "truncated" "$work/h.mt"
mtfile header "$base" "$work/h.mt" file_size=$((size - 64)) && expect_model 3 "trailing data" "$work/h.mt"
mtfile header "$base" "$work/h.mt" header_size=4096 && expect_model 3 "header size 4096" "$work/h.mt"
mtfile header "$base" "$work/h.mt" flags=1 && expect_model 3 "unknown header flags" "$work/h.mt"

# The graph section, re-sealed: each edit below is run with g (the JSON) and data bound.
edit() {
  mtfile edit "$base" "$work/e.mt" "$1"
  expect_model "$2" "$3" "$work/e.mt"
}
const='c = next(t for t in g["tensors"] if "offset" in t); '
edit "${const}c[\"offset\"] = len(data) + 64" 3 "lies outside the data section"
edit "${const}c[\"offset\"] = 2**63 - 64" 3 "lies outside the data section"
edit "${const}c[\"offset\"] = -64" 3 "not 64-byte aligned"
edit "${const}c[\"size\"] = 2**62" 3 "bytes stored, but"
# A vulkan layout sets the stored size (channels padded to 4, fp16 halves it): checked like any other.
edit "${const}c[\"layout\"] = \"vk_channels.f16\"; c[\"shape\"] = [3]" 3 "in layout 'vk_channels.f16' needs 8"
edit "${const}c[\"layout\"] = \"vk_linear\"; c[\"shape\"] = [2, 2, 2]" 3 "layout 'vk_linear' needs a float32 tensor of rank 2"
edit "${const}c[\"layout\"] = \"vk_conv2d\"; c[\"shape\"] = [2**19, 2**19, 1, 1]" 3 "bytes stored, but"
# So does a cpu layout (the packed forms of the cpu kernels, mt-prepack --backend cpu), with its dtype,
# rank and kernel; one whose size is right, on a node whose kernel does not read it, is refused when
# the model is planned (status 4), not read as something else.
w='w = next(t for t in g["tensors"] if t["name"] == "w"); '
edit "${const}c[\"layout\"] = \"cpu_gemm\"; c[\"shape\"] = [3]" 3 "layout 'cpu_gemm' needs a float32 tensor of rank 2 or 4"
edit "${w}w[\"layout\"] = \"cpu_winograd4_gemm\"" 3 "float32 4x3x3x3 in layout 'cpu_winograd4_gemm' needs 18432"
edit "${w}w[\"layout\"] = \"cpu_vnni_depthwise\"" 3 "layout 'cpu_vnni_depthwise' needs an int8 tensor of rank 4"
edit "${w}w[\"layout\"] = \"cpu_winograd2\"; w[\"shape\"] = [4, 3, 5, 5]" 3 "layout 'cpu_winograd2' needs a 3x3 kernel"
edit "${w}w[\"layout\"] = \"cpu_gemm\"; w[\"shape\"] = [2**40, 1, 1, 1]" 3 "bytes stored, but"
mtfile edit "$base" "$work/e.mt" "${w}w['layout'] = 'cpu_gemm'; w['offset'] = len(data); w['size'] = 32 * 28 * 4; data.extend(bytes(32 * 28 * 4))"
mt-opnames "$work/e.mt" > /dev/null || fail "the reader refused a cpu layout of the right size"
expect_refused 4 "tensor 'w' has layout 'cpu_gemm', which cpu does not read here" mt-run "$work/e.mt" --random-input -o "$out_dir/y.npy"
edit "${const}c[\"offset\"] = 18446744073709551552" 3 "integer out of range"
edit "${const}c[\"shape\"] = [-4, 3, 3, 3]" 3 "negative dimension -4"
edit "${const}c[\"shape\"] = [2**31] * 4" 3 "is too large"
edit "${const}c[\"shape\"] = [1] * 9" 3 "rank 9 exceeds"
edit "${const}c[\"shape\"] = \"4x3\"" 3 "'shape' has the wrong type"
edit "${const}c[\"dtype\"] = \"float128\"" 3 "unknown dtype 'float128'"
edit "${const}del c[\"size\"]" 3 "'offset' and 'size' must appear together"
edit 'g["tensors"].append(dict(g["tensors"][0]))' 3 "is defined twice"
edit 'g["nodes"][0]["op"] = "frobnicate"' 4 "uses op 'frobnicate', which this mt"
edit 'g["nodes"][0]["attrs"]["strides"] = "1,1"' 3 "attribute 'strides' must be"
edit 'g["nodes"][0]["attrs"]["strides"] = [1.5, 1]' 3 "attribute 'strides' must be"
edit 'g["nodes"][0]["attrs"]["colour"] = 1' 3 "unknown attribute 'colour'"
edit 'g["nodes"][0]["inputs"][0] = "nowhere"' 3 "uses tensor 'nowhere', which is not defined"
edit 'g["nodes"][0]["inputs"][0] = g["nodes"][-1]["outputs"][0]' 3 "before it is produced"
edit 'g["nodes"].reverse()' 3 "before it is produced"
edit 'g["nodes"][1]["outputs"] = g["nodes"][0]["outputs"]' 3 "already defined"
edit 'g["outputs"] = ["nowhere"]' 3 "graph output 'nowhere' is not produced"
edit 'g["nodes"] = "none"' 3 "'nodes' has the wrong type"
edit 'del g["tensors"]' 3 "missing 'tensors'"
edit 'g["metadata"] = [1]' 3 "'metadata' must be an object"
edit 'g["metadata"]["deep"] = eval("[" * 40 + "]" * 40)' 3 "nests deeper than 32"
# A declared output shape that shape inference disagrees with, and a zero dimension on an input.
edit 'next(t for t in g["tensors"] if t["name"] == g["outputs"][0])["shape"][3] = 9' 3 "is declared float32"
edit 'next(t for t in g["tensors"] if t["name"] == g["inputs"][0])["shape"][0] = 0' 3 "is declared float32"

# ---- huge declared shapes: refused before anything is allocated ------------------------------
# x and y of 2^38 floats (1 TiB each) are within the per-tensor limit, so the reader accepts the
# model without allocating; mt-run must refuse to plan it, under a 2 GiB address-space limit, naming the size.
mtfile edit "$base" "$work/huge.mt" '
g["nodes"] = [n for n in g["nodes"] if n["op"] == "relu"]
g["tensors"] = [t for t in g["tensors"] if "offset" not in t]
for t in g["tensors"]:
    t["shape"] = [1, 4, 2**18, 2**18]
g["inputs"] = [g["nodes"][0]["inputs"][0]]
for t in g["tensors"]:
    if t["name"] not in g["inputs"] + g["nodes"][0]["outputs"]:
        g["tensors"].remove(t)'
if ((sanitized)); then
  mt-opnames --info "$work/huge.mt" > /dev/null || fail "mt-opnames --info on a huge shape"
  echo "(sanitizer build: mt-run on the huge shape skipped, it needs ulimit -v)"
else
  (ulimit -v 2097152 && mt-opnames --info "$work/huge.mt" > /dev/null) || fail "mt-opnames --info on a huge shape"
  expect_refused 1 "not enough memory: " bash -c "ulimit -v 2097152 && exec mt-run '$work/huge.mt' --random-input -o '$out_dir/y.npy'"
fi

# ---- NaN and Inf weights: data, not structure, so the reader accepts them; mt-run counts the
# non-finite values it produces in its summary.
# (The relu is dropped: max(0, NaN) may be either, so the conv's own outputs are checked. Only the
# reference backend: the cpu backend's XNNPACK conv clamps to +-FLT_MAX, turning NaN and Inf finite.)
mtfile edit "$base" "$work/nan.mt" "${const}struct.pack_into('<ff', data, c['offset'], float('nan'), float('inf'))
g['outputs'] = g['nodes'][0]['outputs']
g['nodes'] = g['nodes'][:1]
g['tensors'] = [t for t in g['tensors'] if t['name'] != 'y']"
mt-opnames "$work/nan.mt" > /dev/null || fail "the reader refused NaN weights"
for device in reference; do
  mt-run "$work/nan.mt" -d $device --random-input > "$work/stdout" || fail "mt-run -d $device on NaN weights"
  grep -q "NaN" "$work/stdout" || fail "mt-run -d $device does not report NaN outputs: $(cat "$work/stdout")"
done

# ---- standard streams --------------------------------------------------------------------------
expect_refused 2 "standard input is closed" bash -c 'exec mt-opnames <&-'
expect_refused 2 "standard input is closed" bash -c 'exec mt-convert -o "$0" <&-' "$out_dir/m.mt"
expect_refused 2 "standard input is closed" bash -c 'exec mt-fuse -o "$0" <&-' "$out_dir/m.mt"
# stdout closed: a model written to -o must not end up on descriptor 1 and the log must not end up
# in the model; writing results to the closed stdout is a write error.
bash -c 'exec mt-fuse "$0" -o "$1" >&-' "$base" "$work/fused.mt" || fail "mt-fuse -o with stdout closed"
mt-opnames "$work/fused.mt" > /dev/null || fail "mt-fuse with stdout closed wrote a bad model"
rm "$work/fused.mt"
expect_refused 1 "write error" bash -c 'exec mt-fuse "$0" >&-' "$base"
expect_refused 1 "write error" bash -c 'exec mt-convert "$0" >&-' "$work/base.onnx"

# stdout a pipe whose reader has gone (EPIPE): exit 0, nothing on stderr.
epipe() {
  /usr/bin/python3 - "$@" << 'EOF'
import os, subprocess, sys
r, w = os.pipe()
os.close(r)
p = subprocess.run(sys.argv[1:], stdout=w, stderr=subprocess.PIPE)
sys.exit(f"{sys.argv[1:]}: status {p.returncode}, stderr {p.stderr!r}" if p.returncode or p.stderr else 0)
EOF
}
epipe mt-opnames --counts "$base" || fail "EPIPE: mt-opnames"
epipe mt-opnames --info "$base" || fail "EPIPE: mt-opnames --info"
epipe mt-fuse "$base" || fail "EPIPE: mt-fuse"
epipe mt-convert "$work/base.onnx" || fail "EPIPE: mt-convert"
epipe mt-run "$base" --random-input --json || fail "EPIPE: mt-run"
# The shell form of the same, as users meet it (head may or may not exit before the write).
{ mt-opnames --counts "$base" 2> "$work/stderr"; echo $? > "$work/status"; } | head -c1 > /dev/null
[[ $(cat "$work/status") -eq 0 && ! -s "$work/stderr" ]] || fail "mt-opnames | head -c1: $(cat "$work/stderr")"

# ---- a full disk and a file size limit: no partial output, input untouched ------------------------
big="$work/big.onnx"
/usr/bin/python3 - "$big" << 'EOF'
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
# 8 MiB of weights: y = x @ w, w 1024 x 2048.
w = numpy_helper.from_array(np.ones((1024, 2048), np.float32), "w")
graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "big",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1024])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2048])], [w])
onnx.save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1])
EOF
mt-convert "$big" -o "$work/big.mt"
cp "$work/big.mt" "$work/big.orig"
# ulimit -f (in 1 KiB blocks): write() fails with EFBIG instead of SIGXFSZ killing the tool.
expect_refused 1 "File too large" bash -c 'ulimit -f 1024 && exec mt-convert "$0" -o "$1"' "$big" "$out_dir/m.mt"
expect_refused 1 "File too large" bash -c 'ulimit -f 1024 && exec mt-fuse "$0" -o "$1"' "$work/big.mt" "$out_dir/m.mt"
cmp "$work/big.mt" "$work/big.orig" || fail "the input changed"
# A 1 MiB tmpfs (when this runs as root and may mount): ENOSPC, the old output left as it was.
mkdir "$work/full"
if mount -t tmpfs -o size=1m tmpfs "$work/full" 2> /dev/null; then
  echo old > "$work/full/m.mt"
  out_dir="$work/full/new" && mkdir "$out_dir"
  expect_refused 1 "No space left on device" mt-convert "$big" -o "$out_dir/m.mt"
  expect_refused 1 "No space left on device" mt-fuse "$work/big.mt" -o "$out_dir/m.mt"
  out_dir="$work/full"
  rm -r "$work/full/new"
  got=0
  mt-convert "$big" -o "$work/full/m.mt" 2> /dev/null || got=$?
  [[ $got -eq 1 && "$(cat "$work/full/m.mt")" == old && $(ls -A "$work/full") == m.mt ]] ||
    fail "a failed overwrite on a full disk damaged the old output"
  umount "$work/full"
  out_dir="$work/written"
else
  echo "(no tmpfs: cannot mount here; the ulimit -f cases cover write failure)"
fi

# ---- 10^6 nodes, SIGINT --------------------------------------------------------------------------
# chain.py N FILE: an ONNX chain of N Relu nodes.
cat > "$work/chain.py" << 'PY'
import sys
import onnx
from onnx import TensorProto, helper
n = int(sys.argv[1])
g = onnx.GraphProto(name="chain")
g.input.append(helper.make_tensor_value_info("t0", TensorProto.FLOAT, [1, 4]))
g.output.append(helper.make_tensor_value_info(f"t{n}", TensorProto.FLOAT, [1, 4]))
for i in range(n):
    node = g.node.add()
    node.op_type = "Relu"
    node.input.append(f"t{i}")
    node.output.append(f"t{i + 1}")
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
open(sys.argv[2], "wb").write(m.SerializeToString())
PY
# A million nodes is refused at once, before any per-node work (the limit is 2^19 nodes; importing
# costs a few KiB per node), within a 4 GiB address space.
/usr/bin/python3 "$work/chain.py" 1000000 "$work/million.onnx"
limit_kb=4194304
((sanitized)) && limit_kb=unlimited
expect_refused 4 "1000000 nodes, more than the 524288 mt imports" \
  bash -c "ulimit -v $limit_kb && exec timeout 60 mt-convert '$work/million.onnx' -o '$out_dir/m.mt'"
rm "$work/million.onnx"

# 2x10^5 nodes convert (a few seconds unloaded); SIGINT at several moments of that conversion,
# and of mt-fuse on the result: the tool dies by the signal and leaves nothing behind.
/usr/bin/python3 "$work/chain.py" 200000 "$work/chain.onnx"
mt-convert "$work/chain.onnx" -o "$work/chain.mt"
[[ $(mt-opnames --counts "$work/chain.mt") == *"200000"* ]] || fail "2x10^5 nodes: wrong node count"
for delay in 0.2 0.5 1; do
  got=0
  timeout -s INT "$delay" mt-convert "$work/chain.onnx" -o "$out_dir/m.mt" 2> /dev/null || got=$?
  [[ $got -eq 124 ]] || fail "mt-convert, SIGINT after ${delay}s: status $got, expected 124 (interrupted)"
  [[ -z "$(ls -A "$out_dir")" ]] || fail "mt-convert, SIGINT after ${delay}s left files: $(ls -A "$out_dir")"
  got=0
  timeout -s INT "$delay" mt-fuse "$work/chain.mt" -o "$out_dir/m.mt" 2> /dev/null || got=$?
  [[ $got -eq 124 ]] || fail "mt-fuse, SIGINT after ${delay}s: status $got, expected 124 (interrupted)"
  [[ -z "$(ls -A "$out_dir")" ]] || fail "mt-fuse, SIGINT after ${delay}s left files: $(ls -A "$out_dir")"
done

cmp "$base" "$work/base.orig" || fail "the base model changed"
echo "hostile_inputs: all cases passed"
