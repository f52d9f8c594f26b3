#!/usr/bin/python3
"""ONNX's backend conformance suite through mt, as a new user would run it.

Every test directory of Debian's libonnx-testdata (node tests and model tests: model.onnx plus
test_data_set_N/{input,output}_K.pb) goes through `mt-convert`, then `mt-run` on reference and cpu,
and on vulkan when `mt-opnames --check vulkan` claims the model. Outputs are compared as ONNX's own
backend test runner does: same dtype and shape, np.testing.assert_allclose(rtol=1e-3, atol=1e-7) for
floats (NaN equal to NaN), exact equality otherwise.

Operands that mt needs at conversion (a Reshape's shape, Slice's starts, Resize's scales, TopK's K...)
are graph inputs in many node tests. mt plans static shapes, so a user pins such inputs to values at
conversion, as dimensions are fixed with --input-shape; this script does what that user does: when
mt-convert refuses a model (exit 4), it asks `mt-convert --list-value-inputs` which graph inputs the
conversion needs, converts again with `--input-value NAME=FILE.npy` for exactly those (the data set's
own arrays; a data set with other values converts again), and repeats while the listing names more
(an operand computed from a refused node's result is checked once that node converts). Only the
other inputs are fed to mt-run. Such a test's convert stage passes with "pinned: NAMES".

Each test is, per stage (convert, then each device):
  pass     the outputs match
  refused  mt exits with a documented error class (1..5); the first line of its error is the reason
  wrong    mt ran but an output differs (value, shape or dtype)
  crash    killed by a signal, an undocumented exit status, or a timeout
A wrong result, a crash, or a refusal that the expected-refusals file does not list fails the run, and
so does a listed refusal that no longer happens ("now passes: remove from the list"), so that the list
stays exact. Vulkan runs only what `mt-opnames --check vulkan` accepts; a check that accepts a model
the run then refuses is a refusal like any other.

Only the standard library, numpy and onnx (for reading the .pb tensors): one python process, the tools
run as subprocesses over --jobs workers.
"""

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

RTOL, ATOL = 1e-3, 1e-7
DOCUMENTED_EXIT = {1, 2, 3, 4, 5}  # mt(7): failure, usage, invalid input, unsupported, check failed
DEVICES = ("reference", "cpu", "vulkan")
STAGES = ("convert",) + DEVICES
TIMEOUT_S = 120
DEFAULT_DATA = "/usr/share/libonnx-testdata/data"
LAVAPIPE_ICD = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"


def first_error_line(stderr):
    """mt's one-line error ("mt-TOOL: error: MESSAGE" -> MESSAGE), else the last line of stderr."""
    for line in stderr.splitlines():
        if m := re.match(r"^mt-[a-z]+: (?:error|critical): (.*)", line):
            return m.group(1).strip()
    lines = [l.strip() for l in stderr.splitlines() if l.strip()]
    return lines[-1] if lines else "(no message)"


def run_tool(args, env=None):
    """(status, stderr, stdout); status None for a timeout."""
    try:
        proc = subprocess.run(args, capture_output=True, text=True, timeout=TIMEOUT_S, env=env)
        return proc.returncode, proc.stderr, proc.stdout
    except subprocess.TimeoutExpired:
        return None, f"timed out after {TIMEOUT_S} s", ""


def classify(status, stderr):
    """(outcome, reason) of a tool run that did not exit 0."""
    if status is None:
        return "crash", stderr
    if status < 0:
        return "crash", f"killed by {signal.Signals(-status).name}"
    if status in DOCUMENTED_EXIT:
        return "refused", f"exit {status}: {first_error_line(stderr)}"
    return "crash", f"undocumented exit status {status}: {first_error_line(stderr)}"


