#!/usr/bin/env bash
# The C API as an app gets it: `cmake --install` into a temporary prefix, then examples/c/classify.c
# built against the installed libmt.so twice (pkg-config, and CMake's find_package(mt) with mt::mt)
# and run on the shipped digits model; its best class and score for several test images must equal
# mt-run's. Also checks the installed library's SONAME and that it exports only mt_* functions.
set -euo pipefail

: "${MT_SOURCE_DIR:?MT_SOURCE_DIR must name the source tree}"
: "${MT_BUILD_DIR:?MT_BUILD_DIR must name the build tree}"
source "$MT_SOURCE_DIR/tests/integration/common.bash"
python=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"

cmake --install "$MT_BUILD_DIR" --prefix "$prefix" >"$work/install.log" || fail "cmake --install: $(tail -3 "$work/install.log")"
pc=$(find "$prefix" -name mt.pc)
[[ -n $pc ]] || fail "no mt.pc installed"
[[ -f $prefix/include/mt/mt.h ]] || fail "no include/mt/mt.h installed"
[[ -f $prefix/share/man/man3/mt.3 ]] || fail "no man3/mt.3 installed"
export PKG_CONFIG_PATH=$(dirname "$pc")
libdir=$(pkg-config --variable=libdir mt)
[[ $(readelf -d "$libdir/libmt.so" | grep SONAME) == *"[libmt.so.0.1]"* ]] || fail "SONAME: $(readelf -d "$libdir/libmt.so" | grep SONAME)"
stray=$(nm -D --defined-only "$libdir/libmt.so" | awk '$2 ~ /[TDBR]/ && $3 !~ /^mt_/ {print $3}')
[[ -z $stray ]] || fail "libmt.so exports more than mt_*: $(echo $stray | head -c 300)"

# The app, built with pkg-config (C11, warnings as errors) and with CMake's package.
cc -std=c11 -Wall -Wextra -Werror "$MT_SOURCE_DIR/examples/c/classify.c" $(pkg-config --cflags --libs mt) -o "$work/classify" ||
  fail "classify.c does not build with pkg-config"
mkdir "$work/app"
cat > "$work/app/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.25)
project(classify C)
find_package(mt 0.1 REQUIRED)
add_executable(classify_cmake $MT_SOURCE_DIR/examples/c/classify.c)
target_link_libraries(classify_cmake PRIVATE mt::mt)
EOF
cmake -S "$work/app" -B "$work/app/build" -DCMAKE_PREFIX_PATH="$prefix" >"$work/app.log" 2>&1 &&
  cmake --build "$work/app/build" >>"$work/app.log" 2>&1 || fail "find_package(mt): $(tail -5 "$work/app.log")"

export LD_LIBRARY_PATH=$libdir
"$prefix/bin/mt-convert" "$MT_SOURCE_DIR/models/digits.onnx" -q | "$prefix/bin/mt-fuse" -q -o "$work/digits.mt"
for index in 0 7 123; do
  "$python" -c "import numpy as np, sys; np.save(sys.argv[2], np.load(sys.argv[1])[$index:$index + 1])" \
    "$MT_SOURCE_DIR/models/digits-test.npy" "$work/image$index.npy"
  "$work/classify" "$work/digits.mt" "$work/image$index.npy" "$MT_SOURCE_DIR/models/digits-labels.txt" >"$work/c.txt" ||
    fail "classify failed on image $index"
  "$work/app/build/classify_cmake" "$work/digits.mt" "$work/image$index.npy" >"$work/c2.txt" || fail "classify_cmake failed"
  "$prefix/bin/mt-run" "$work/digits.mt" --input "$work/image$index.npy" --topk 3 --json >"$work/run.json" 2>/dev/null ||
    fail "mt-run failed on image $index"
  "$python" - "$work/c.txt" "$work/c2.txt" "$work/run.json" <<'PY' || fail "classify and mt-run disagree on image $index: $(cat "$work/c.txt")"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
cmake_lines = open(sys.argv[2]).read().splitlines()
top = json.load(open(sys.argv[3]))["outputs"][0]["topk"][0]
assert len(lines) == 3, lines
for line, other, expected in zip(lines, cmake_lines, top):
    # "1. class 4 4 score 9.8123" (with labels) and "1. class 4  score 9.8123" (without)
    words = line.split()
    assert int(words[2]) == expected["index"], (line, expected)
    assert abs(float(words[-1]) - expected["value"]) <= 1e-4 * max(1.0, abs(expected["value"])), (line, expected)
    assert other.split()[2] == words[2] and other.split()[-1] == words[-1], (line, other)
PY
  echo "ok   image $index: $(head -1 "$work/c.txt")"
done

# Errors come back as one line with the API's message, never a crash.
expect 1 "no such file" "$work/classify" "$work/missing.mt" "$work/image0.npy"
expect 3 "need a float32 .npy" "$work/classify" "$work/digits.mt" "$MT_SOURCE_DIR/models/digits-test.npy"
