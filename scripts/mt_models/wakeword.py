"""openWakeWord's input features from speech synthesized with espeak-ng, for calibrating and evaluating
the trained models that scripts/fetch_trained_models.sh fetches.

The pipeline is openWakeWord's (openwakeword/utils.py, AudioFeatures): 16 kHz mono audio as int16
values in float32 -> melspectrogram.onnx -> x / 10 + 2 -> windows of 76 mel frames (32 bins) every
8 frames -> embedding_model.onnx ([N, 76, 32, 1] -> 96 values) -> the wake-word classifiers read 16
consecutive embeddings ([1, 16, 96]). Here melspectrogram.onnx runs on onnxruntime-node, the reference
(wakeword_pipeline.py runs the whole pipeline through mt); the shapes are checked against the .onnx files.

    /usr/bin/python3 scripts/mt_models/wakeword.py --models DIR --out DIR [--multiple-of B]

writes OUT/calib-windows.npy and OUT/eval-windows.npy ([N, 76, 32, 1] float32: every window of every
utterance, the last utterances' dropped to make N a multiple of B; the two sets come from different
sentences, voices and speeds) and OUT/{calib,eval}-utterance.npy (the
utterance each window comes from, so that classifier inputs never straddle two utterances).
Exit status 2 when onnxruntime-node is unavailable (no node/npm, offline), 1 on other errors.
"""
import argparse
import io
import pathlib
import subprocess
import sys
import wave

import numpy as np
import onnx
from scipy.signal import resample_poly

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from mt_models import onnxruntime  # noqa: E402

SAMPLE_RATE = 16000
MEL_BINS = 32
WINDOW_FRAMES = 76  # mel frames per embedding window
WINDOW_STEP = 8  # mel frames between windows (80 ms)
CLASSIFIER_EMBEDDINGS = 16

# Different sentences, voices and speeds for calibration and evaluation; the wake words appear in both.
SETS = {
    "calib": {
        "texts": ["hey jarvis, what is the weather like today", "alexa, set a timer for ten minutes",
                  "the quick brown fox jumps over the lazy dog", "please turn off the lights in the kitchen"],
        "voices": ["en-us", "en-gb+f3"],
        "speeds": [140, 175],
    },
    "eval": {
        "texts": ["hey jarvis", "alexa", "hey mycroft, play some music", "how many kilometres is it to the station",
                  "remind me to call my mother tomorrow morning", "jarvis, open the garage door"],
        "voices": ["en-gb-x-rp", "en-us+m3", "en-029+f2"],
        "speeds": [120, 160],
    },
}


def synthesize(text: str, voice: str, speed: int) -> np.ndarray:
    """espeak-ng's speech for TEXT at 16 kHz, as int16 values in float64."""
    done = subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "--stdout", text], capture_output=True)
    if done.returncode != 0:
        raise RuntimeError(f"espeak-ng -v {voice}: {done.stderr.decode().strip()}")
    with wave.open(io.BytesIO(done.stdout)) as w:
        rate = w.getframerate()
        audio = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16).astype(np.float64)
    return resample_poly(audio, SAMPLE_RATE, rate)


def input_shape(model: pathlib.Path) -> list:
    dims = onnx.load(str(model)).graph.input[0].type.tensor_type.shape.dim
    return [d.dim_value if d.HasField("dim_value") else None for d in dims]