def compare(expected, actual):
    """None when `actual` matches as ONNX's runner requires, else why not."""
    if actual.dtype != expected.dtype:
        return f"dtype {actual.dtype}, expected {expected.dtype}"
    if actual.shape != expected.shape:
        return f"shape {actual.shape}, expected {expected.shape}"
    if expected.dtype.kind in "fc":
        try:
            np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL)
        except AssertionError:
            bad = ~np.isclose(actual, expected, rtol=RTOL, atol=ATOL, equal_nan=True)
            first = tuple(int(i) for i in np.argwhere(bad)[0])
            return (f"{int(np.count_nonzero(bad))} of {expected.size} values off, the first at {first}: "
                    f"{actual[first]!r}, expected {expected[first]!r}")
        return None
    if not np.array_equal(actual, expected):
        return f"{int(np.count_nonzero(actual != expected))} of {expected.size} values differ"
    return None


def read_tensor(path):
    tensor = onnx.TensorProto()
    tensor.ParseFromString(Path(path).read_bytes())
    return numpy_helper.to_array(tensor)


class Test:
    def __init__(self, directory, data_root):
        self.directory = Path(directory)
        self.name = str(self.directory.relative_to(data_root))
        self.data_sets = sorted(self.directory.glob("test_data_set_*"), key=lambda p: int(p.name.rsplit("_", 1)[1]))


def graph_signature(model):
    """The non-initializer inputs (name, ValueInfo) and the output names of a model."""
    initializers = {t.name for t in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in initializers]
    return inputs, [o.name for o in model.graph.output]


def shape_args(inputs, arrays, pinned):
    """--input-shape for every input whose declared shape is not static (pinned inputs take their value's)."""
    args = []
    for info, array in zip(inputs, arrays):
        tensor_type = info.type.tensor_type if info.type.HasField("tensor_type") else None
        if tensor_type is None or array is None or info.name in pinned:
            continue
        dims = tensor_type.shape.dim if tensor_type.HasField("shape") else None
        static = dims is not None and all(d.HasField("dim_value") for d in dims)
        if not static and array.ndim > 0:
            args += ["--input-shape", f"{info.name}:{','.join(str(d) for d in array.shape)}"]
    return args


def input_args(inputs, arrays, pinned, work, stem):
    """mt-convert's --input-shape and --input-value arguments (the pinned arrays saved as .npy in `work`)."""
    args = shape_args(inputs, arrays, pinned)
    for k, (info, array) in enumerate(zip(inputs, arrays)):
        if info.name in pinned:
            if array is None:
                raise RuntimeError(f"input {k} to pin is missing or not a tensor")
            path = work / f"{stem}_value_{k}.npy"
            np.save(path, array)
            args += ["--input-value", f"{info.name}={path}"]
    return args


def convert(model_path, inputs, arrays, pinned, work, output):
    """Runs mt-convert on one data set's inputs, pinning `pinned` to their arrays: (status, stderr)."""
    args = ["mt-convert", str(model_path), "-o", str(output)] + input_args(inputs, arrays, pinned, work, output.stem)
    status, stderr, _ = run_tool(args)
    return status, stderr.replace(f"{model_path}: ", "")


def convert_pinning(model_path, inputs, arrays, work, output):
    """Converts as a user does who meets refusals of run-time operands: after each refusal (exit 4), ask
    `mt-convert --list-value-inputs` (with the values pinned so far: a node computed from a refused one is
    checked once that converts) and pin what it lists, until it lists nothing new. (status, stderr, pinned)."""
    pinned = ()
    status, stderr = convert(model_path, inputs, arrays, pinned, work, output)
    while status == 4:
        args = ["mt-convert", "--list-value-inputs", str(model_path)] + input_args(inputs, arrays, pinned, work, "list")
        list_status, _, stdout = run_tool(args)
        needed = [name for name in stdout.split() if name not in pinned] if list_status == 0 else []
        if not needed:
            break
        pinned += tuple(needed)
        status, stderr = convert(model_path, inputs, arrays, pinned, work, output)
    return status, stderr, pinned


def data_key(inputs, arrays, pinned):
    """What makes a data set need its own conversion: its input shapes and its pinned values."""
    shapes = tuple(None if a is None else a.shape for a in arrays)
    values = tuple(arrays[k].tobytes() for k, info in enumerate(inputs) if info.name in pinned)
    return shapes, values


