#!/usr/bin/env bash
# mt-bench end to end on converted test models: the JSON report validates against
# docs/mt-bench.schema.json and every field is sane (positive times, ordered statistics, the
# counts asked for, arena within the intermediates, the file's sha256); the CSV parses; the
# per-node profile covers every node, with bytes and rates; --calibrate-peak stores the machine's
# peak (in a private MT_CACHE_DIR) and --profile then sets every timed node's share of it, against
# the roofline, while a peak file from another machine or a damaged one is set aside with a warning;
# --min-time, standard input, the --baseline gate (passes against itself with a wide margin, exits
# 5 against a baseline doctored to be 10x faster) and the usage and input errors with their exit
# codes. No timing thresholds.
set -euo pipefail

: "${MT_SOURCE_DIR:?MT_SOURCE_DIR must name the source tree}"
source "$MT_SOURCE_DIR/tests/integration/common.bash"
: "${MT_TEST_MODELS:?MT_TEST_MODELS must name the directory scripts/export_models.py --set ci wrote}"
python=/usr/bin/python3
schema="$MT_SOURCE_DIR/docs/mt-bench.schema.json"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export MT_CACHE_DIR="$work/cache"  # no peak file from the user's own cache

# Runs a command that must exit with status $1; its stdout goes to $work/out, stderr to $work/err.
expect_status() {
  local want=$1
  shift
  local status=0
  "$@" > "$work/out" 2> "$work/err" || status=$?
  [[ $status -eq $want ]] || { cat "$work/err" >&2; fail "exit $status (want $want): $*"; }
}

# Validates a JSON report against the schema and checks its values.
# $1 report, $2 model file, $3 device, $4 threads, $5 iterations ("" for --min-time), $6 "profile" or "".
check_report() {
  "$python" - "$schema" "$@" <<'PY'
import hashlib, json, sys
import jsonschema

schema_path, report_path, model_path, device, threads, iterations, profile = sys.argv[1:8]
report = json.load(open(report_path))
jsonschema.validate(report, json.load(open(schema_path)))

def check(condition, what):
    if not condition:
        sys.exit(f"{report_path}: {what}")

sha = hashlib.sha256(open(model_path, "rb").read()).hexdigest()
check(report["model"]["sha256"] == sha, f"sha256 {report['model']['sha256']} is not the file's {sha}")
check(report["setup"]["device"] == device, f"device {report['setup']['device']}, want {device}")
check(report["setup"]["threads"] == int(threads), "threads differ from --threads")
timing, lat, mem = report["timing"], report["timing"]["latency_ms"], report["memory"]
for key in ("load_ms", "plan_ms", "first_inference_ms"):
    check(timing[key] > 0, f"{key} is not positive")
for key in ("load_cpu_ms", "plan_cpu_ms"):
    check(timing[key] >= 0, f"{key} is negative")
check(lat["min"] > 0, "min latency is not positive")
check(lat["min"] <= lat["median"] <= lat["p90"] <= lat["p99"] <= lat["max"], f"statistics out of order: {lat}")
check(lat["min"] <= lat["mean"] <= lat["max"], "mean outside [min, max]")
check(len(lat["samples"]) == lat["count"], "sample count differs from count")
check(min(lat["samples"]) == lat["min"] and max(lat["samples"]) == lat["max"], "min/max are not those of the samples")
if iterations:
    check(lat["count"] == int(iterations) and report["setup"]["iterations"] == int(iterations),
          f"count {lat['count']}, want --iterations {iterations}")
else:
    check(report["setup"]["iterations"] is None and report["setup"]["min_time_s"] > 0, "--min-time not recorded")
    check(sum(lat["samples"]) >= report["setup"]["min_time_s"] * 1e3 * 0.999, "samples do not add up to --min-time")
check(0 < mem["arena_bytes"] <= mem["intermediate_bytes"],
      f"arena {mem['arena_bytes']} not within intermediates {mem['intermediate_bytes']}")
check(mem["weight_bytes"] > 0, "no weight bytes")
check(mem["peak_rss_bytes"] > 0 and mem["vm_hwm_bytes"] > 0, "no peak memory")
check(report["system"]["cores"] >= 1, "no cores")
check(report["model"]["nodes"] > 0, "no nodes")
if profile:
    p = report["profile"]
    check(len(p["nodes"]) == report["model"]["nodes"], "profile does not cover every node")
    check([n["index"] for n in p["nodes"]] == list(range(len(p["nodes"]))), "profile nodes out of graph order")
    check(abs(sum(n["percent"] for n in p["nodes"]) - 100) < 0.01, "node shares do not add up to 100%")
    check(sum(o["nodes"] for o in p["ops"]) == len(p["nodes"]), "op table does not count every node")
    conv = [o for o in p["ops"] if o["op"] == "conv2d"]
    check(conv and conv[0]["flops"] > 0 and conv[0]["gflops_per_s"] is not None, "conv2d has no FLOP count or rate")
    check(all(n["flops"] is None for n in p["nodes"] if n["op"] in ("relu", "add", "clamp")), "elementwise op with FLOPs")
    check(all(n["bytes"] > 0 for n in p["nodes"]), "a node without bytes")
    for n in p["nodes"]:
        if n["time_ms"] > 0:
            check(abs(n["gbytes_per_s"] - n["bytes"] / n["time_ms"] / 1e6) <= 1e-6 * n["gbytes_per_s"], f"GB/s of {n['name']}")
        if n["flops"] is None:
            check(n["bound"] == "memory", f"{n['name']} without FLOPs is not memory-bound")
    if profile == "peak":
        peak = p["peak"]
        check(peak is not None and peak["threads"] == int(threads) and peak["gflops_per_s"] > 0, f"peak {peak}")
        levels = peak["bandwidth"]
        check([l["bytes"] for l in levels] == sorted(l["bytes"] for l in levels), "bandwidth levels out of order")
        def bandwidth(b):
            return next((l["gbytes_per_s"] for l in levels if b <= l["bytes"]), levels[-1]["gbytes_per_s"])
        for n in p["nodes"]:
            if n["time_ms"] <= 0:
                check(n["percent_of_peak"] is None, f"{n['name']} took no time but has a share of the peak")
                continue
            if n["flops"] is None:
                want = 100 * n["gbytes_per_s"] / bandwidth(n["bytes"])
            else:
                want = 100 * n["gflops_per_s"] / min(peak["gflops_per_s"], n["flops"] / n["bytes"] * bandwidth(n["bytes"]))
            check(abs(n["percent_of_peak"] - want) <= 1e-6 * want, f"{n['name']}: {n['percent_of_peak']}% of the peak, want {want}")
    else:
        check(p["peak"] is None and all(n["percent_of_peak"] is None for n in p["nodes"]), "a peak without a peak file")
else:
    check("profile" not in report, "profile present without --profile")
PY
}

