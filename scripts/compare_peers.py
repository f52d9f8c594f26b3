#!/usr/bin/python3
"""Benchmarks mt side by side with its peers on the same machine, in one session, and writes
docs/benchmarks.md (a table of medians and ratios) and docs/benchmarks.png (a chart).

Runners, each timing the same model with the same input (input.npy of scripts/export_models.py):
  torch-lite       PyTorch Mobile's lite interpreter on the model after optimize_for_mobile (fp32)
  torch-lite-int8  the same with qnnpack int8, where torchvision has a quantizable model
                   (torchvision.models.quantization: fuse, prepare, calibrate, convert)
  onnxruntime      ONNX Runtime's CPU execution provider on the same ONNX file, through the npm
                   package onnxruntime-node (installed here with npm install --ignore-scripts)
  onnxruntime-int8 ONNX Runtime on the QDQ export of the same torchvision model quantized by PyTorch
                   (scripts/mt_models/quantized.py: qnnpack qconfig, image-like calibration)
  mt-int8-qdq      mt on that same QDQ file: mt-convert (which imports its scales) | mt-fuse | mt-prepack
  mt               the mt pipeline that exists in the build: mt-convert | mt-fuse | mt-prepack
                   (each step when its tool is built), then mt-bench --device cpu --format json
  mt-int8          mt-convert | mt-fuse | mt-quantize --calibration input.npy | mt-prepack of the
                   fp32 model, on the cpu backend's own AVX512-VNNI int8 kernels where the CPU has them
  mt-int8-xnnpack  the int8 model prepacked with --cpu avx2, run with MT_CPU_INT8_VNNI=0 (XNNPACK's int8
                   operators)

Every table row also gives the model's operation count (mt-bench --profile: 2 per multiply-add)
as GOPS at 1 thread for the fp32 and int8 runners. A start-up table (and the chart's last panel) gives
each fp32 runner's time before its first inference at 1 thread: PyTorch lite's load, ONNX Runtime's
session creation, mt's load + plan, with their peak RSS.

Every runner is a separate process timing a warm-up and then a fixed number of runs; the table
shows medians. For each model and thread count the runners go in a rotated order, so slow drifts
of the machine (other load, heat) fall on all of them alike. With --rounds N the whole sequence runs
N times; the table then shows the median of the rounds' medians, and a 2-thread speedup is the
median of the rounds' own 1-thread / 2-thread ratios (each round measures both back to back). Around
each multi-threaded run the core-to-core round trip is probed (scripts/core_round_trip.c, built
with cc into the work directory): on a VM the host may place the two vCPUs of a 2-thread run far
apart, which slows every multi-threaded runner alike; the speedup table gives the median over every
round and over the rounds whose multi-threaded run had its round trip near the session's lowest. With --cpu-time every
1-thread runner is also measured in CPU time per inference, which other load on the machine hardly
moves. Speedups need long runs on a shared VM: 30 runs of a 0.3 ms model last 10 ms, and one
hiccup of the host moves their median (ShuffleNetV2 int8's 2-thread speedup read 1.74 from 30 runs and
1.82 from 300); docs/benchmarks.md's tables use --warmup 30 --iterations 300. Not a test: no thresholds.

    /usr/bin/python3 scripts/compare_peers.py --mt-bin build/tools
    /usr/bin/python3 scripts/compare_peers.py --models resnet18 --threads 1 --iterations 10
    /usr/bin/python3 scripts/compare_peers.py --models mobilenet_v2,resnet18 --cpu-time \
        --runners onnxruntime,onnxruntime-int8,mt,mt-int8,mt-int8-xnnpack
    chrt -f 10 /usr/bin/python3 scripts/compare_peers.py --rounds 5 --threads 1,2 \
        --runners onnxruntime-int8,mt-int8-qdq,mt-int8,mt-int8-xnnpack,mt
    chrt -f 10 /usr/bin/python3 scripts/compare_peers.py --threads 1,2 --rounds 5 --warmup 30 \
        --iterations 300 --runners onnxruntime,mt,onnxruntime-int8,mt-int8   # docs/benchmarks.md
"""
import argparse
import datetime
import json
import os
import pathlib
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import time

sys.dont_write_bytecode = True
SCRIPTS = pathlib.Path(__file__).resolve().parent
ROOT = SCRIPTS.parent

MODELS = ["mobilenet_v2", "mobilenet_v3_large", "resnet18", "resnet50", "efficientnet_b0", "shufflenet_v2_x1_0",
          "squeezenet1_1", "deeplabv3_mobilenet_v3_large_520"]  # DeepLabV3 at 520x520, the size its users run
# torchvision.models.quantization has these (with fuse_model() and qnnpack support).
QUANTIZABLE = {"mobilenet_v2", "mobilenet_v3_large", "resnet18", "resnet50", "shufflenet_v2_x1_0"}  # = quantized.QUANTIZABLE
RUNNERS = ["torch-lite", "torch-lite-int8", "onnxruntime", "onnxruntime-int8", "mt", "mt-int8", "mt-int8-xnnpack",
           "mt-int8-qdq"]
LABELS = {"torch-lite": "PyTorch lite fp32", "torch-lite-int8": "PyTorch lite qnnpack int8",
          "onnxruntime": "ONNX Runtime (CPU)", "onnxruntime-int8": "ONNX Runtime int8 (QDQ)", "mt": "mt cpu",
          "mt-int8": "mt cpu int8", "mt-int8-xnnpack": "mt cpu int8 XNNPACK", "mt-int8-qdq": "mt cpu int8 (QDQ file)"}
# Models with a QDQ export (scripts/mt_models/quantized.py QUANTIZABLE and FX_QUANTIZED): the files of the
# onnxruntime-int8 and mt-int8-qdq runners.
QDQ = {"mobilenet_v2", "mobilenet_v3_large", "resnet18", "resnet50", "shufflenet_v2_x1_0", "efficientnet_b0"}
MT_INT8_RUNNERS = ("mt-int8", "mt-int8-xnnpack")  # the mt-quantize model
MT_QDQ_RUNNER = "mt-int8-qdq"
ORT_PACKAGE = "onnxruntime-node@1.30.0"
CALIBRATION_BATCHES = 4


def log(message: str) -> None:
    print(f"compare_peers: {message}", file=sys.stderr, flush=True)


def default_work_dir() -> pathlib.Path:
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(cache) / "mt-compare-peers"


# ---------------------------------------------------------------------------------------------
# Workers: each runs in its own process and prints one JSON object {"samples_ms": [...], ...}.

