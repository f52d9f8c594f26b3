#!/usr/bin/env bash
# examples/Makefile end to end on one small exported model: the whole chain (convert, fuse,
# prepack, op check, benchmark JSON) for the cpu backend and for the reference backend (which has
# no prepack step), make's incremental rebuild (nothing to do the second time; a touched converted
# model reruns only what follows it), `make baseline`, and the `make ci` gate passing against its
# own baseline and failing against one doctored to be 100x faster. No timing thresholds.
set -euo pipefail

: "${MT_SOURCE_DIR:?MT_SOURCE_DIR must name the source tree}"
: "${MT_BUILD_DIR:?MT_BUILD_DIR must name the build tree}"
: "${MT_TEST_MODELS:?MT_TEST_MODELS must name the directory scripts/export_models.py --set ci wrote}"
source "$MT_SOURCE_DIR/tests/integration/common.bash"
python=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
model=mobilenet_v3_small

mk() {
  make --no-print-directory -C "$MT_SOURCE_DIR/examples" MT_BIN="$MT_BUILD_DIR/tools" MODELS_DIR="$MT_TEST_MODELS" \
    OUT="$work/out" BASELINES="$work/baselines" MODELS=$model WARMUP=0 ITERATIONS=3 "$@"
}

# check_bench FILE DEVICE: a benchmark report of $model on DEVICE with 3 measured runs.
check_bench() {
  "$python" - "$@" <<'PY' || fail "bad benchmark report $1"
import json, sys
report = json.load(open(sys.argv[1]))
assert report["setup"]["device"] == sys.argv[2], report["setup"]
assert len(report["timing"]["latency_ms"]["samples"]) == 3, report["timing"]
assert report["timing"]["latency_ms"]["median"] > 0
PY
}

# The cpu chain: every stage's file.
mk > "$work/log" 2>&1 || fail "make (cpu) failed: $(tail -5 "$work/log")"
for suffix in converted.mt fused.mt cpu.mt cpu.mt.ops cpu.t1.bench.json; do
  [[ -s "$work/out/$model.$suffix" ]] || fail "make (cpu) did not write $model.$suffix"
done
grep -q "conv2d" "$work/out/$model.cpu.mt.ops" || fail "the op counts lack conv2d: $(cat "$work/out/$model.cpu.mt.ops")"
check_bench "$work/out/$model.cpu.t1.bench.json" cpu
echo "ok   cpu chain: converted, fused, prepacked, checked, benchmarked"

# Incremental: up to date, then a touched converted model reruns fuse and prepack but not convert.
mk -q all || fail "make -q: targets not up to date right after a build"
touch "$work/out/$model.converted.mt"
mk -n all > "$work/plan" 2>&1
grep -q "mt-fuse" "$work/plan" && grep -q "mt-prepack" "$work/plan" || fail "touched input did not rerun fuse and prepack: $(cat "$work/plan")"
! grep -q "mt-convert" "$work/plan" || fail "touched converted model reran mt-convert: $(cat "$work/plan")"
echo "ok   incremental: nothing to redo, then only the steps after a touched file"

# The reference backend: no prepack step, the fused model is checked and benchmarked.
mk DEVICE=reference > "$work/log" 2>&1 || fail "make DEVICE=reference failed: $(tail -5 "$work/log")"
! grep -q "mt-prepack" "$work/log" || fail "DEVICE=reference ran mt-prepack: $(cat "$work/log")"
[[ -s "$work/out/$model.fused.mt.ops" ]] || fail "DEVICE=reference did not check the fused model"
check_bench "$work/out/$model.reference.t1.bench.json" reference
echo "ok   reference chain: fused model checked and benchmarked, no prepack"

# The CI gate: passes against its own baseline (wide margin), fails against a 100x faster one.
mk baseline > "$work/log" 2>&1 || fail "make baseline failed: $(tail -5 "$work/log")"
baseline="$work/baselines/$model.cpu.t1.json"
[[ -s "$baseline" ]] || fail "make baseline did not write $baseline"
mk ci MAX_REGRESSION=1000 > "$work/log" 2>&1 || fail "make ci failed against its own baseline: $(tail -5 "$work/log")"
"$python" - "$baseline" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
report["timing"]["latency_ms"]["median"] /= 100
json.dump(report, open(sys.argv[1], "w"))
PY
status=0
mk ci > "$work/log" 2>&1 || status=$?
[[ $status -eq 2 ]] || fail "make ci against a 100x faster baseline: exit $status, expected 2: $(tail -5 "$work/log")"
grep -q "Error 5" "$work/log" || fail "make ci did not fail on mt-bench's regression status 5: $(tail -5 "$work/log")"
echo "ok   make ci: passes against its own baseline, fails (mt-bench exit 5) against a doctored one"