def run_test(test, work_root, devices, vulkan_env):
    """{stage: (outcome, reason)} for one test; stages after a refused conversion are absent."""
    result = {}
    work = Path(tempfile.mkdtemp(dir=work_root))
    try:
        model = onnx.load(str(test.directory / "model.onnx"), load_external_data=False)
        inputs, outputs = graph_signature(model)
        data = []  # per data set: (input arrays or None where unreadable, expected output arrays)
        for data_set in test.data_sets:
            arrays = []
            for k in range(len(inputs)):
                path = data_set / f"input_{k}.pb"
                try:
                    arrays.append(read_tensor(path) if path.exists() else None)
                except Exception:  # a sequence or optional, not a tensor: mt-convert refuses the model
                    arrays.append(None)
            expected = []
            for k in range(len(outputs)):
                try:
                    expected.append(read_tensor(data_set / f"output_{k}.pb"))
                except Exception:
                    expected.append(None)
            data.append((arrays, expected))
        if not data:
            return {"convert": ("refused", "no test_data_set (the test cannot be run)")}

        model_path = test.directory / "model.onnx"
        pinned = None  # the inputs pinned with --input-value, decided at the first conversion
        converted = {}  # input shapes and pinned values -> .mt path: other data sets convert again
        for index, (arrays, expected) in enumerate(data):
            if pinned is None:
                mt_path = work / "model0.mt"
                status, stderr, pinned = convert_pinning(model_path, inputs, arrays, work, mt_path)
                if status != 0:
                    result["convert"] = classify(status, stderr)
                    return result
                converted[data_key(inputs, arrays, pinned)] = mt_path
            key = data_key(inputs, arrays, pinned)
            if key not in converted:
                mt_path = work / f"model{len(converted)}.mt"
                status, stderr = convert(model_path, inputs, arrays, pinned, work, mt_path)
                if status != 0:
                    result["convert"] = classify(status, stderr)
                    return result
                converted[key] = mt_path
            result.setdefault("convert", ("pass", f"pinned: {', '.join(pinned)}" if pinned else ""))
            mt_path = converted[key]
            npy_dir = work / f"set{index}"
            npy_dir.mkdir()
            run_args = []
            for k, (info, array) in enumerate(zip(inputs, arrays)):
                if info.name in pinned:
                    continue  # a constant of the converted model
                if array is None:  # the harness's limit, not mt's: reported as a crash of the test
                    raise RuntimeError(f"input {k} of data set {index} is missing or not a tensor")
                np.save(npy_dir / f"input_{k}.npy", array)
                run_args += ["-i", f"{info.name}={npy_dir}/input_{k}.npy"]
            for k, name in enumerate(outputs):
                run_args += ["-o", f"{name}={npy_dir}/output_{k}.npy"]
            for device in devices:
                if result.get(device, ("pass",))[0] != "pass":
                    continue  # a data set already failed on this device
                env = None
                if device == "vulkan":
                    env = vulkan_env
                    status, stderr, stdout = run_tool(["mt-opnames", "--check", "vulkan", str(mt_path)], env)
                    if status == 4:  # the first node vulkan does not take: NAME, op, why
                        result[device] = ("unclaimed", " ".join((stdout.splitlines() or [""])[0].split("\t")[1:]))
                        continue
                    if status != 0:
                        result[device] = classify(status, stderr)
                        continue
                for k in range(len(outputs)):
                    (npy_dir / f"output_{k}.npy").unlink(missing_ok=True)
                status, stderr, _ = run_tool(["mt-run", "-q", "--device", device, str(mt_path)] + run_args, env)
                if status != 0:
                    result[device] = classify(status, stderr)
                    continue
                problems = []
                for k, (name, want) in enumerate(zip(outputs, expected)):
                    got = np.load(npy_dir / f"output_{k}.npy")
                    why = "unreadable expected output" if want is None else compare(want, got)
                    if why:
                        problems.append(f"output '{name}': {why}")
                result[device] = ("wrong", f"data set {index}: " + "; ".join(problems)) if problems else ("pass", "")
        return result
    finally:
        shutil.rmtree(work, ignore_errors=True)


SECTION_RE = re.compile(r"^\[(.+)\]\s*$")
KNOWN_WRONG = "known wrong"  # sections named so list wrong results, the others refusals