def torch_module(name: str):
    """The torchvision model export_models.py exports (same seed, BatchNorm re-estimated), as
    a float eval() module returning a tensor."""
    import torch
    import torchvision
    from mt_models.common import seed_for
    from mt_models.vision import SegmentationOutput, network_and_size, reestimate_batchnorm
    seed = seed_for(name)
    torch.manual_seed(seed)
    network, size = network_and_size(name)
    if network.startswith(("deeplabv3", "lraspp")):
        factory = getattr(torchvision.models.segmentation, network)
        model = SegmentationOutput(factory(weights=None, weights_backbone=None, aux_loss=False))
    else:
        model = getattr(torchvision.models, network)(weights=None)
    reestimate_batchnorm(model, seed, size)
    return model.eval()


def quantized_module(name: str, threads: int):
    """torchvision's quantizable variant, fused, calibrated on image-like inputs and converted
    to int8 for the qnnpack engine (scripts/mt_models/quantized.py, the same module the QDQ exports use)."""
    from mt_models.quantized import quantized_module as build
    return build(name)


def worker_prepare_lite(args) -> dict:
    """Traces the model, runs optimize_for_mobile and saves it for the lite interpreter."""
    import numpy as np
    import torch
    from torch.utils.mobile_optimizer import optimize_for_mobile
    torch.set_num_threads(args.threads)
    x = torch.from_numpy(np.load(args.input))
    model = quantized_module(args.model, args.threads) if args.int8 else torch_module(args.model)
    with torch.no_grad():
        traced = torch.jit.trace(model, x, check_trace=False)
    optimized = optimize_for_mobile(traced)
    optimized._save_for_lite_interpreter(str(args.output))
    return {"saved": str(args.output)}


def worker_torch_lite(args) -> dict:
    import numpy as np
    import torch
    from torch.jit.mobile import _load_for_lite_interpreter
    torch.set_num_threads(args.threads)
    if args.int8:
        torch.backends.quantized.engine = "qnnpack"
    start, cpu_start = time.perf_counter(), time.process_time()  # start-up: the load, torch imported already
    module = _load_for_lite_interpreter(str(args.model_file))
    startup = {"startup_ms": (time.perf_counter() - start) * 1e3, "startup_cpu_ms": (time.process_time() - cpu_start) * 1e3}
    x = torch.from_numpy(np.load(args.input))
    with torch.no_grad():
        start = time.perf_counter()
        module(x)
        first = time.perf_counter() - start
        for _ in range(args.warmup):
            module(x)
        samples = []
        for _ in range(args.iterations):
            start = time.perf_counter()
            module(x)
            samples.append((time.perf_counter() - start) * 1e3)
    hwm = next(int(line.split()[1]) * 1024 for line in open("/proc/self/status") if line.startswith("VmHWM:"))
    return {"samples_ms": samples, "first_ms": first * 1e3, "version": torch.__version__, **startup,
            "peak_rss_bytes": hwm}


def run_worker(args) -> int:
    sys.path.insert(0, str(SCRIPTS))
    work = {"prepare-lite": worker_prepare_lite, "torch-lite": worker_torch_lite}[args.worker]
    print(json.dumps(work(args)))
    return 0


# ---------------------------------------------------------------------------------------------
# ONNX Runtime through node.

ORT_SCRIPT = r"""
// Times one ONNX model on onnxruntime-node's CPU provider: node ort_bench.js MODEL INPUT.npy NAME THREADS WARMUP N
const fs = require('fs');
const ort = require('onnxruntime-node');

function readNpy(path) {  // float32, C order, version 1.0 or 2.0 (what numpy.save writes)
  const buf = fs.readFileSync(path);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12) + headerLen;
  const header = buf.toString('latin1', major === 1 ? 10 : 12, start);
  if (!header.includes("'<f4'") || header.includes("'fortran_order': True")) throw new Error(path + ': not a C-order float32 array');
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(',').filter(s => s.trim()).map(Number);
  const data = new Float32Array(buf.buffer.slice(buf.byteOffset + start, buf.byteOffset + buf.length));
  return new ort.Tensor('float32', data, shape);
}

async function main() {
  const [model, input, name, threads, warmup, iterations] = process.argv.slice(2);
  // Start-up: session creation (the file read, graph optimisations, kernels and weights prepared).
  const startWall = process.hrtime.bigint(), startCpu = process.cpuUsage();
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'], intraOpNumThreads: Number(threads), interOpNumThreads: 1,
    executionMode: 'sequential', graphOptimizationLevel: 'all'});
  const startupCpu = process.cpuUsage(startCpu);
  const startup = {startup_ms: Number(process.hrtime.bigint() - startWall) / 1e6,
                   startup_cpu_ms: (startupCpu.user + startupCpu.system) / 1e3};
  const feeds = {[name]: readNpy(input)};
  let t = process.hrtime.bigint();
  await session.run(feeds);
  const first = Number(process.hrtime.bigint() - t) / 1e6;
  for (let i = 0; i < Number(warmup); ++i) await session.run(feeds);
  const samples = [];
  for (let i = 0; i < Number(iterations); ++i) {
    t = process.hrtime.bigint();
    await session.run(feeds);
    samples.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  console.log(JSON.stringify({samples_ms: samples, first_ms: first, version: ort.env.versions.node, ...startup,
                              peak_rss_bytes: process.resourceUsage().maxRSS * 1024}));
}
main().catch(e => { console.error(e.message); process.exit(1); });
"""