small="$MT_TEST_MODELS/op_conv_bn_relu_opset13/model.onnx"
real="$MT_TEST_MODELS/mobilenet_v2/model.onnx"
[[ -f "$small" && -f "$real" ]] || fail "test models missing (run scripts/export_models.py --set ci --out $MT_TEST_MODELS)"
mt-convert "$small" -o "$work/small.mt"
mt-convert "$real" -o "$work/mbv2.mt"

echo "== JSON on the reference backend: schema and sane values"
expect_status 0 mt-bench "$work/small.mt" --device reference --warmup 1 --iterations 5 --format json
cp "$work/out" "$work/small.json"
[[ ! -s "$work/err" ]] || { cat "$work/err" >&2; fail "stderr is not empty when it is not a terminal"; }
check_report "$work/small.json" "$work/small.mt" reference 1 5 "" || fail "reference JSON report"

echo "== JSON with --profile on cpu, 2 threads, a real model"
expect_status 0 mt-bench "$work/mbv2.mt" --device cpu --threads 2 --warmup 1 --iterations 3 --profile --format json
cp "$work/out" "$work/mbv2.json"
check_report "$work/mbv2.json" "$work/mbv2.mt" cpu 2 3 profile || fail "cpu --profile JSON report"

echo "== --calibrate-peak: stored per user, then used by --profile on this machine only"
expect_status 0 mt-bench --calibrate-peak --threads 2 --format json
"$python" - "$work/out" "$MT_CACHE_DIR/peak.json" <<'PY' || fail "--calibrate-peak report or file"
import json, sys
report, stored = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
if report["path"] != sys.argv[2] or {k: v for k, v in report.items() if k != "path"} != stored:
    sys.exit(f"reported {report}, stored {stored}")
if stored["schema"] != "mt-peak/1" or [a["threads"] for a in stored["at"]] != [1, 2]:
    sys.exit(f"peak file {stored}")
for a in stored["at"]:
    if not (a["gflops_per_s"] > 0 and a["bandwidth"] and all(l["bytes"] > 0 and l["gbytes_per_s"] > 0 for l in a["bandwidth"])):
        sys.exit(f"measurement {a}")
PY
expect_status 0 mt-bench "$work/mbv2.mt" --device cpu --threads 2 --warmup 1 --iterations 3 --profile --format json
check_report "$work/out" "$work/mbv2.mt" cpu 2 3 peak || fail "cpu --profile JSON report with a peak"
expect_status 0 mt-bench "$work/small.mt" --device cpu --iterations 2 --profile
grep -q "^peak .*GFLOP/s at 1 thread; copies .*GB/s in" "$work/out" || fail "text report has no peak line"
grep -q "% peak" "$work/out" || fail "text report has no % peak column"
cp "$MT_CACHE_DIR/peak.json" "$work/peak.json"
"$python" - "$MT_CACHE_DIR/peak.json" <<'PY'
import json, sys
peak = json.load(open(sys.argv[1]))
peak["cpu_model"] = "another CPU"
json.dump(peak, open(sys.argv[1], "w"))
PY
expect_status 0 mt-bench "$work/small.mt" --device cpu --iterations 2 --profile --format json
grep -q "another machine" "$work/err" || fail "a peak file from another machine is not reported"
check_report "$work/out" "$work/small.mt" cpu 1 2 profile || fail "report with another machine's peak file"
printf '{"schema": "mt-peak/1", "cpu_model": ' > "$MT_CACHE_DIR/peak.json"
expect_status 0 mt-bench "$work/small.mt" --device cpu --iterations 2 --profile --format json
grep -q "peak.json: not used" "$work/err" || fail "a damaged peak file is not reported"
cp "$work/peak.json" "$MT_CACHE_DIR/peak.json"
expect_status 2 mt-bench --calibrate-peak "$work/small.mt"
expect_status 2 mt-bench --calibrate-peak --profile
MT_CACHE_DIR= expect_status 0 mt-bench --calibrate-peak --threads 1
grep -q "not stored" "$work/out" || fail "an empty MT_CACHE_DIR still stored the peak"