def expected_outcome(expected, name, stage):
    """What the list says a stage of a test does: "refused", "wrong" or None (pass)."""
    entry = expected.get((name, stage))
    if entry is None:
        return None
    return "wrong" if entry[0].startswith(KNOWN_WRONG) else "refused"


def read_expected(path):
    """{(test, stage): (section, reason)} from the expected-refusals file.

    Lines: `TEST STAGE REASON...` (STAGE: convert, reference, cpu or vulkan), grouped under `[SECTION]`
    headers; `#` starts a comment line. Entries under a section whose name starts with "known wrong"
    are results known to be wrong (with the reason); all others are refusals.
    """
    expected, section = {}, ""
    for number, line in enumerate(Path(path).read_text().splitlines(), 1):
        line = line.rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if m := SECTION_RE.match(line):
            section = m.group(1)
            continue
        parts = line.split(None, 2)
        if len(parts) < 3 or parts[1] not in STAGES:
            sys.exit(f"{path}:{number}: expected 'TEST STAGE REASON' with STAGE one of {', '.join(STAGES)}: {line}")
        if (parts[0], parts[1]) in expected:
            sys.exit(f"{path}:{number}: {parts[0]} {parts[1]} is listed twice")
        expected[(parts[0], parts[1])] = (section, parts[2])
    return expected