def install_onnxruntime(work: pathlib.Path):
    """npm install --ignore-scripts into WORK/npm; returns the bench script, or a reason it is unavailable.
    The package ships its CPU binaries (bin/napi-v*/linux/x64); the post-install step only fetches
    optional GPU providers, so skipping it loses nothing here."""
    npm = shutil.which("npm")
    node = shutil.which("node")
    if npm is None or node is None:
        return None, "node/npm not installed"
    prefix = work / "npm"
    prefix.mkdir(parents=True, exist_ok=True)
    package_dir = prefix / "node_modules" / "onnxruntime-node"
    if not (package_dir / "package.json").exists():
        log(f"npm install --ignore-scripts {ORT_PACKAGE} into {prefix}")
        done = subprocess.run([npm, "install", "--ignore-scripts", "--no-audit", "--no-fund", "--prefix", str(prefix),
                               ORT_PACKAGE], capture_output=True, text=True)
        if done.returncode != 0:
            return None, f"npm install failed: {done.stderr.strip().splitlines()[-1:]}"
    arch = {"x86_64": "x64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
    binaries = list(package_dir.glob(f"bin/napi-v*/linux/{arch}/onnxruntime_binding.node"))
    if not binaries:
        return None, f"onnxruntime-node has no native binary for linux/{arch} in its npm tarball"
    script = prefix / "ort_bench.js"
    script.write_text(ORT_SCRIPT)
    return script, None


# ---------------------------------------------------------------------------------------------
# mt.

def find_mt_tools(mt_bin):
    """The mt tools to use: from --mt-bin, else build/tools, else PATH. mt-convert and mt-bench are
    required; mt-fuse and mt-prepack join the pipeline when built."""
    dirs = [pathlib.Path(mt_bin)] if mt_bin else [ROOT / "build" / "tools"]
    tools = {}
    for tool in ("mt-convert", "mt-fuse", "mt-quantize", "mt-prepack", "mt-bench"):
        found = next((str(d / tool) for d in dirs if (d / tool).is_file() and os.access(d / tool, os.X_OK)), None)
        tools[tool] = found or shutil.which(tool)
    missing = [t for t in ("mt-convert", "mt-bench") if tools[t] is None]
    if missing:
        sys.exit(f"compare_peers: {', '.join(missing)} not found (build mt, or give --mt-bin DIR)")
    return tools


def mt_pipeline(tools, int8: bool = False, cpu: str = None) -> list:
    """The steps that build an mt model from {onnx}; int8 adds mt-quantize calibrated on {input}; cpu is
    mt-prepack's --cpu (default: this machine's kernels)."""
    steps = [[tools["mt-convert"], "{onnx}"]]
    if tools["mt-fuse"]:
        steps.append([tools["mt-fuse"]])
    if int8:
        steps.append([tools["mt-quantize"], "--calibration", "{input}"])
    if tools["mt-prepack"]:
        steps.append([tools["mt-prepack"], "--backend", "cpu"] + (["--cpu", cpu] if cpu else []))
    return steps


def build_mt_model(steps, onnx_path: pathlib.Path, input_path: pathlib.Path, out: pathlib.Path) -> None:
    """Runs the pipeline as a shell would (each step reads the previous one's stdout)."""
    procs = []
    stdin = None
    with open(out.with_suffix(".tmp"), "wb") as sink:
        for i, step in enumerate(steps):
            argv = [a.replace("{onnx}", str(onnx_path)).replace("{input}", str(input_path)) for a in step]
            last = i == len(steps) - 1
            p = subprocess.Popen(argv, stdin=stdin, stdout=sink if last else subprocess.PIPE, stderr=subprocess.PIPE)
            if stdin is not None:
                stdin.close()
            stdin = p.stdout
            procs.append((argv, p))
        for argv, p in procs:
            _, err = p.communicate()
            if p.returncode != 0:
                raise RuntimeError(f"{os.path.basename(argv[0])} exited {p.returncode}: {err.decode().strip()[-300:]}")
    out.with_suffix(".tmp").rename(out)


# ---------------------------------------------------------------------------------------------

def run_json(argv, timeout: int, env=None) -> dict:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                          env=None if env is None else {**os.environ, **env})
    if done.returncode != 0:
        reason = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        raise RuntimeError(reason[:300])
    return json.loads(done.stdout)


def load_average() -> str:
    """The 1-minute load average: other work on the machine skews every runner, multi-threaded ones most."""
    try:
        return open("/proc/loadavg").read().split()[0]
    except OSError:
        return "unknown"


def round_trip_probe(work: pathlib.Path):
    """A function returning the core-to-core round trip in ns (scripts/core_round_trip.c), or None where
    it cannot be built or run (no C compiler, a single CPU)."""
    binary = work / "core_round_trip"
    source = SCRIPTS / "core_round_trip.c"
    if not binary.exists() or binary.stat().st_mtime < source.stat().st_mtime:
        compiler = shutil.which("cc") or shutil.which("gcc")
        if compiler is None or subprocess.run([compiler, "-O2", "-pthread", str(source), "-o", str(binary)],
                                              capture_output=True).returncode != 0:
            log("core_round_trip.c could not be built: rounds are not told apart by vCPU placement")
            return lambda: None

    def probe():
        try:
            done = subprocess.run([str(binary)], capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            return None
        return float(done.stdout) if done.returncode == 0 and done.stdout.strip() else None
    return probe


def machine_facts() -> dict:
    cpu = "unknown"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    os_name = platform.system()
    try:
        for line in open("/etc/os-release"):
            if line.startswith("PRETTY_NAME="):
                os_name = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "os": os_name, "kernel": f"{platform.system()} {platform.release()}",
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "load": load_average()}