def mel_frames(models: pathlib.Path, utterances: list) -> list:
    """openWakeWord's transformed melspectrogram (x / 10 + 2) of each utterance: [frames, 32] each."""
    length = max(len(u) for u in utterances)
    batch = np.stack([np.pad(u, (0, length - len(u))) for u in utterances]).astype(np.float32)
    mel = next(iter(onnxruntime.run(models / "melspectrogram.onnx", {"input": batch}).values()))
    mel = mel.reshape(len(utterances), -1, MEL_BINS) / 10.0 + 2.0
    # Frames past an utterance's own end see only the zero padding of the batch: drop them.
    return [mel[k, : (len(u) - 400) // 160 + 1] for k, u in enumerate(utterances)]


def windows(models: pathlib.Path, name: str, multiple_of: int, seed: int):
    """The embedding-model inputs [N, 76, 32, 1] of set NAME (N a multiple of MULTIPLE_OF), and each one's
    utterance index."""
    spec = SETS[name]
    rng = np.random.default_rng(seed)
    utterances = []
    for text in spec["texts"]:
        for voice in spec["voices"]:
            for speed in spec["speeds"]:
                speech = synthesize(text, voice, speed)
                # Half a second of quiet room noise on each side: what a wake-word detector listens to.
                padded = np.concatenate([np.zeros(SAMPLE_RATE // 2), speech, np.zeros(SAMPLE_RATE // 2)])
                utterances.append(np.clip(padded + rng.normal(0, 20, len(padded)), -32768, 32767))
    result, owner = [], []
    for k, mel in enumerate(mel_frames(models, utterances)):
        for start in range(0, len(mel) - WINDOW_FRAMES + 1, WINDOW_STEP):
            result.append(mel[start : start + WINDOW_FRAMES])
            owner.append(k)
    count = len(result) - len(result) % multiple_of
    return np.stack(result[:count])[..., None].astype(np.float32), np.array(owner[:count], dtype=np.int64)


def classifier_inputs(embeddings: np.ndarray, owner: np.ndarray) -> np.ndarray:
    """[M, 16, 96]: every run of 16 consecutive embeddings of one utterance (stride 1, as openWakeWord)."""
    embeddings = embeddings.reshape(len(embeddings), -1)
    runs = [embeddings[i : i + CLASSIFIER_EMBEDDINGS] for i in range(len(embeddings) - CLASSIFIER_EMBEDDINGS + 1)
            if owner[i] == owner[i + CLASSIFIER_EMBEDDINGS - 1]]
    return np.stack(runs).astype(np.float32)


def classifier_torch(model: pathlib.Path, output: str = None):
    """A wake-word classifier's graph (Flatten, Gemm, Relu, Sigmoid, and the element-wise ops and ReduceMean of
    PyTorch's LayerNorm export: alexa_v0.1.onnx, the first stage of hey_jarvis_v0.1.onnx) as a torch function
    returning tensor OUTPUT (default: the graph's output), one value per input."""
    import torch
    from onnx import numpy_helper
    graph = onnx.load(str(model)).graph
    weights = {i.name: torch.from_numpy(numpy_helper.to_array(i).copy()) for i in graph.initializer}
    binary = {"Add": torch.add, "Sub": torch.sub, "Mul": torch.mul, "Div": torch.div, "Pow": torch.pow}
    target = output or graph.output[0].name

    def forward(x):
        env = {graph.input[0].name: x}
        for node in graph.node:
            if target in env:
                break
            args = [env[n] if n in env else weights[n] for n in node.input]
            attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
            if node.op_type == "Constant":
                out = torch.from_numpy(numpy_helper.to_array(attrs["value"]).copy())
            elif node.op_type == "Flatten":
                out = args[0].reshape(args[0].shape[0], -1)
            elif node.op_type == "Gemm":
                w = args[1].T if attrs.get("transB", 0) else args[1]
                out = args[0] @ w + (args[2] if len(args) > 2 else 0)
            elif node.op_type == "ReduceMean":
                out = args[0].mean(dim=attrs["axes"], keepdim=bool(attrs.get("keepdims", 1)))
            elif node.op_type in binary:
                out = binary[node.op_type](args[0], args[1])
            elif node.op_type in ("Relu", "Sigmoid", "Sqrt"):
                out = getattr(torch, node.op_type.lower())(args[0])
            else:
                raise RuntimeError(f"{model.name}: op {node.op_type} is not one of a Gemm classifier's")
            env[node.output[0]] = out
        return env[target].reshape(-1)
    return forward


def boundary_inputs(model: pathlib.Path, speech: np.ndarray, per_input: int = 20, output: str = None) -> np.ndarray:
    """Classifier inputs whose fp32 scores (tensor OUTPUT, default the model's output) spread evenly over (0, 1),
    where decisions are fragile: from each real input x0 (speech, scored near 0) gradient ascent finds x1 scored
    near 1 nearby, and the points x0 + t (x1 - x0) are placed (bisection on t) at scores 0.5/per_input,
    1.5/per_input, ... Real speech rarely lands near the 0.5 threshold; these test the decision where int8's
    error counts (and hey_jarvis's second stage, which runs above it)."""
    import torch
    forward = classifier_torch(model, output)
    x0 = torch.from_numpy(speech)
    x1 = x0.clone().requires_grad_(True)
    optimizer = torch.optim.Adam([x1], lr=0.05)
    for _ in range(300):
        optimizer.zero_grad()
        loss = -torch.log(forward(x1) + 1e-6).sum()
        loss.backward()
        optimizer.step()
    x1 = x1.detach()
    result = []
    with torch.no_grad():
        ok = forward(x1) > 0.99
        for k in np.flatnonzero(ok.numpy()):
            for target in (np.arange(per_input) + 0.5) / per_input:
                lo, hi = 0.0, 1.0
                for _ in range(40):
                    t = (lo + hi) / 2
                    if forward((x0[k] + t * (x1[k] - x0[k]))[None])[0] < target:
                        lo = t
                    else:
                        hi = t
                result.append((x0[k] + (lo + hi) / 2 * (x1[k] - x0[k])).numpy())
    return np.stack(result).astype(np.float32)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", required=True, type=pathlib.Path, help="directory of fetch_trained_models.sh")
    parser.add_argument("--out", required=True, type=pathlib.Path)
    parser.add_argument("--multiple-of", type=int, default=1, metavar="B", help="windows per set: a multiple of B")
    args = parser.parse_args()
    expected = [None, WINDOW_FRAMES, MEL_BINS, 1]
    got = input_shape(args.models / "embedding_model.onnx")
    if got[1:] != expected[1:]:
        print(f"wakeword.py: embedding_model.onnx input is {got}, expected [N, 76, 32, 1]", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        for seed, name in enumerate(SETS):
            x, owner = windows(args.models, name, args.multiple_of, seed)
            np.save(args.out / f"{name}-windows.npy", x)
            np.save(args.out / f"{name}-utterance.npy", owner)
            print(f"{name}: {len(x)} windows from {owner[-1] + 1} utterances")
    except onnxruntime.Unavailable as e:
        print(f"wakeword.py: {e}", file=sys.stderr)
        return 2
    except RuntimeError as e:
        print(f"wakeword.py: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.dont_write_bytecode = True
    sys.exit(main())
