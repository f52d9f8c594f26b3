#!/usr/bin/env python3
"""Start-up time: how long before the first inference can start, mt beside PyTorch lite.

For each model (scripts/export_models.py), prepacked for cpu (`mt-convert | mt-fuse | mt-prepack --backend
cpu`), measures in fresh processes, taking turns in a rotated order each round, medians over the rounds:

  mt            mt-bench --iterations 1 --warmup 0: load (map, verify every checksum, decode, validate),
                plan, load + plan, peak RSS of the whole run (VmHWM: getrusage's maxrss would include
                what this script held when it started the process), and the plan's weight,
                packed-copy and arena bytes
  mt format 3   the same file re-sealed as format 3 (the multiply-rotate checksum of formats 1 to 3,
                tests/integration/mtfile.py): the load before the CRC32C-lanes checksum (format 4)
  PyTorch lite  torch.jit.mobile._load_for_lite_interpreter on the optimize_for_mobile model
                (scripts/compare_peers.py prepares it), timed inside a process that has imported torch
                already; its peak RSS includes the torch library

Every time is given in wall-clock time and in CPU time of the process (all threads; mt-bench's
load_cpu_ms and plan_cpu_ms), which other work on a shared machine hardly moves.

Loads read files from the page cache (each file is read once before the rounds): this measures the
work of loading, not the disk. Prints a markdown table (for docs/benchmarks.md).
"""
import argparse
import json
import pathlib
import statistics
import struct
import subprocess
import sys

sys.dont_write_bytecode = True
SCRIPTS = pathlib.Path(__file__).resolve().parent
ROOT = SCRIPTS.parent
sys.path.insert(0, str(SCRIPTS))
sys.path.insert(0, str(ROOT / "tests" / "integration"))
import compare_peers  # noqa: E402  (the model pipeline and the lite preparation)

LITE_WORKER = r"""
import json, sys, time
import torch
from torch.jit.mobile import _load_for_lite_interpreter
torch.set_num_threads(1)
start, cpu_start = time.perf_counter(), time.process_time()
module = _load_for_lite_interpreter(sys.argv[1])
load, load_cpu = time.perf_counter() - start, time.process_time() - cpu_start
hwm = next(int(line.split()[1]) * 1024 for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"load_ms": load * 1e3, "load_cpu_ms": load_cpu * 1e3, "peak_rss_bytes": hwm}))
"""


def log(message):
    print(f"[compare_startup] {message}", file=sys.stderr, flush=True)


def run_json(argv, timeout=600):
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{argv[0]}: {(done.stderr.strip().splitlines() or ['exit %d' % done.returncode])[-1]}")
    return json.loads(done.stdout)