def git_describe() -> str:
    done = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"], capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated names (default: %(default)s)")
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts (default: %(default)s)")
    parser.add_argument("--warmup", type=int, default=3, help="unmeasured runs per runner (default: %(default)s)")
    parser.add_argument("--iterations", type=int, default=20, help="measured runs per runner (default: %(default)s)")
    parser.add_argument("--runners", default=",".join(RUNNERS), help="subset of %(default)s")
    parser.add_argument("--mt-bin", help="directory with the mt tools (default: build/tools, then PATH)")
    parser.add_argument("--work", type=pathlib.Path, default=default_work_dir(),
                        help="cache of exported models, lite models and the npm package (default: %(default)s)")
    parser.add_argument("--out-md", type=pathlib.Path, default=ROOT / "docs" / "benchmarks.md")
    parser.add_argument("--out-png", type=pathlib.Path, default=ROOT / "docs" / "benchmarks.png")
    parser.add_argument("--timeout", type=int, default=900, help="seconds allowed per runner invocation")
    parser.add_argument("--rounds", type=int, default=1,
                        help="repeat every measurement this many times, interleaved (default: %(default)s)")
    parser.add_argument("--cpu-time", action="store_true",
                        help="also measure each runner's CPU time per inference at 1 thread (3 more pairs of runs; "
                             "robust where other work loads the machine)")
    # Worker mode (used by the script itself).
    parser.add_argument("--worker", choices=("prepare-lite", "torch-lite"), help=argparse.SUPPRESS)
    parser.add_argument("--model", help=argparse.SUPPRESS)
    parser.add_argument("--model-file", help=argparse.SUPPRESS)
    parser.add_argument("--input", help=argparse.SUPPRESS)
    parser.add_argument("--output", help=argparse.SUPPRESS)
    parser.add_argument("--int8", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        args.threads = int(args.threads)
        return args
    args.models = [m for m in args.models.split(",") if m]
    args.threads = [int(t) for t in args.threads.split(",") if t]
    args.runners = [r for r in args.runners.split(",") if r]
    unknown = [r for r in args.runners if r not in RUNNERS]
    if unknown:
        parser.error(f"--runners: unknown {unknown}; choose from {RUNNERS}")
    if args.cpu_time and args.iterations <= 2:
        parser.error("--cpu-time needs --iterations above 2")
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    return args


class Session:
    """Prepared artefacts per model and the measurements, keyed (model, threads, runner)."""

    def __init__(self, args):
        self.args = args
        self.work = args.work
        self.models_dir = self.work / "models"
        self.results = {}
        self.notes = {}  # runner -> why it is missing, when it is missing for every model
        self.failures = {}  # (model, runner) -> reason

    def export_models(self):
        names = list(self.args.models)
        if "onnxruntime-int8" in self.args.runners or MT_QDQ_RUNNER in self.args.runners:
            names += [f"{m}_qdq" for m in self.args.models if m in QDQ]
        log(f"exporting {', '.join(names)} into {self.models_dir} (skips models already current)")
        subprocess.run([sys.executable, str(SCRIPTS / "export_models.py"), "--only", ",".join(names),
                        "--out", str(self.models_dir)], check=True)

    def self_worker(self, *extra) -> list:
        return [sys.executable, str(pathlib.Path(__file__).resolve()), *extra]

    def prepare(self, tools, ort_script):
        self.lite = {}
        self.mt_models = {}
        pipeline = mt_pipeline(tools) if "mt" in self.args.runners else []
        int8 = any(r in self.args.runners for r in MT_INT8_RUNNERS)
        if int8 and not tools.get("mt-quantize"):
            int8 = False
            for r in MT_INT8_RUNNERS:
                self.notes[r] = "mt-quantize not built"
        self.mt_ops = {}  # model -> operations of one inference (mt-bench --profile), for GOPS
        for model in self.args.models:
            d = self.models_dir / model
            for runner, lite_int8 in (("torch-lite", False), ("torch-lite-int8", True)):
                if runner not in self.args.runners or (lite_int8 and model not in QUANTIZABLE):
                    continue
                out = self.work / "lite" / f"{model}{'.int8' if lite_int8 else ''}.ptl"
                out.parent.mkdir(parents=True, exist_ok=True)
                stamp = d / "stamp"
                if not out.exists() or out.stat().st_mtime < stamp.stat().st_mtime:
                    log(f"{model}: optimize_for_mobile{' + qnnpack int8' if lite_int8 else ''} -> {out.name}")
                    try:
                        run_json(self.self_worker("--worker", "prepare-lite", "--model", model, "--input",
                                                  str(d / "input.npy"), "--output", str(out), "--threads", "2",
                                                  *(["--int8"] if lite_int8 else [])), self.args.timeout)
                    except (RuntimeError, subprocess.TimeoutExpired) as e:
                        self.failures[(model, runner)] = f"preparation failed: {e}"
                        continue
                self.lite[(model, runner)] = out
            if pipeline:
                out = self.work / "mt" / f"{model}.mt"
                out.parent.mkdir(parents=True, exist_ok=True)
                try:
                    build_mt_model(pipeline, d / "model.onnx", d / "input.npy", out)  # always rebuilt: the tools may have changed
                    self.mt_models[model] = out
                    self.mt_ops[model] = self.count_ops(tools, out)
                except (RuntimeError, subprocess.TimeoutExpired) as e:
                    self.failures[(model, "mt")] = f"pipeline failed: {e}"
            if MT_QDQ_RUNNER in self.args.runners and model in QDQ:
                out = self.work / "mt" / f"{model}.qdq.mt"
                out.parent.mkdir(parents=True, exist_ok=True)
                try:  # the same file ONNX Runtime runs, through the fp32 pipeline (mt-convert imports its scales)
                    build_mt_model(mt_pipeline(tools), self.models_dir / f"{model}_qdq" / "model.onnx", d / "input.npy",
                                   out)
                    self.mt_models[(model, MT_QDQ_RUNNER)] = out
                except (RuntimeError, subprocess.TimeoutExpired) as e:
                    self.failures[(model, MT_QDQ_RUNNER)] = f"pipeline failed: {e}"
            if int8:
                out = self.work / "mt" / f"{model}.int8.mt"
                out.parent.mkdir(parents=True, exist_ok=True)
                try:
                    build_mt_model(mt_pipeline(tools, int8=True), d / "model.onnx", d / "input.npy", out)
                    for r in MT_INT8_RUNNERS:
                        self.mt_models[(model, r)] = out
                    if "mt-int8-xnnpack" in self.args.runners:  # int8 weights in XNNPACK's order, not packed for VNNI
                        xnnpack = out.with_suffix(".xnnpack.mt")
                        build_mt_model(mt_pipeline(tools, int8=True, cpu="avx2"), d / "model.onnx", d / "input.npy",
                                       xnnpack)
                        self.mt_models[(model, "mt-int8-xnnpack")] = xnnpack
                    if self.mt_ops.get(model) is None:
                        self.mt_ops[model] = self.count_ops(tools, out)
                except (RuntimeError, subprocess.TimeoutExpired) as e:
                    for r in MT_INT8_RUNNERS:
                        self.failures[(model, r)] = f"pipeline failed: {e}"
        self.tools = tools
        self.ort_script = ort_script

    def count_ops(self, tools, model_file: pathlib.Path):
        """Operations of one inference: the sum of mt-bench --profile's per-node FLOP counts (2 per
        multiply-add; the same count for the fp32 and int8 models of a network)."""
        report = run_json([tools["mt-bench"], str(model_file), "--device", "cpu", "--warmup", "0", "--iterations",
                           "1", "--profile", "--format", "json", "-q"], self.args.timeout)
        return sum(n.get("flops") or 0 for n in report["profile"]["nodes"]) or None

    def measure(self, model: str, threads: int, runner: str, iterations: int = 0):
        a = self.args
        iterations = iterations or a.iterations
        d = self.models_dir / model
        if runner in ("torch-lite", "torch-lite-int8"):
            if (model, runner) not in self.lite:
                return None
            return run_json(self.self_worker("--worker", "torch-lite", "--model-file", str(self.lite[(model, runner)]),
                                             "--input", str(d / "input.npy"), "--threads", str(threads), "--warmup",
                                             str(a.warmup), "--iterations", str(iterations),
                                             *(["--int8"] if runner == "torch-lite-int8" else [])), a.timeout)
        if runner == "onnxruntime":
            if self.ort_script is None:
                return None
            input_name = json.loads((d / "info.json").read_text())["input"]["name"]
            return run_json(["node", str(self.ort_script), str(d / "model.onnx"), str(d / "input.npy"), input_name,
                             str(threads), str(a.warmup), str(iterations)], a.timeout)
        if runner == "onnxruntime-int8":
            q = self.models_dir / f"{model}_qdq"
            if self.ort_script is None or model not in QDQ:
                return None
            input_name = json.loads((q / "info.json").read_text())["input"]["name"]
            return run_json(["node", str(self.ort_script), str(q / "model.onnx"), str(d / "input.npy"), input_name,
                             str(threads), str(a.warmup), str(iterations)], a.timeout)
        if runner in ("mt", MT_QDQ_RUNNER) + MT_INT8_RUNNERS:
            key = model if runner == "mt" else (model, runner)
            if key not in self.mt_models:
                return None
            report = run_json([self.tools["mt-bench"], str(self.mt_models[key]), "--device", "cpu", "--threads",
                               str(threads), "--warmup", str(a.warmup), "--iterations", str(iterations),
                               "--input", f"{d / 'input.npy'}", "--format", "json", "-q"], a.timeout,
                              env={"MT_CPU_INT8_VNNI": "0"} if runner == "mt-int8-xnnpack" else None)
            t = report["timing"]
            return {"samples_ms": t["latency_ms"]["samples"], "first_ms": t["first_inference_ms"],
                    "version": report["tool"]["git_describe"], "peak_rss_bytes": report["memory"]["peak_rss_bytes"],
                    "startup_ms": t["load_ms"] + t["plan_ms"], "startup_cpu_ms": t["load_cpu_ms"] + t["plan_cpu_ms"]}
        raise AssertionError(runner)

    def cpu_per_inference(self, model: str, runner: str) -> float:
        """CPU time (user + system) of one inference at 1 thread: the runner's CPU time over
        --iterations runs minus that over 2 runs, divided by the difference (loading, planning and
        warm-up cancel out). Unlike latency it hardly depends on other load on the machine."""
        def cpu_of(iterations):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            self.measure(model, 1, runner, iterations)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        samples = [(cpu_of(self.args.iterations) - cpu_of(2)) / (self.args.iterations - 2) * 1e3 for _ in range(3)]
        return statistics.median(samples)

    def run_all(self):
        order = list(self.args.runners)
        self.round_loads = []  # the 1-minute load average as each round starts, and after the last
        probe = round_trip_probe(self.work) if any(t > 1 for t in self.args.threads) else (lambda: None)
        k = 0
        for round_index in range(self.args.rounds):
            self.round_loads.append(load_average())
            for model in self.args.models:
                for threads in self.args.threads:
                    rotated = order[k % len(order):] + order[:k % len(order)]
                    k += 1
                    for runner in rotated:
                        if (model, runner) in self.failures:
                            continue
                        try:
                            # A multi-threaded run between two probes of the cores' placement: the host
                            # moves the vCPUs within seconds, so a probe per run, not per round.
                            before = probe() if threads > 1 else None
                            result = self.measure(model, threads, runner)
                            after = probe() if threads > 1 else None
                        except (RuntimeError, subprocess.TimeoutExpired, json.JSONDecodeError, KeyError) as e:
                            self.failures[(model, runner)] = str(e)
                            log(f"{model} x{threads} {runner}: FAILED: {e}")
                            continue
                        if result is None:
                            continue
                        result["median_ms"] = statistics.median(result["samples_ms"])
                        trips = [t for t in (before, after) if t is not None]
                        if self.args.cpu_time and threads == 1:
                            result["cpu_ms"] = self.cpu_per_inference(model, runner)
                        self.record(model, threads, runner, result, max(trips) if trips else None)
                        log(f"round {round_index + 1}/{self.args.rounds}: {model} x{threads} {runner}: median "
                            f"{result['median_ms']:.2f} ms")
        self.round_loads.append(load_average())

    def record(self, model: str, threads: int, runner: str, result: dict, round_trip_ns):
        """Keeps one round's result; over several rounds, median_ms (and cpu_ms) become the median of the
        rounds' values, which stay listed in round_medians (round_cpu_ms), each round's core round trip
        (None: not probed) in round_trips_ns."""
        kept = self.results.setdefault((model, threads, runner),
                                       {**result, "round_medians": [], "round_cpu_ms": [], "round_trips_ns": []})
        kept["round_medians"].append(result["median_ms"])
        kept["round_trips_ns"].append(round_trip_ns)
        kept["median_ms"] = statistics.median(kept["round_medians"])
        if "cpu_ms" in result:
            kept["round_cpu_ms"].append(result["cpu_ms"])
            kept["cpu_ms"] = statistics.median(kept["round_cpu_ms"])


def ratio_cell(value, base):
    return f"{value / base:.2f}" if value is not None and base else "–"


def write_markdown(session: Session, facts: dict, pipeline_note: str, versions: dict, path: pathlib.Path):
    a = session.args
    runners = [r for r in RUNNERS if r in a.runners]
    lines = [
        "# mt and its peers: latency on one machine",
        "",
        f"Written by `scripts/compare_peers.py` on {facts['date']}. Machine: {facts['cpu']}, {facts['cores']} cores, "
        f"{facts['os']}, {facts['kernel']}. Medians of {a.iterations} runs after {a.warmup} warm-up run"
        f"{'s' if a.warmup != 1 else ''} (and a first, untimed inference), batch 1, "
        "224x224 inputs (NAME_520: 520x520; the models and inputs of `scripts/export_models.py`, random weights "
        "with re-estimated BatchNorm statistics). Times in milliseconds; a ratio is the runner's median over PyTorch lite fp32's "
        "(below 1 is faster). The runners took turns in a rotated order for each model and thread count. "
        f"Load average (1 min) {session.load_before} before the measurements and {facts['load']} after: other work "
        "on the machine slows every runner, and multi-threaded runs most.",
        "",
        "Runners:",
        "",
        f"- **PyTorch lite fp32**: torch {versions.get('torch', '?')}, `torch.jit.trace` + `optimize_for_mobile`, "
        "`_load_for_lite_interpreter`, `torch.set_num_threads(N)`.",
        "- **PyTorch lite qnnpack int8**: torchvision's quantizable model (`quantize=False`), `fuse_model`, qnnpack "
        f"qconfig, {CALIBRATION_BATCHES} calibration batches, `convert`, then as above (only where torchvision has a "
        "quantizable model).",
        f"- **ONNX Runtime (CPU)**: onnxruntime-node {versions.get('onnxruntime', '?')} (npm, installed with "
        "`--ignore-scripts`; its CPU library ships in the npm tarball), the same ONNX files, "
        "`intraOpNumThreads = N`, sequential execution, all graph optimisations.",
        f"- **mt cpu**: mt {versions.get('mt', '?')}, pipeline `{pipeline_note}`, then `mt-bench --device cpu "
        "--threads N`.",
        "- **ONNX Runtime int8 (QDQ)**: the same runtime on the QDQ export of torchvision's quantizable model "
        "quantized by PyTorch (qnnpack qconfig, calibrated on image-like inputs; `scripts/mt_models/quantized.py`), "
        "uint8 activations and per-channel int8 weights, where such an export exists.",
        "- **mt cpu int8**: the fp32 pipeline with `mt-quantize --calibration input.npy` before `mt-prepack`, run "
        "on the cpu backend's own AVX512-VNNI int8 kernels (`kernels/cpu/engines/int8_vnni.h`) where the CPU has them; "
        "**mt cpu int8 XNNPACK**: the int8 model prepacked with `--cpu avx2` and run with `MT_CPU_INT8_VNNI=0` "
        "(XNNPACK's qs8/qc8 operators).",
        "- **mt cpu int8 (QDQ file)**: the file ONNX Runtime int8 runs, through `mt-convert` (which imports its "
        "scales) `| mt-fuse | mt-prepack --backend cpu`.",
        "",
    ]
    for runner, reason in session.notes.items():
        lines += [f"Not measured: **{LABELS[runner]}**: {reason}.", ""]
    header = ["model", "threads"] + [LABELS[r] for r in runners] + \
             [f"{LABELS[r]} / PyTorch lite" for r in runners if r != "torch-lite"]
    lines += ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] * 2 + ["---:"] * (len(header) - 2)) + "|"]
    for model in a.models:
        for threads in a.threads:
            medians = {r: session.results.get((model, threads, r), {}).get("median_ms") for r in runners}
            base = medians.get("torch-lite")
            cells = [model, str(threads)]
            for r in runners:
                if medians[r] is not None:
                    cells.append(f"{medians[r]:.2f}")
                elif (model, r) in session.failures:
                    cells.append("failed")
                else:
                    cells.append("–")
            cells += [ratio_cell(medians[r], base) for r in runners if r != "torch-lite"]
            lines.append("| " + " | ".join(cells) + " |")
    lines += int8_table(session)
    lines += speedup_table(session)
    lines += startup_table(session)
    failures = sorted(session.failures.items())
    if failures:
        lines += ["", "Failures:", ""]
        lines += [f"- {model}, {LABELS[runner]}: {reason}" for (model, runner), reason in failures]
    lines += ["", "![median latency per model](benchmarks.png)", ""]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines))