def vulkan_environment(require):
    """The environment for vulkan runs (lavapipe unless VK_ICD_FILENAMES is set), or None without a device."""
    env = dict(os.environ)
    if not env.get("VK_ICD_FILENAMES") and Path(LAVAPIPE_ICD).exists():
        env["VK_ICD_FILENAMES"] = LAVAPIPE_ICD
    status, stdout = 1, ""
    try:
        proc = subprocess.run(["mt-run", "--list-devices"], capture_output=True, text=True, env=env, timeout=60)
        status, stdout = proc.returncode, proc.stdout
    except subprocess.TimeoutExpired:
        pass
    lines = stdout.splitlines()
    if status == 0 and "vulkan" in lines and not any(l.startswith("  unavailable:") for l in lines):
        return env
    why = next((l.strip() for l in lines if l.startswith("  unavailable:")), "this mt has no vulkan backend")
    if require:
        sys.exit(f"onnx_conformance: --require-vulkan but no Vulkan device ({why})")
    print(f"onnx_conformance: skipping vulkan: {why}", file=sys.stderr)
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    root = Path(__file__).resolve().parent.parent
    parser.add_argument("--tools", default=str(root / "build" / "tools"), help="directory of the mt tools")
    parser.add_argument("--data", default=DEFAULT_DATA, help="libonnx-testdata's data directory")
    parser.add_argument("--expected", default=str(root / "tests" / "conformance" / "expected_refusals.txt"),
                        help="the expected-refusals file")
    parser.add_argument("--jobs", type=int, default=2, help="tests run in parallel")
    parser.add_argument("--filter", default="", help="only tests whose name matches this regular expression")
    parser.add_argument("--devices", default=",".join(DEVICES), help="comma-separated devices to run on")
    parser.add_argument("--require-vulkan", action="store_true", help="fail without a Vulkan device instead of skipping it")
    parser.add_argument("--json", action="store_true", help="print one JSON object (tests and totals) instead of text")
    parser.add_argument("--list-refusals", action="store_true",
                        help="print today's refusals in the expected-refusals format (to edit the list) and exit 0")
    args = parser.parse_args()

    os.environ["PATH"] = f"{Path(args.tools).resolve()}{os.pathsep}{os.environ['PATH']}"
    for tool in ("mt-convert", "mt-run", "mt-opnames"):
        if not shutil.which(tool):
            sys.exit(f"onnx_conformance: {tool} not found in {args.tools} (build first, or give --tools)")
    data_root = Path(args.data)
    tests = [Test(p.parent, data_root) for p in sorted(data_root.glob("*/*/model.onnx"))]
    tests = [t for t in tests if re.search(args.filter, t.name)]
    if not tests:
        sys.exit(f"onnx_conformance: no tests in {data_root} (install libonnx-testdata) matching '{args.filter}'")
    devices = [d for d in args.devices.split(",") if d]
    for d in devices:
        if d not in DEVICES:
            sys.exit(f"onnx_conformance: --devices: unknown device '{d}' (devices: {', '.join(DEVICES)})")
    vulkan_env = vulkan_environment(args.require_vulkan) if "vulkan" in devices else None
    if "vulkan" in devices and vulkan_env is None:
        devices.remove("vulkan")
    expected = read_expected(args.expected)

    start = time.monotonic()
    results = {}
    with tempfile.TemporaryDirectory(prefix="mt-conformance-") as work_root:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futures = {pool.submit(run_test, t, work_root, devices, vulkan_env): t for t in tests}
            for future in concurrent.futures.as_completed(futures):
                test = futures[future]
                try:
                    results[test.name] = future.result()
                except Exception as e:  # the harness itself, not mt: report it as a crash of the test
                    results[test.name] = {"convert": ("crash", f"harness: {type(e).__name__}: {e}")}
    seconds = time.monotonic() - start

    if args.list_refusals:
        for name in sorted(results):
            for stage in STAGES:
                outcome, reason = results[name].get(stage, ("", ""))
                if outcome == "refused":
                    print(f"{name} {stage} {reason}")
        return 0

    # Verdicts: what fails the run.
    failures = []
    for name in sorted(results):
        for stage in STAGES:
            outcome, reason = results[name].get(stage, (None, ""))
            want = expected_outcome(expected, name, stage)
            if outcome in ("wrong", "crash", "refused") and outcome != want:
                listed = "" if want is None else f" (listed as {want})"
                failures.append(f"{name} {stage}: {outcome}, and not in the expected list{listed}: {reason}")
    selected = {t.name for t in tests}
    for (name, stage) in sorted(expected):
        if stage != "convert" and stage not in devices:
            continue
        if name not in selected:
            if not args.filter:
                failures.append(f"{name} {stage}: listed, but there is no such test in {data_root}")
            continue
        outcome = results[name].get(stage, (None,))[0]
        if outcome != expected_outcome(expected, name, stage):
            failures.append(f"{name} {stage}: now {outcome or 'not reached'}: remove it from {args.expected}")

    totals = {"tests": len(results), "seconds": round(seconds, 1), "converted": 0, "pinned": 0, "by_section": {}}
    for stage in STAGES:
        totals[stage] = {}
    for name, stages in results.items():
        if stages.get("convert", ("",))[0] == "pass":
            totals["converted"] += 1
            totals["pinned"] += stages["convert"][1].startswith("pinned")
        for stage, (outcome, reason) in stages.items():
            totals[stage][outcome] = totals[stage].get(outcome, 0) + 1
            if outcome in ("refused", "wrong"):
                section = expected.get((name, stage), ("not listed", ""))[0]
                totals["by_section"][section] = totals["by_section"].get(section, 0) + 1

    if args.json:
        print(json.dumps({"tests": {n: {s: {"outcome": o, "reason": r} for s, (o, r) in results[n].items()}
                                    for n in sorted(results)},
                          "totals": totals, "failures": failures}, indent=1))
    else:
        for name in sorted(results):
            cells = []
            for stage in STAGES:
                if stage in results[name]:
                    outcome, reason = results[name][stage]
                    cells.append(f"{stage} {outcome}" + (f" ({reason})" if reason else ""))
            print(f"{name}: " + "; ".join(cells))
        print(f"\n{len(results)} tests in {seconds:.0f} s; converted {totals['converted']} "
              f"({totals['pinned']} with inputs pinned by --input-value)")
        for stage in DEVICES:
            if totals[stage]:
                print(f"  {stage}: " + ", ".join(f"{k} {v}" for k, v in sorted(totals[stage].items())))
        print("  refusals and known wrong results (test stages) by section of the list:")
        for section, count in sorted(totals["by_section"].items()):
            print(f"    {count:4}  {section}")
        for failure in failures:
            print(f"FAIL: {failure}")
        print(f"{'FAILED' if failures else 'ok'}: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
