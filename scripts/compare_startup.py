#!/usr/bin/env python3
"""Start-up: how long before the first inference can start, mt beside PyTorch lite and ONNX Runtime.

For each model (scripts/export_models.py), prepacked for cpu (`mt-convert | mt-fuse | mt-prepack --backend
cpu`), measures in fresh processes, taking turns in a rotated order each round, medians over the rounds:

  mt            mt-bench --iterations 1 --warmup 0: load (map, decode, validate; the data section's
                checksum runs beside it on a thread of its own), plan (waiting for that checksum),
                load + plan, peak RSS of the whole run (VmHWM: getrusage's maxrss would include what
                this script held when it started the process), and the plan's weight, packed-copy
                and arena bytes
  mt-baseline   the same for another build of mt (--baseline-bin DIR: its own tools build its own
                files), so that a change is measured before and after, interleaved
  PyTorch lite  torch.jit.mobile._load_for_lite_interpreter on the optimize_for_mobile model
                (scripts/compare_peers.py prepares it), timed inside a process that has imported torch
                already; its peak RSS includes the torch library
  ONNX Runtime  InferenceSession.create on the ONNX model (onnxruntime-node, installed by npm into the
                work directory as scripts/compare_peers.py does), timed inside node; peak RSS of node

Every time is given in wall-clock time and in CPU time of the process (all threads; mt-bench's
load_cpu_ms and plan_cpu_ms), which other work on a shared machine hardly moves. Also the target of
issue 16 for mt's peak RSS: the file's weights + the planned arena + 8 MB.

Loads read files from the page cache (each file is read once before the rounds): this measures the
work of loading, not the disk. Prints markdown tables (for docs/benchmarks.md).

    /usr/bin/python3 scripts/compare_startup.py --mt-bin build/tools --baseline-bin /path/to/old/build/tools
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys

sys.dont_write_bytecode = True
SCRIPTS = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(SCRIPTS))
import compare_peers  # noqa: E402  (the model pipeline, the lite preparation, onnxruntime-node)

LITE_WORKER = r"""
import json, sys, time
import torch
from torch.jit.mobile import _load_for_lite_interpreter
torch.set_num_threads(1)
start, cpu_start = time.perf_counter(), time.process_time()
module = _load_for_lite_interpreter(sys.argv[1])
load, load_cpu = time.perf_counter() - start, time.process_time() - cpu_start
hwm = next(int(line.split()[1]) * 1024 for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"startup_ms": load * 1e3, "startup_cpu_ms": load_cpu * 1e3, "peak_rss_bytes": hwm}))
"""

LABELS = {"torch-lite": "PyTorch lite load", "onnxruntime": "ONNX Runtime session", "mt-baseline": "mt before",
          "mt": "mt"}


def log(message):
    print(f"[compare_startup] {message}", file=sys.stderr, flush=True)


def run_json(argv, timeout=600):
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{argv[0]}: {(done.stderr.strip().splitlines() or ['exit %d' % done.returncode])[-1]}")
    return json.loads(done.stdout)


def mt_model(tools, onnx, input_npy, out: pathlib.Path):
    """The prepacked model, rebuilt when its mt-prepack is newer than the file."""
    out.parent.mkdir(parents=True, exist_ok=True)
    stale = not out.exists() or out.stat().st_mtime < os.stat(tools["mt-prepack"]).st_mtime
    if stale:
        log(f"{out}: {' | '.join(os.path.basename(s[0]) for s in compare_peers.mt_pipeline(tools))}")
        compare_peers.build_mt_model(compare_peers.mt_pipeline(tools), onnx, input_npy, out)
    return out


def mt_run(bench, path):
    j = run_json([bench, "--device", "cpu", "--threads", "1", "--iterations", "1", "--warmup", "0", "--format",
                  "json", str(path)])
    t, m = j["timing"], j["memory"]
    return {"load_ms": t["load_ms"], "plan_ms": t["plan_ms"], "load_cpu_ms": t["load_cpu_ms"],
            "plan_cpu_ms": t["plan_cpu_ms"], "startup_ms": t["load_ms"] + t["plan_ms"],
            "startup_cpu_ms": t["load_cpu_ms"] + t["plan_cpu_ms"], "peak_rss_bytes": m["vm_hwm_bytes"],
            "file_bytes": j["model"]["file_bytes"], "weight_bytes": m["weight_bytes"],
            "packed_weight_bytes": m["packed_weight_bytes"], "arena_bytes": m["arena_bytes"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="mobilenet_v2,resnet50")
    parser.add_argument("--rounds", type=int, default=5, help="measurements per runner and model (default: %(default)s)")
    parser.add_argument("--mt-bin", help="directory with the mt tools (default: build/tools, then PATH)")
    parser.add_argument("--baseline-bin", help="directory with another build's mt tools: the 'mt before' runner")
    parser.add_argument("--work", type=pathlib.Path, default=compare_peers.default_work_dir())
    parser.add_argument("--no-onnxruntime", action="store_true", help="skip ONNX Runtime (needs node and npm)")
    args = parser.parse_args()
    models = [m for m in args.models.split(",") if m]
    builds = {"mt": compare_peers.find_mt_tools(args.mt_bin)}
    if args.baseline_bin:
        builds["mt-baseline"] = compare_peers.find_mt_tools(args.baseline_bin)
    models_dir = args.work / "models"
    subprocess.run([sys.executable, str(SCRIPTS / "export_models.py"), "--only", ",".join(models), "--out", str(models_dir)],
                   check=True)
    ort_script = None
    if not args.no_onnxruntime:
        ort_script, reason = compare_peers.install_onnxruntime(args.work)
        if ort_script is None:
            log(f"ONNX Runtime left out: {reason}")
    files = {}
    for model in models:
        d = models_dir / model
        for runner, tools in builds.items():
            files[(model, runner)] = mt_model(tools, d / "model.onnx", d / "input.npy", args.work / runner / f"{model}.mt")
        lite = args.work / "lite" / f"{model}.ptl"
        if not lite.exists():
            lite.parent.mkdir(parents=True, exist_ok=True)
            log(f"{model}: optimize_for_mobile -> {lite}")
            run_json([sys.executable, str(SCRIPTS / "compare_peers.py"), "--worker", "prepare-lite", "--model", model,
                      "--input", str(d / "input.npy"), "--output", str(lite), "--threads", "1"])
        files[(model, "torch-lite")] = lite
        if ort_script:
            files[(model, "onnxruntime")] = d / "model.onnx"
    for f in files.values():  # into the page cache, 1 MiB at a time
        with open(f, "rb") as stream:
            while stream.read(1 << 20):
                pass
    runners = [r for r in ("mt-baseline", "mt", "torch-lite", "onnxruntime") if any(k[1] == r for k in files)]
    results = {}
    for round_ in range(args.rounds):
        for model in models:
            order = runners[round_ % len(runners):] + runners[:round_ % len(runners)]
            for runner in order:
                f = files[(model, runner)]
                if runner == "torch-lite":
                    r = run_json([sys.executable, "-c", LITE_WORKER, str(f)])
                elif runner == "onnxruntime":
                    d = models_dir / model
                    name = json.loads((d / "info.json").read_text())["input"]["name"]
                    r = run_json(["node", str(ort_script), str(f), str(d / "input.npy"), name, "1", "0", "0"])
                else:
                    r = mt_run(builds[runner]["mt-bench"], f)
                results.setdefault((model, runner), []).append(r)
        log(f"round {round_ + 1}/{args.rounds} done")

    def med(model, runner, key):
        values = [r[key] for r in results.get((model, runner), []) if r.get(key) is not None]
        return statistics.median(values) if values else None

    def ms(v):
        return "–" if v is None else f"{v:.1f}"

    def mb(v):
        return "–" if v is None else f"{v / 1e6:.1f}"

    def both(model, runner, wall, cpu):
        return f"{ms(med(model, runner, wall))} ({ms(med(model, runner, cpu))})"

    def ratio(model, runner, base):
        a, b = med(model, runner, "startup_ms"), med(model, base, "startup_ms")
        ac, bc = med(model, runner, "startup_cpu_ms"), med(model, base, "startup_cpu_ms")
        return f"{a / b:.3f}x ({ac / bc:.3f}x)" if a and b and ac and bc else "–"

    with open("/proc/loadavg") as f:
        load = f.read().split()[0]
    mts = [r for r in ("mt-baseline", "mt") if r in runners]
    peers = [r for r in ("torch-lite", "onnxruntime") if r in runners]
    print(f"Medians of {args.rounds} rounds, 1 thread, load average {load} at the end. Times in ms, wall clock and "
          f"(in parentheses) CPU time of the process; sizes in MB.\n")
    header = ["model"] + [LABELS[p] for p in peers]
    for r in mts:
        header += [f"{LABELS[r]}: load", f"{LABELS[r]}: plan", f"{LABELS[r]}: load + plan"]
    header += [f"mt / {LABELS[p]}" for p in peers] + (["mt / mt before"] if "mt-baseline" in mts else [])
    print("| " + " | ".join(header) + " |")
    print("|---|" + "---:|" * (len(header) - 1))
    for model in models:
        cells = [model] + [both(model, p, "startup_ms", "startup_cpu_ms") for p in peers]
        for r in mts:
            cells += [both(model, r, "load_ms", "load_cpu_ms"), both(model, r, "plan_ms", "plan_cpu_ms"),
                      both(model, r, "startup_ms", "startup_cpu_ms")]
        cells += [ratio(model, "mt", p) for p in peers] + ([ratio(model, "mt", "mt-baseline")] if "mt-baseline" in mts else [])
        print("| " + " | ".join(cells) + " |")

    print("\nPeak RSS (VmHWM) and mt's memory, MB; target: mt's peak RSS <= the file's weights + the planned arena + 8 MB.\n")
    header = ["model"] + [f"RSS {LABELS[r]}" for r in peers + mts]
    for r in mts:
        header += [f"{LABELS[r]}: file", f"{LABELS[r]}: packed copies", f"{LABELS[r]}: arena"]
    header += ["mt: weights + arena + 8 MB"]
    print("| " + " | ".join(header) + " |")
    print("|---|" + "---:|" * (len(header) - 1))
    for model in models:
        cells = [model] + [mb(med(model, r, "peak_rss_bytes")) for r in peers + mts]
        for r in mts:
            cells += [mb(med(model, r, "file_bytes")), mb(med(model, r, "packed_weight_bytes")),
                      mb(med(model, r, "arena_bytes"))]
        weights, arena = med(model, "mt", "weight_bytes"), med(model, "mt", "arena_bytes")
        cells.append(mb(weights + arena + 8e6) if weights is not None and arena is not None else "–")
        print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