echo "== --min-time, and the model read from standard input"
expect_status 0 mt-bench --device cpu --warmup 0 --min-time 0.05 --format json - < "$work/small.mt"
cp "$work/out" "$work/stdin.json"
check_report "$work/stdin.json" "$work/small.mt" cpu 1 "" "" || fail "--min-time JSON report"
"$python" -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["model"]["path"] != "<stdin>")' "$work/stdin.json" ||
  fail "a model from stdin is not reported as <stdin>"

echo "== CSV: the summary block, then the node and op blocks with --profile"
expect_status 0 mt-bench "$work/small.mt" --device cpu --iterations 4 --profile --format csv
"$python" - "$work/out" "$work/small.json" <<'PY' || fail "CSV report"
import csv, io, json, sys
blocks = open(sys.argv[1]).read().split("\n\n")
if len(blocks) != 3:
    sys.exit(f"{len(blocks)} CSV blocks, want 3 (summary, nodes, ops)")
summary, nodes, ops = (list(csv.DictReader(io.StringIO(b))) for b in blocks)
nodes_in_model = json.load(open(sys.argv[2]))["model"]["nodes"]
if len(summary) != 1 or int(summary[0]["runs"]) != 4:
    sys.exit(f"summary rows {summary}")
row = summary[0]
if not 0 < float(row["min_ms"]) <= float(row["median_ms"]) <= float(row["max_ms"]):
    sys.exit(f"statistics out of order: {row}")
if row["device"] != "cpu" or len(row["sha256"]) != 64:
    sys.exit(f"setup columns: {row}")
if len(nodes) != nodes_in_model or sum(int(o["nodes"]) for o in ops) != nodes_in_model:
    sys.exit(f"{len(nodes)} node rows, op rows count {sum(int(o['nodes']) for o in ops)}, model has {nodes_in_model}")
PY

echo "== text: aligned sections"
expect_status 0 mt-bench "$work/small.mt" --device reference --iterations 2 --profile
for part in "first inference" "median" "peak RSS" "arena" "per op type" "per node" "conv2d"; do
  grep -q "$part" "$work/out" || fail "text report has no '$part'"
done

echo "== --baseline: passes against itself, exit 5 against a baseline 10x faster"
expect_status 0 mt-bench "$work/small.mt" --device reference --iterations 5 --baseline "$work/small.json" --max-regression 400
grep -q "ratio" "$work/out" || fail "no baseline line in the text report"
"$python" - "$work/small.json" "$work/fast.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
report["timing"]["latency_ms"]["median"] /= 10
json.dump(report, open(sys.argv[2], "w"))
PY
expect_status 5 mt-bench "$work/small.mt" --device reference --iterations 5 --baseline "$work/fast.json" \
  --max-regression 50 --format json
grep -q "REGRESSION" "$work/err" || fail "no regression message on stderr"
"$python" - "$work/out" "$schema" <<'PY' || fail "JSON report of a failed baseline check"
import json, sys, jsonschema
report = json.load(open(sys.argv[1]))
jsonschema.validate(report, json.load(open(sys.argv[2])))
b = report["baseline"]
if not (b["regressed"] and b["ratio"] > 1.5 and abs(b["ratio"] - b["current_median_ms"] / b["median_ms"]) < 1e-9):
    sys.exit(f"baseline record: {b}")
PY

echo "== errors and exit codes"
expect_status 2 mt-bench "$work/small.mt" --device nosuch
expect_status 2 mt-bench "$work/small.mt" --max-regression 5
expect_status 2 mt-bench "$work/small.mt" --iterations 3 --min-time 1
expect_status 2 mt-bench "$work/small.mt" --iterations 0
echo "not json" > "$work/bad.json"
expect_status 3 mt-bench "$work/small.mt" --device reference --baseline "$work/bad.json"
grep -q "bad.json" "$work/err" || fail "baseline error does not name the file"
head -c 100 "$work/small.mt" > "$work/truncated.mt"
expect_status 3 mt-bench "$work/truncated.mt" --device reference
echo "bench_cli: all checks passed"
