"""openWakeWord's whole detector through mt, against onnxruntime-node: 16 kHz speech (espeak-ng, "hey
jarvis" and other words, about three seconds) -> melspectrogram.onnx -> x / 10 + 2, windows of 76 frames
every 8 -> embedding_model.onnx -> runs of 16 embeddings -> hey_jarvis_v0.1.onnx (a two-stage classifier:
its If runs the verifier network when the first score is >= 0.5). Each pipeline runs end to end on its
own results: mt's on one backend (mt-convert, mt-run), onnxruntime-node's as the reference.

The speech scores near 0, so the classifier also gets inputs placed at first-stage scores 0.125, 0.375,
0.625 and 0.875 (wakeword.py boundary_inputs, from the reference's embeddings): the last two take the If's
other branch. Both pipelines classify these same inputs.

    /usr/bin/python3 scripts/mt_models/wakeword_pipeline.py --models DIR --devices reference,cpu [--work DIR]

Checks, printing each measure: the log-mel frames within 1e-4 x their range; the embeddings within
1e-5 x their range, cosine >= 0.9999; every score within 1e-4 of onnxruntime-node's, and the same
decisions (score >= 0.5). Exit status 0 ok, 1 a check failed or a tool failed, 2 onnxruntime-node is
unavailable. Needs mt-convert and mt-run on PATH.
"""
import argparse
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from mt_models import onnxruntime  # noqa: E402
from mt_models.wakeword import (CLASSIFIER_EMBEDDINGS, MEL_BINS, SAMPLE_RATE, WINDOW_FRAMES, WINDOW_STEP,  # noqa: E402
                                boundary_inputs, classifier_torch, synthesize)

CLASSIFIER = "hey_jarvis_v0.1.onnx"
FIRST_STAGE_SCORE = "p1.1"  # the If's condition is this >= 0.5
SPEECH_INPUTS = 6  # classifier inputs from the speech (runs of 16 embeddings), spread over the clip