def reseal_as_format3(src: pathlib.Path, out: pathlib.Path):
    import mtfile
    header, graph, data = mtfile.read(src)
    struct.pack_into("<I", header, 8, 3)
    mtfile.write(out, header, graph, data)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="mobilenet_v2,resnet50")
    parser.add_argument("--rounds", type=int, default=5, help="measurements per runner and model (default: %(default)s)")
    parser.add_argument("--mt-bin", help="directory with the mt tools (default: build/tools, then PATH)")
    parser.add_argument("--work", type=pathlib.Path, default=compare_peers.default_work_dir())
    parser.add_argument("--no-format3", action="store_true", help="skip the format-3 (old checksum) runner")
    parser.add_argument("--rebuild", action="store_true",
                        help="rebuild the mt models even where WORK/mt has them (do after changing mt-prepack)")
    args = parser.parse_args()
    models = [m for m in args.models.split(",") if m]
    tools = compare_peers.find_mt_tools(args.mt_bin)
    models_dir = args.work / "models"
    subprocess.run([sys.executable, str(SCRIPTS / "export_models.py"), "--only", ",".join(models), "--out", str(models_dir)],
                   check=True)
    files = {}
    for model in models:
        d = models_dir / model
        mt = args.work / "mt" / f"{model}.mt"
        mt.parent.mkdir(parents=True, exist_ok=True)
        if args.rebuild or not mt.exists():
            compare_peers.build_mt_model(compare_peers.mt_pipeline(tools), d / "model.onnx", d / "input.npy", mt)
        files[(model, "mt")] = mt
        if not args.no_format3:
            old = args.work / "mt" / f"{model}.format3.mt"
            if not old.exists() or old.stat().st_mtime < mt.stat().st_mtime:
                log(f"{model}: re-sealing as format 3 (pure Python, a minute for 100 MB)")
                reseal_as_format3(mt, old)
            files[(model, "mt-format3")] = old
        lite = args.work / "lite" / f"{model}.ptl"
        if not lite.exists():
            lite.parent.mkdir(parents=True, exist_ok=True)
            log(f"{model}: optimize_for_mobile -> {lite}")
            run_json([sys.executable, str(SCRIPTS / "compare_peers.py"), "--worker", "prepare-lite", "--model", model,
                      "--input", str(d / "input.npy"), "--output", str(lite), "--threads", "1"])
        files[(model, "torch-lite")] = lite
    for f in files.values():  # into the page cache, 1 MiB at a time
        with open(f, "rb") as stream:
            while stream.read(1 << 20):
                pass
    runners = [r for r in ("mt", "mt-format3", "torch-lite") if any(k[1] == r for k in files)]
    results = {}
    for round_ in range(args.rounds):
        for model in models:
            order = runners[round_ % len(runners):] + runners[:round_ % len(runners)]
            for runner in order:
                f = files[(model, runner)]
                if runner == "torch-lite":
                    r = run_json([sys.executable, "-c", LITE_WORKER, str(f)])
                else:
                    j = run_json([tools["mt-bench"], "--device", "cpu", "--threads", "1", "--iterations", "1",
                                  "--warmup", "0", "--format", "json", str(f)])
                    t = j["timing"]
                    r = {"load_ms": t["load_ms"], "plan_ms": t["plan_ms"], "load_cpu_ms": t["load_cpu_ms"],
                         "plan_cpu_ms": t["plan_cpu_ms"],
                         "peak_rss_bytes": j["memory"]["vm_hwm_bytes"], "file_bytes": j["model"]["file_bytes"],
                         "weight_bytes": j["memory"]["weight_bytes"],
                         "packed_weight_bytes": j["memory"]["packed_weight_bytes"], "arena_bytes": j["memory"]["arena_bytes"]}
                results.setdefault((model, runner), []).append(r)
        log(f"round {round_ + 1}/{args.rounds} done")

    def med(model, runner, key):
        values = [r[key] for r in results.get((model, runner), []) if r.get(key) is not None]
        return statistics.median(values) if values else None

    def ms(v):
        return "–" if v is None else f"{v:.1f}"

    def mb(v):
        return "–" if v is None else f"{v / 1e6:.0f}"

    with open("/proc/loadavg") as f:
        load = f.read().split()[0]
    print(f"Medians of {args.rounds} rounds, 1 thread, load average {load} at the end. Times in ms, wall clock and "
          f"(in parentheses) CPU time of the process; sizes in MB.\n")
    print("| model | PyTorch lite load | mt load, format 3 | mt load | mt plan | mt load + plan | / lite load | "
          "mt peak RSS | file | packed copies | arena |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for model in models:
        def both(runner, wall, cpu):
            return f"{ms(med(model, runner, wall))} ({ms(med(model, runner, cpu))})"
        lite, lite_cpu = med(model, "torch-lite", "load_ms"), med(model, "torch-lite", "load_cpu_ms")
        mt_runs = results[(model, "mt")]
        total = statistics.median([r["load_ms"] + r["plan_ms"] for r in mt_runs])
        total_cpu = statistics.median([r["load_cpu_ms"] + r["plan_cpu_ms"] for r in mt_runs])
        ratio = f"{total / lite:.2f}x ({total_cpu / lite_cpu:.2f}x)" if lite and lite_cpu else "–"
        print(f"| {model} | {both('torch-lite', 'load_ms', 'load_cpu_ms')} | {both('mt-format3', 'load_ms', 'load_cpu_ms')} | "
              f"{both('mt', 'load_ms', 'load_cpu_ms')} | {both('mt', 'plan_ms', 'plan_cpu_ms')} | {ms(total)} ({ms(total_cpu)}) | "
              f"{ratio} | {mb(med(model, 'mt', 'peak_rss_bytes'))} | {mb(med(model, 'mt', 'file_bytes'))} | "
              f"{mb(med(model, 'mt', 'packed_weight_bytes'))} | {mb(med(model, 'mt', 'arena_bytes'))} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
