#!/usr/bin/python3
"""Exports the models mt is tested and benchmarked with: torchvision networks (random weights, BatchNorm
statistics re-estimated on image-like inputs) and small op_<what>_opset<N> graphs covering ops and opsets the
torchvision models do not produce; keyword spotters (nn.LSTM, nn.GRU) over MFCC-like frames
(scripts/mt_models/speech.py); and, as their own set (--set qdq), pre-quantized QDQ exports of torchvision's
quantizable models (scripts/mt_models/quantized.py), whose expected output is PyTorch's own int8 execution; and,
as --set multi_input, models with several inputs (a text encoder: token ids and an attention mask).

For each model NAME it writes OUT/NAME/model.onnx, input.npy (float32, seeded), expected.npy (the PyTorch fp32
output for that input, or the numpy reference for graphs built with onnx.helper) and info.json (input and
output name/shape/dtype, opset, ONNX op types, how it was made); a multi_input model also input_NAME.npy for
each further input, listed in info.json's "extra_inputs". A model whose stamp matches this script's
code is skipped, so re-running is cheap and a changed script re-exports. Progress goes to stderr.

    /usr/bin/python3 scripts/export_models.py --set ci --out build/testdata
    /usr/bin/python3 scripts/export_models.py --only resnet50,op_gelu_opset13 --out /tmp/models
"""
import argparse
import hashlib
import json
import os
import pathlib
import shutil
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree clean when run from it
SCRIPTS = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(SCRIPTS))

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import torch  # noqa: E402
import torchvision  # noqa: E402

from mt_models import onnx_reference  # noqa: E402
from mt_models.common import INPUT_NAME, OUTPUT_NAME, Spec  # noqa: E402
from mt_models.detection import detection_specs  # noqa: E402
from mt_models.families import family_specs  # noqa: E402
from mt_models.op_models import op_specs  # noqa: E402
from mt_models.quantized import quantized_specs  # noqa: E402
from mt_models.speech import speech_specs  # noqa: E402
from mt_models.text import text_specs  # noqa: E402
from mt_models.vision import vision_specs  # noqa: E402

FILES = ("model.onnx", "input.npy", "expected.npy", "info.json")
STAMP = "stamp"


def catalogue():
    specs = vision_specs() + family_specs() + detection_specs() + quantized_specs() + op_specs() + speech_specs() + \
        text_specs()
    names = [s.name for s in specs]
    duplicates = {n for n in names if names.count(n) > 1}
    assert not duplicates, f"duplicate model names: {sorted(duplicates)}"
    return specs


def code_stamp() -> str:
    """Hash of the code that defines the exports plus the library versions that run them."""
    h = hashlib.sha256()
    for path in [pathlib.Path(__file__).resolve()] + sorted((SCRIPTS / "mt_models").glob("*.py")):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    h.update(f"torch {torch.__version__} torchvision {torchvision.__version__} onnx {onnx.__version__} "
             f"numpy {np.__version__}".encode())
    return h.hexdigest()


def is_current(directory: pathlib.Path, stamp: str) -> bool:
    try:
        if (directory / STAMP).read_text().strip() != stamp or not all((directory / f).is_file() for f in FILES):
            return False
        extra = json.loads((directory / "info.json").read_text()).get("extra_inputs", [])
        return all((directory / f"input_{i['name']}.npy").is_file() for i in extra)
    except (OSError, ValueError):
        return False


def value_info(graph_values, name):
    for v in graph_values:
        if v.name == name:
            dims = v.type.tensor_type.shape.dim
            dtype = onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[v.type.tensor_type.elem_type]
            return {"name": name, "shape": [d.dim_value if d.HasField("dim_value") else d.dim_param for d in dims],
                    "dtype": str(np.dtype(dtype))}
    raise AssertionError(f"graph has no value named {name}")


def validate(spec: Spec, built) -> dict:
    """Checks the exported graph (ONNX checker + shape inference, one static input and output whose shapes
    agree with the arrays) and returns info.json's content."""
    model = built.model
    onnx.checker.check_model(model)
    inferred = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    graph = inferred.graph
    initializers = {i.name for i in graph.initializer}
    inputs = [i for i in graph.input if i.name not in initializers]
    assert [i.name for i in inputs] == [INPUT_NAME] + list(built.extra_inputs), f"{spec.name}: inputs {[i.name for i in inputs]}"
    assert spec.kind == "multi_input" or not built.extra_inputs, f"{spec.name}: several inputs, but kind {spec.kind}"
    assert [o.name for o in graph.output] == [OUTPUT_NAME], f"{spec.name}: outputs {[o.name for o in graph.output]}"
    opsets = {o.domain: o.version for o in model.opset_import}
    assert opsets.get("", opsets.get("ai.onnx")) == spec.opset, f"{spec.name}: opset {opsets} != {spec.opset}"
    info_in = value_info(graph.input, INPUT_NAME)
    info_out = value_info(graph.output, OUTPUT_NAME)
    for what, info, array in (("input", info_in, built.input), ("output", info_out, built.expected)):
        declared = info["shape"]
        assert len(declared) == array.ndim and all(d == n for d, n in zip(declared, array.shape) if isinstance(d, int)), \
            f"{spec.name}: {what} shape {declared} != {array.shape}"
        if declared != list(array.shape):
            # Some exports (e.g. Pad with computed pads) leave the output dims symbolic: keep the file as the
            # exporter wrote it and record the real shape, which a converter infers from the static input.
            info["declared_shape"] = declared
            info["shape"] = list(array.shape)
        allowed = ("float32", "int64") if spec.kind == "multi_input" and what == "input" else ("float32",)
        assert info["dtype"] in allowed and str(array.dtype) == info["dtype"], f"{spec.name}: {what} is {info['dtype']}"
    extra_inputs = []
    for name, array in built.extra_inputs.items():
        extra = value_info(graph.input, name)
        assert extra["shape"] == list(array.shape) and extra["dtype"] == str(array.dtype), \
            f"{spec.name}: input {name} is {extra}, its array {array.dtype} {array.shape}"
        extra_inputs.append(extra)
    assert np.isfinite(built.expected).all(), f"{spec.name}: expected output is not finite"
    e = built.expected.astype(np.float64)
    return {
        "name": spec.name,
        "description": spec.description,
        "opset": spec.opset,
        "input": info_in,
        **({"extra_inputs": extra_inputs} if extra_inputs else {}),
        "output": info_out,
        "onnx_ops": sorted({n.op_type for n in model.graph.node}),
        "onnx_nodes": len(model.graph.node),
        "exporter": built.exporter,
        "expected_from": built.reference,
        "expected_stats": {"min": float(e.min()), "max": float(e.max()), "mean": float(e.mean()),
                           "std": float(e.std())},
        "seed": spec.seed,
        "versions": {"torch": torch.__version__, "torchvision": torchvision.__version__, "onnx": onnx.__version__},
    }