def speech() -> np.ndarray:
    """About three seconds: "hey jarvis" and "what time is it", with quiet room noise around: [1, samples] of
    int16 values in float32, as openWakeWord feeds melspectrogram.onnx."""
    parts = [np.zeros(SAMPLE_RATE // 4), synthesize("hey jarvis", "en-gb-x-rp", 150), np.zeros(SAMPLE_RATE // 4),
             synthesize("what time is it", "en-us", 170), np.zeros(SAMPLE_RATE // 4)]
    audio = np.concatenate(parts)
    audio = audio + np.random.default_rng(0).normal(0, 20, len(audio))
    return np.clip(audio, -32768, 32767).astype(np.float32)[None]


def windows(mel: np.ndarray) -> np.ndarray:
    """openWakeWord's embedding inputs from melspectrogram.onnx's output: [N, 76, 32, 1]."""
    frames = mel.reshape(-1, MEL_BINS) / 10.0 + 2.0
    starts = range(0, len(frames) - WINDOW_FRAMES + 1, WINDOW_STEP)
    return np.stack([frames[s : s + WINDOW_FRAMES] for s in starts])[..., None].astype(np.float32)


def runs_of_embeddings(embeddings: np.ndarray) -> np.ndarray:
    """SPEECH_INPUTS classifier inputs [1, 16, 96], evenly spread over the clip."""
    e = embeddings.reshape(len(embeddings), -1)
    starts = np.linspace(0, len(e) - CLASSIFIER_EMBEDDINGS, SPEECH_INPUTS).round().astype(int)
    return np.stack([e[s : s + CLASSIFIER_EMBEDDINGS] for s in starts]).astype(np.float32)


class Mt:
    """mt's pipeline on one backend: the three models converted once, run with mt-run."""

    def __init__(self, models: pathlib.Path, device: str, work: pathlib.Path, samples: int, windows: int):
        self.device, self.work = device, work
        self.convert(models / "melspectrogram.onnx", "mel", f"input:1,{samples}")
        self.convert(models / "embedding_model.onnx", "embedding", f"input_1:{windows},{WINDOW_FRAMES},{MEL_BINS},1")
        self.convert(models / CLASSIFIER, "classifier")

    def convert(self, onnx_file, name, shape=None):
        args = ["mt-convert", "-q", str(onnx_file), "-o", str(self.work / f"{name}.mt")]
        subprocess.run(args + (["--input-shape", shape] if shape else []), check=True)

    def run(self, name, x: np.ndarray) -> np.ndarray:
        np.save(self.work / "in.npy", x)
        subprocess.run(["mt-run", "-q", "--device", self.device, str(self.work / f"{name}.mt"), "-i",
                        str(self.work / "in.npy"), "-o", str(self.work / "out.npy")], check=True, stdout=subprocess.DEVNULL)
        return np.load(self.work / "out.npy")


class Ort:
    """onnxruntime-node's pipeline: the original models."""

    def __init__(self, models: pathlib.Path):
        self.models = models

    def run(self, name, x: np.ndarray) -> np.ndarray:
        model = {"mel": "melspectrogram.onnx", "embedding": "embedding_model.onnx", "classifier": CLASSIFIER}[name]
        feed = {"mel": "input", "embedding": "input_1", "classifier": "x.1"}[name]
        return next(iter(onnxruntime.run(self.models / model, {feed: x}).values()))


def pipeline(runner, audio: np.ndarray, extra_inputs: np.ndarray):
    """(log-mel frames, embeddings, scores of the speech's classifier inputs, scores of EXTRA_INPUTS)."""
    mel = runner.run("mel", audio)
    embeddings = runner.run("embedding", windows(mel))
    speech_scores = [float(runner.run("classifier", x[None]).ravel()[0]) for x in runs_of_embeddings(embeddings)]
    extra_scores = [float(runner.run("classifier", x[None]).ravel()[0]) for x in extra_inputs]
    return mel, embeddings, np.array(speech_scores), np.array(extra_scores)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", required=True, type=pathlib.Path, help="directory of fetch_trained_models.sh")
    parser.add_argument("--devices", required=True, help="comma-separated mt backends: reference, cpu, vulkan")
    parser.add_argument("--work", type=pathlib.Path, help="scratch directory (default: a temporary one)")
    args = parser.parse_args()
    audio = speech()
    with tempfile.TemporaryDirectory(prefix="mt-wakeword-") as tmp:
        work = args.work or pathlib.Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        try:
            ort = Ort(args.models)
            ort_mel, ort_emb, ort_speech, _ = pipeline(ort, audio, np.zeros((0, CLASSIFIER_EMBEDDINGS, 96), np.float32))
            # Inputs at first-stage scores spread over (0, 1), from the reference's own speech inputs.
            extra = boundary_inputs(args.models / CLASSIFIER, runs_of_embeddings(ort_emb)[:1], per_input=4,
                                    output=FIRST_STAGE_SCORE)
            ort_extra = np.array([float(ort.run("classifier", x[None]).ravel()[0]) for x in extra])
        except onnxruntime.Unavailable as e:
            print(f"wakeword_pipeline: {e}", file=sys.stderr)
            return 2
        failures = 0
        for device in args.devices.split(","):
            try:
                mt = Mt(args.models, device, work, audio.shape[1], len(windows(ort_mel)))
                results = pipeline(mt, audio, extra)
            except subprocess.CalledProcessError as e:
                print(f"wakeword_pipeline: {' '.join(e.cmd)} exited {e.returncode}", file=sys.stderr)
                return 1
            failures += compare(device, results, (ort_mel, ort_emb, ort_speech, ort_extra))
    import torch
    with torch.no_grad():
        first = classifier_torch(args.models / CLASSIFIER, FIRST_STAGE_SCORE)(torch.from_numpy(extra)).numpy()
    both = len(first) == 4 and (first >= 0.5).sum() == 2
    print(f"both branches of the If ran: first-stage scores {np.round(first, 3).tolist()}: {'ok' if both else 'FAILED'}")
    return 1 if failures or not both else 0


def compare(device, results, reference) -> int:
    """Prints each check of one backend's pipeline against onnxruntime-node's; returns the failures."""
    (mel, emb, speech_scores, extra_scores), (ort_mel, ort_emb, ort_speech, ort_extra) = results, reference
    failures = 0

    def check(what, ok, measure):
        nonlocal failures
        print(f"{device}: {what}: {measure}: {'ok' if ok else 'FAILED'}")
        failures += 0 if ok else 1

    def within(a, b, tolerance):
        return a.shape == b.shape and np.abs(a.astype(np.float64) - b).max() <= tolerance

    mel_range = float(ort_mel.max() - ort_mel.min())
    check(f"log-mel frames {mel.shape}", within(mel, ort_mel, 1e-4 * mel_range),
          f"max abs error {np.abs(mel - ort_mel).max():.3g} (range {mel_range:.3g})")
    emb_range = float(ort_emb.max() - ort_emb.min())
    a, b = emb.ravel().astype(np.float64), ort_emb.ravel().astype(np.float64)
    cosine = float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))
    check(f"embeddings {emb.shape}", within(emb, ort_emb, 1e-5 * emb_range) and cosine >= 0.9999,
          f"max abs error {np.abs(emb - ort_emb).max():.3g} (range {emb_range:.3g}), cosine {cosine:.6f}")
    for what, got, want in (("speech scores", speech_scores, ort_speech),
                            ("scores near the threshold", extra_scores, ort_extra)):
        check(f"{what} {np.round(want, 4).tolist()}", within(got, want, 1e-4) and ((got >= 0.5) == (want >= 0.5)).all(),
              f"max abs error {np.abs(got - want).max():.3g}")
    return failures


if __name__ == "__main__":
    sys.dont_write_bytecode = True
    sys.exit(main())