def int8_table(session: Session) -> list:
    """int8 against ONNX Runtime int8 (on the same QDQ file, and mt-quantize's own model), against mt's own
    fp32 and XNNPACK int8 path, the 2-thread speedups, and GOPS."""
    a = session.args
    if not any(r in a.runners for r in MT_INT8_RUNNERS + (MT_QDQ_RUNNER,)):
        return []

    def median(model, threads, runner):
        return session.results.get((model, threads, runner), {}).get("median_ms")

    def ms(v):
        return f"{v:.2f}" if v is not None else "–"

    def gops(model, v):
        ops = session.mt_ops.get(model)
        return f"{ops / v / 1e6:.0f}" if ops and v else "–"

    def speedup(model, threads, runner):
        """The 1-thread time over this thread count's: the median of the rounds' own ratios."""
        one = session.results.get((model, 1, runner), {}).get("round_medians", [])
        many = session.results.get((model, threads, runner), {}).get("round_medians", [])
        ratios = [x / y for x, y in zip(one, many) if y]
        return f"{statistics.median(ratios):.2f}" if ratios and threads != 1 else "–"

    loads = ", ".join(getattr(session, "round_loads", []))
    lines = ["", "### int8", "",
             "mt int8 against ONNX Runtime int8: on PyTorch's QDQ export of the network (the same file in both "
             "runtimes: mt-convert imports its scales), and mt-quantize's own int8 model of the fp32 export; against "
             "mt's own fp32 and its XNNPACK int8 path (`MT_CPU_INT8_VNNI=0`). GOPS = operations of one inference "
             "(2 per multiply-add, from `mt-bench --profile`) over the median. Speedup: the 1-thread median over "
             f"this thread count's ({a.rounds} round{'s' if a.rounds != 1 else ''}: the median of the rounds' ratios). "
             f"Load average (1 min) as each round started, and at the end: {loads}.", "",
             "| model | threads | ONNX Runtime int8 | mt int8, same QDQ file | mt int8 (mt-quantize) | mt int8 XNNPACK "
             "| mt fp32 | QDQ file: mt / ORT | mt int8 / ORT int8 | mt int8 / mt fp32 | mt int8 / XNNPACK path | "
             "ORT int8 speedup | mt QDQ speedup | mt int8 speedup | GOPS mt int8 | GOPS mt fp32 |",
             "|---|---|" + "---:|" * 14]
    for model in a.models:
        for threads in a.threads:
            ort, qdq = median(model, threads, "onnxruntime-int8"), median(model, threads, MT_QDQ_RUNNER)
            mine, xnn = median(model, threads, "mt-int8"), median(model, threads, "mt-int8-xnnpack")
            fp32 = median(model, threads, "mt")
            lines.append(f"| {model} | {threads} | {ms(ort)} | {ms(qdq)} | {ms(mine)} | {ms(xnn)} | {ms(fp32)} | "
                         f"{ratio_cell(qdq, ort)} | {ratio_cell(mine, ort)} | {ratio_cell(mine, fp32)} | "
                         f"{ratio_cell(mine, xnn)} | {speedup(model, threads, 'onnxruntime-int8')} | "
                         f"{speedup(model, threads, MT_QDQ_RUNNER)} | {speedup(model, threads, 'mt-int8')} | "
                         f"{gops(model, mine)} | {gops(model, fp32)} |")
    if not a.cpu_time:
        return lines

    def cpu(model, runner):
        return session.results.get((model, 1, runner), {}).get("cpu_ms")

    lines += ["", "CPU time per inference at 1 thread (`--cpu-time`: user + system time of N runs minus that of 2, "
              "over N - 2; median of 3), in ms: unlike latency it hardly moves with other load on the machine.", "",
              "| model | ONNX Runtime int8 | mt int8 XNNPACK | mt int8 | mt fp32 | ONNX Runtime fp32 | "
              "mt int8 / ORT int8 | mt int8 / mt fp32 | mt int8 / XNNPACK path | GOPS mt int8 |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for model in a.models:
        ort, xnn, mine = cpu(model, "onnxruntime-int8"), cpu(model, "mt-int8-xnnpack"), cpu(model, "mt-int8")
        fp32, ort32 = cpu(model, "mt"), cpu(model, "onnxruntime")
        lines.append(f"| {model} | {ms(ort)} | {ms(xnn)} | {ms(mine)} | {ms(fp32)} | {ms(ort32)} | "
                     f"{ratio_cell(mine, ort)} | {ratio_cell(mine, fp32)} | {ratio_cell(mine, xnn)} | "
                     f"{gops(model, mine)} |")
    return lines


NEAR_ROUND_TRIP = 2.5  # near: a round trip at most this times the session's lowest (near ~70-130 ns here, far 250-800)


def speedup_table(session: Session) -> list:
    """Each runner's speedup at every thread count above 1 (the 1-thread median over this one's): the median of
    the rounds' own ratios over every round, and over the rounds whose multi-threaded run had its cores near."""
    a = session.args
    many = [t for t in a.threads if t > 1]
    if 1 not in a.threads or not many:
        return []
    known = [t for (_, threads, _), v in session.results.items() if threads > 1
             for t in v.get("round_trips_ns", []) if t is not None]
    lowest = min(known) if known else None
    lines = ["", "### Threads", "",
             "Speedup of N threads over 1: the median of the rounds' own ratios (each round runs both back to back), "
             "over every round, then over the rounds whose N-thread run had its cores near: the core-to-core round "
             "trip (`scripts/core_round_trip.c`, probed right before and after each multi-threaded run; the larger "
             f"counts) within {NEAR_ROUND_TRIP}x of the session's lowest"
             + (f" ({lowest:.0f} ns)" if lowest else " (not probed here: no C compiler)") +
             ". On a VM the host moves the vCPUs between near and far placements within seconds, which slows "
             "every multi-threaded runner alike. Per round: the ratio, and the round trip in ns.", "",
             "| model | runner | threads | speedup, every round | speedup, near rounds | per round |",
             "|---|---|---|---:|---:|---|"]
    for model in a.models:
        for runner in [r for r in RUNNERS if r in a.runners]:
            one = session.results.get((model, 1, runner), {}).get("round_medians", [])
            for threads in many:
                result = session.results.get((model, threads, runner), {})
                pairs = [(x / y, t) for x, y, t in zip(one, result.get("round_medians", []),
                                                        result.get("round_trips_ns", [])) if y]
                if not pairs:
                    continue
                ratios = [r for r, _ in pairs]
                close = [r for r, t in pairs if t is not None and lowest is not None and t <= NEAR_ROUND_TRIP * lowest]
                rounds = " ".join(f"{r:.2f} ({'?' if t is None else f'{t:.0f}'})" for r, t in pairs)
                lines.append(f"| {model} | {LABELS[runner]} | {threads} | {statistics.median(ratios):.2f} | "
                             f"{f'{statistics.median(close):.2f} ({len(close)} of {len(ratios)})' if close else '–'} | "
                             f"{rounds} |")
    return lines


STARTUP_RUNNERS = ("torch-lite", "onnxruntime", "mt")  # fp32: what each pays before its first inference
STARTUP_WHAT = {"torch-lite": "`_load_for_lite_interpreter` (torch imported already)",
                "onnxruntime": "`InferenceSession.create`", "mt": "load + plan (`mt-bench`: map, verify, decode; plan)"}


def startup_table(session: Session) -> list:
    """Start-up at 1 thread: the time before the first inference can start, and the peak RSS of the
    whole run, one run per runner (scripts/compare_startup.py takes medians over rounds)."""
    a = session.args
    runners = [r for r in STARTUP_RUNNERS if r in a.runners]
    if 1 not in a.threads or "mt" not in runners:
        return []

    def get(model, runner, key):
        return session.results.get((model, 1, runner), {}).get(key)

    def ms(model, runner):
        wall, cpu = get(model, runner, "startup_ms"), get(model, runner, "startup_cpu_ms")
        return f"{wall:.1f} ({cpu:.1f})" if wall is not None and cpu is not None else "–"

    def mb(model, runner):
        v = get(model, runner, "peak_rss_bytes")
        return f"{v / 1e6:.0f}" if v else "–"

    lines = ["", "### Start-up", "",
             "Before the first inference, 1 thread, in ms of wall-clock time and (in parentheses) CPU time of the "
             "process: " + "; ".join(f"{LABELS[r]}: {STARTUP_WHAT[r]}" for r in runners) + ". Peak RSS of the "
             "whole run in MB (PyTorch's includes the torch library, ONNX Runtime's node). One run each; "
             "`scripts/compare_startup.py` takes medians.", "",
             "| model | " + " | ".join(LABELS[r] for r in runners) + " | " +
             " | ".join(f"mt / {LABELS[r]}" for r in runners if r != "mt") + " | " +
             " | ".join(f"RSS {LABELS[r]}" for r in runners) + " |",
             "|---|" + "---:|" * (2 * len(runners) + len(runners) - 1)]
    for model in a.models:
        mine = get(model, "mt", "startup_ms")
        lines.append(f"| {model} | " + " | ".join(ms(model, r) for r in runners) + " | " +
                     " | ".join(ratio_cell(mine, get(model, r, "startup_ms")) for r in runners if r != "mt") + " | " +
                     " | ".join(mb(model, r) for r in runners) + " |")
    return lines


def startup_panel(ax, session: Session):
    """Start-up at 1 thread per model and runner, in ms on a log scale (they differ by orders of magnitude)."""
    runners = [r for r in STARTUP_RUNNERS if r in session.args.runners]
    models = session.args.models
    width = 0.8 / len(runners)
    for i, r in enumerate(runners):
        xs, ys = [], []
        for m, model in enumerate(models):
            value = session.results.get((model, 1, r), {}).get("startup_ms")
            if value:
                xs.append(m + (i - (len(runners) - 1) / 2) * width)
                ys.append(value)
        ax.bar(xs, ys, width, label=f"{LABELS[r]}: {STARTUP_WHAT[r].split(' (')[0].strip('`')}")
    ax.set_yscale("log")
    ax.set_xticks(range(len(models)))
    ax.set_xticklabels([m.replace("_", "_\n", 1) if len(m) > 18 else m for m in models], fontsize=8)
    ax.set_ylabel("start-up, ms (log)")
    ax.set_title("Start-up before the first inference, 1 thread (lower is faster)", fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")


PEER_RUNNERS = ("torch-lite", "torch-lite-int8", "onnxruntime", "onnxruntime-int8")
CHART_CAP = 3.0  # ratios above this are drawn at the cap and labelled with their value


def best_peer(session: Session, model: str, threads: int):
    """The fastest peer (not mt) measured for this model and thread count: (runner, median ms), or None."""
    medians = [(session.results[(model, threads, r)]["median_ms"], r) for r in PEER_RUNNERS
               if (model, threads, r) in session.results]
    return (min(medians)[1], min(medians)[0]) if medians else None


def write_chart(session: Session, facts: dict, path: pathlib.Path):
    """Bars of each runner's median relative to the best peer's for the same model and thread count (1 =
    as fast as the fastest of PyTorch lite and ONNX Runtime; lower is faster), one panel per thread count;
    the tick labels name that peer and its median in ms. A relative scale per model keeps one pathological
    runner (PyTorch lite at 2 threads on a shared machine takes seconds) from flattening every other bar:
    ratios above CHART_CAP are drawn hatched at the cap with their value written on the bar. Without a peer
    (--runners), mt fp32 is the baseline instead."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    a = session.args
    runners = [r for r in RUNNERS if r in a.runners]
    any_peer = any(r in PEER_RUNNERS for r in runners)
    startup = bool(startup_table(session))  # a last panel: start-up
    fig, axes = plt.subplots(len(a.threads) + startup, 1, figsize=(11, 3.8 * (len(a.threads) + startup)), squeeze=False)
    width = 0.8 / len(runners)
    for row, threads in enumerate(a.threads):
        ax = axes[row][0]
        base = {}  # model -> (baseline runner, its median)
        for model in a.models:
            if any_peer:
                base[model] = best_peer(session, model, threads)
            else:
                median = session.results.get((model, threads, "mt"), {}).get("median_ms")
                base[model] = ("mt", median) if median else None
        top = 1.0
        for i, r in enumerate(runners):
            xs, ys = [], []
            for m, model in enumerate(a.models):
                value = session.results.get((model, threads, r), {}).get("median_ms")
                if value is not None and base[model]:
                    xs.append(m + (i - (len(runners) - 1) / 2) * width)
                    ys.append(value / base[model][1])
            bars = ax.bar(xs, [min(y, CHART_CAP) for y in ys], width, label=LABELS[r])
            for bar, y in zip(bars, ys):
                if y > CHART_CAP:
                    bar.set_hatch("//")
                    ax.text(bar.get_x() + bar.get_width() / 2, CHART_CAP, f"{y:.0f}x", ha="center", va="bottom",
                            fontsize=7, rotation=90)
            top = max([top] + [min(y, CHART_CAP) for y in ys])
        ax.set_ylim(0, top * 1.35)  # room for the legend and the capped bars' labels above the bars
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks(range(len(a.models)))
        names = [m.replace("_", "_\n", 1) if len(m) > 18 else m for m in a.models]  # long names on two lines
        short = {"torch-lite": "lite", "torch-lite-int8": "lite int8", "onnxruntime": "ORT", "onnxruntime-int8": "ORT int8",
                 "mt": "mt"}
        ax.set_xticklabels([f"{n}\n({short[base[m][0]]} {base[m][1]:.1f} ms)" if base[m] else n
                            for n, m in zip(names, a.models)], fontsize=7)
        ax.set_ylabel("median / best peer's" if any_peer else f"median / {LABELS['mt']}")
        ax.set_title(f"{threads} thread{'s' if threads != 1 else ''}", fontsize=10)
        ax.grid(axis="y", alpha=0.3)
        if row == 0:
            ax.legend(fontsize=8, ncol=len(runners), loc="upper left")
    if startup:
        startup_panel(axes[-1][0], session)
    baseline = "the fastest peer (PyTorch lite, ONNX Runtime)" if any_peer else LABELS["mt"]
    fig.suptitle(f"Median latency relative to {baseline} per model (lower is faster), batch 1: "
                 f"{facts['cpu']}, {facts['date'][:10]}", fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def main() -> int:
    args = parse_args()
    if args.worker:
        return run_worker(args)
    start = time.monotonic()
    session = Session(args)
    args.work.mkdir(parents=True, exist_ok=True)
    session.export_models()

    tools = find_mt_tools(args.mt_bin) if any(r in ("mt", MT_QDQ_RUNNER) + MT_INT8_RUNNERS for r in args.runners) else {}
    pipeline_note = " | ".join(os.path.basename(step[0]) + (" --backend cpu" if "mt-prepack" in step[0] else "")
                               for step in mt_pipeline(tools)) if tools else "not run"
    ort_script = None
    if any(r in ("onnxruntime", "onnxruntime-int8") for r in args.runners):
        ort_script, reason = install_onnxruntime(args.work)
        if ort_script is None:
            session.notes["onnxruntime"] = reason
            log(f"ONNX Runtime unavailable: {reason}")
    session.prepare(tools, ort_script)
    session.load_before = load_average()
    session.run_all()

    versions = {"mt": git_describe()}
    for (model, threads, runner), result in session.results.items():
        key = {"torch-lite": "torch", "torch-lite-int8": "torch", "onnxruntime": "onnxruntime",
               "onnxruntime-int8": "onnxruntime"}.get(runner)
        if key:
            versions[key] = result.get("version", "?")
    facts = machine_facts()
    raw = {"machine": facts, "versions": versions, "pipeline": pipeline_note,
           "results": [{"model": m, "threads": t, "runner": r, **v} for (m, t, r), v in session.results.items()],
           "failures": [{"model": m, "runner": r, "reason": why} for (m, r), why in session.failures.items()]}
    (args.work / "results.json").write_text(json.dumps(raw, indent=1))
    write_markdown(session, facts, pipeline_note, versions, args.out_md)
    write_chart(session, facts, args.out_png)
    log(f"wrote {args.out_md}, {args.out_png} and {args.work / 'results.json'} in {time.monotonic() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