def export_one(spec: Spec, out: pathlib.Path, stamp: str) -> int:
    """Builds spec into a temporary directory beside its final place and renames it in, so an interrupted
    run never leaves a half-written model that a later run would take as current. Returns the model size."""
    final = out / spec.name
    partial = out / f".{spec.name}.partial-{os.getpid()}"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    try:
        built = spec.build(spec.seed)
        info = validate(spec, built)
        onnx.save(built.model, str(partial / "model.onnx"))
        np.save(partial / "input.npy", np.ascontiguousarray(built.input))
        for name, array in built.extra_inputs.items():
            np.save(partial / f"input_{name}.npy", np.ascontiguousarray(array))
        np.save(partial / "expected.npy", np.ascontiguousarray(built.expected))
        (partial / "info.json").write_text(json.dumps(info, indent=2) + "\n")
        (partial / STAMP).write_text(stamp + "\n")
        if final.exists():
            stale = out / f".{spec.name}.stale-{os.getpid()}"
            final.rename(stale)
            shutil.rmtree(stale)
        partial.rename(final)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return (final / "model.onnx").stat().st_size


def human_size(size: int) -> str:
    return f"{size / 1e6:.1f} MB" if size >= 1e6 else f"{size / 1e3:.1f} kB"


def parse_args(specs):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--set", choices=("ci", "all", "qdq", "multi_input"), default="ci",
                       help="ci: the small torchvision models, every op_* model and the keyword spotters (default); "
                            "all: every float model; qdq: the pre-quantized (QDQ) exports of torchvision's "
                            "quantizable models; multi_input: the models with several inputs (a text encoder)")
    which.add_argument("--only", metavar="NAME,...", help="export just these models (any of --list --set all/qdq)")
    parser.add_argument("--out", type=pathlib.Path, help="output directory (created if missing)")
    parser.add_argument("--force", action="store_true", help="re-export even the models that are up to date")
    parser.add_argument("--list", action="store_true", help="print the selected model names and exit")
    args = parser.parse_args()
    if args.only is not None:
        names = [n for n in args.only.split(",") if n]
        known = {s.name for s in specs}
        unknown = [n for n in names if n not in known]
        if not names or unknown:
            parser.error(f"--only: unknown model(s) {', '.join(unknown) or '(none given)'}; see --list --set all")
        selected = [s for s in specs if s.name in names]
    else:
        selected = [s for s in specs if s.kind == args.set] if args.set in ("qdq", "multi_input") else \
            [s for s in specs if s.kind == "float" and (args.set == "all" or s.in_ci)]
    if not args.list and args.out is None:
        parser.error("--out is required")
    return args, selected


def main() -> int:
    specs = catalogue()
    args, selected = parse_args(specs)
    if args.list:
        print("\n".join(s.name for s in selected))
        return 0
    torch.set_num_threads(min(2, os.cpu_count() or 1))
    onnx_reference.check_against_torch()
    args.out.mkdir(parents=True, exist_ok=True)
    stamp = code_stamp()
    start = time.monotonic()
    exported = 0
    for i, spec in enumerate(selected, 1):
        prefix = f"[{i}/{len(selected)}] {spec.name}:"
        if not args.force and is_current(args.out / spec.name, stamp):
            print(f"{prefix} up to date", file=sys.stderr, flush=True)
            continue
        t0 = time.monotonic()
        try:
            size = export_one(spec, args.out, stamp)
        except Exception as e:  # one line naming the model, then the traceback for the details
            print(f"{prefix} FAILED: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
            raise
        exported += 1
        print(f"{prefix} exported (opset {spec.opset}, {human_size(size)}) in {time.monotonic() - t0:.1f}s",
              file=sys.stderr, flush=True)
    print(f"export_models: {exported} exported, {len(selected) - exported} up to date, in {args.out} "
          f"({time.monotonic() - start:.0f}s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
