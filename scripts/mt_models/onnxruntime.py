"""ONNX Runtime as a reference and a peer: installs the npm package onnxruntime-node into a cache outside the
repository (its CPU library ships in the tarball, so `npm install --ignore-scripts` is enough) and runs a model
on it through scripts/ort_run.js. One implementation for tests, comparisons and benchmarks.

    from mt_models import onnxruntime
    outputs = onnxruntime.run("model.onnx", {"input": x})          # {output name: np.ndarray}

As a command (for shell tests):

    /usr/bin/python3 scripts/mt_models/onnxruntime.py MODEL.onnx --input input=x.npy --out DIR
      writes DIR/<K>.npy for the K-th output and prints the output names, one per line
"""
import argparse
import json
import os
import pathlib
import platform
import shutil
import subprocess
import sys
import tempfile

import numpy as np

PACKAGE = "onnxruntime-node@1.30.0"
RUNNER = pathlib.Path(__file__).resolve().parent.parent / "ort_run.js"


class Unavailable(RuntimeError):
    """onnxruntime-node cannot be installed or run here (no node/npm, no registry, no binary for this CPU)."""


def cache_dir() -> pathlib.Path:
    """Where the package is installed: $MT_ORT_CACHE, else ${XDG_CACHE_HOME:-~/.cache}/mt-onnxruntime."""
    if os.environ.get("MT_ORT_CACHE"):
        return pathlib.Path(os.environ["MT_ORT_CACHE"])
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(cache) / "mt-onnxruntime"


def install(prefix: pathlib.Path = None) -> pathlib.Path:
    """Installs onnxruntime-node (once) and returns its node_modules directory. Raises Unavailable."""
    prefix = prefix or cache_dir()
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        raise Unavailable("node and npm are needed for onnxruntime-node (Debian packages nodejs, npm)")
    package_dir = prefix / "node_modules" / "onnxruntime-node"
    if not (package_dir / "package.json").exists():
        prefix.mkdir(parents=True, exist_ok=True)
        print(f"onnxruntime: npm install --ignore-scripts {PACKAGE} into {prefix}", file=sys.stderr, flush=True)
        done = subprocess.run([npm, "install", "--ignore-scripts", "--no-audit", "--no-fund", "--prefix", str(prefix),
                               PACKAGE], capture_output=True, text=True)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
            raise Unavailable(f"npm install {PACKAGE} failed: {last}")
    arch = {"x86_64": "x64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
    if not list(package_dir.glob(f"bin/napi-v*/linux/{arch}/onnxruntime_binding.node")):
        raise Unavailable(f"onnxruntime-node has no native binary for linux/{arch} in its npm tarball")
    return prefix / "node_modules"


def version() -> str:
    return json.loads((install() / "onnxruntime-node" / "package.json").read_text())["version"]


def run(model, feeds: dict, threads: int = 1, timeout: int = 600) -> dict:
    """Runs MODEL (a path) once with FEEDS {input name: np.ndarray}; returns {output name: np.ndarray} in the
    graph's output order. Raises Unavailable, or RuntimeError with onnxruntime's message."""
    modules = install()
    with tempfile.TemporaryDirectory(prefix="mt-ort-") as tmp:
        args = []
        for k, (name, value) in enumerate(feeds.items()):
            file = pathlib.Path(tmp) / f"in{k}.npy"
            np.save(file, np.ascontiguousarray(value))
            args.append(f"{name}={file}")
        out = pathlib.Path(tmp) / "out"
        done = subprocess.run(["node", str(RUNNER), str(model), str(out), str(threads), *args], capture_output=True,
                              text=True, timeout=timeout, env={**os.environ, "NODE_PATH": str(modules)})
        if done.returncode != 0:
            raise RuntimeError(done.stderr.strip() or f"ort_run.js exited {done.returncode}")
        names = json.loads(done.stdout)["outputs"]
        return {name: np.load(out / f"{k}.npy") for k, name in enumerate(names)}


def main() -> int:
    parser = argparse.ArgumentParser(description="Runs an ONNX model once on onnxruntime-node (CPU).")
    parser.add_argument("model")
    parser.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy")
    parser.add_argument("--out", required=True, help="directory for <K>.npy, the K-th output")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    feeds = {}
    for item in args.input:
        name, sep, file = item.partition("=")
        if not sep:
            parser.error(f"--input {item}: expected NAME=FILE.npy")
        feeds[name] = np.load(file)
    try:
        outputs = run(args.model, feeds, args.threads)
    except (Unavailable, RuntimeError) as e:
        print(f"onnxruntime: {e}", file=sys.stderr)
        return 1
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for k, (name, value) in enumerate(outputs.items()):
        np.save(out / f"{k}.npy", value)
        print(name)
    return 0


if __name__ == "__main__":
    sys.dont_write_bytecode = True
    sys.exit(main())
