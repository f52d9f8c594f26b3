#!/usr/bin/env bash
# mt-quantize on trained models from another exporter: openWakeWord's speech embedding model
# (tf2onnx; 20 convs with LeakyReLU and max pooling, several output channels dead, which made
# mt-quantize write convs the cpu backend refused) and its "alexa" wake-word classifier (Gemm
# layers), fetched by scripts/fetch_trained_models.sh. Inputs are espeak-ng speech through
# openWakeWord's feature pipeline (scripts/mt_models/wakeword.py); calibration and evaluation use
# different sentences, voices and speeds. On the cpu backend:
# - every conv of the embedding model is int8 and cpu plans the model; the embeddings of the int8
#   model have cosine >= 0.99 with fp32 (over all values, and on average per window; >= 0.95 in
#   every window);
# - the wake-word decisions (score >= 0.5) of the int8 pipeline (int8 embedding -> int8 classifier)
#   equal fp32's on >= 98% of the windows, and its scores are within 0.05 of fp32's; espeak-ng's
#   speech scores near 0, so the int8 classifier is also checked (>= 98%) on inputs spread evenly
#   over scores (0, 1) (wakeword.py boundary_inputs);
# - mt's fp32 embedding model matches onnxruntime-node (cosine >= 0.9999): the references are right.
# Skipped (77) when the models or onnxruntime-node cannot be fetched, unless MT_REQUIRE_TRAINED_MODELS=1.
set -euo pipefail

: "${MT_SOURCE_DIR:?MT_SOURCE_DIR must name the source tree}"
source "$MT_SOURCE_DIR/tests/integration/common.bash"
python=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

models=$("$MT_SOURCE_DIR/scripts/fetch_trained_models.sh") || skip_trained "the trained models cannot be fetched"
command -v espeak-ng > /dev/null || skip_trained "espeak-ng is not installed (scripts/install-deps.sh)"
batch=40  # embedding windows per run
status=0
"$python" "$MT_SOURCE_DIR/scripts/mt_models/wakeword.py" --models "$models" --out "$work" --multiple-of $batch || status=$?
[[ $status -ne 2 ]] || skip_trained "onnxruntime-node is unavailable"
[[ $status -eq 0 ]] || fail "wakeword.py failed ($status)"

# The embedding model: calibrate on 80 windows spread over the calibration speech.
"$python" - "$work" $batch <<'PY'
import sys
import numpy as np
work, batch = sys.argv[1], int(sys.argv[2])
calib = np.load(f"{work}/calib-windows.npy")
np.save(f"{work}/calib80.npy", calib[:: max(1, len(calib) // 80)][:80])
for name in ("calib", "eval"):
    x = np.load(f"{work}/{name}-windows.npy")
    for b in range(len(x) // batch):
        np.save(f"{work}/{name}-batch{b:03d}.npy", x[b * batch:(b + 1) * batch])
PY
mt-convert -q "$models/embedding_model.onnx" --input-shape input_1:$batch,76,32,1 | mt-fuse -q -o "$work/emb-fp32.mt"
mt-quantize -q "$work/emb-fp32.mt" --calibration "$work/calib80.npy" --report "$work/emb-report.json" -o "$work/emb-int8.mt"
mt-opnames --check cpu "$work/emb-int8.mt" > /dev/null || fail "cpu refuses the quantized embedding model"
for set in calib eval; do
  for f in "$work/$set"-batch*.npy; do
    b=${f##*-batch}
    mt-run -d cpu -q "$work/emb-fp32.mt" -i "$f" -o "$work/$set-emb-fp32-$b" > /dev/null
    [[ $set == calib ]] || mt-run -d cpu -q "$work/emb-int8.mt" -i "$f" -o "$work/$set-emb-int8-$b" > /dev/null
  done
done
"$python" "$MT_SOURCE_DIR/scripts/mt_models/onnxruntime.py" "$models/embedding_model.onnx" \
  --input "input_1=$work/eval-batch000.npy" --out "$work/ort" > /dev/null

# The classifier, batch 32: calibrated on the fp32 embeddings of the calibration speech; the
# evaluation inputs come from fp32 embeddings (fp32 pipeline) and from int8 ones (int8 pipeline).
"$python" - "$work" "$MT_SOURCE_DIR/scripts" "$models" <<'PY'
import glob, json, pathlib, struct, sys
import numpy as np
work = sys.argv[1]
sys.path.insert(0, sys.argv[2])
from mt_models.wakeword import boundary_inputs, classifier_inputs

def load(pattern):
    return np.concatenate([np.load(f) for f in sorted(glob.glob(pattern))]).reshape(-1, 96)

int8 = load(f"{work}/eval-emb-int8-*")
fp32 = load(f"{work}/eval-emb-fp32-*")
ort = np.load(f"{work}/ort/0.npy").reshape(-1, 96)
def cosine(a, b):
    a, b = a.ravel().astype(np.float64), b.ravel().astype(np.float64)
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))
rows = [cosine(int8[i], fp32[i]) for i in range(len(fp32))]
print(f"embedding: {len(fp32)} windows, int8 vs fp32 cosine {cosine(int8, fp32):.5f} (worst window {min(rows):.5f}, "
      f"mean {np.mean(rows):.5f}); mt fp32 vs onnxruntime cosine {cosine(fp32[:len(ort)], ort):.6f}")
assert cosine(fp32[:len(ort)], ort) >= 0.9999
assert cosine(int8, fp32) >= 0.99, cosine(int8, fp32)
assert np.mean(rows) >= 0.99 and min(rows) >= 0.95, (np.mean(rows), min(rows))

def graph(path):
    data = open(path, "rb").read()
    offset, size = struct.unpack_from("<QQ", data, 24)
    return json.loads(data[offset:offset + size])
g = graph(f"{work}/emb-int8.mt")
tensors = {t["name"]: t for t in g["tensors"]}
int8_convs = [n for n in g["nodes"] if n["op"] == "conv2d" and tensors[n["outputs"][0]]["dtype"] == "int8"]
assert len(int8_convs) == 20, len(int8_convs)
report = json.load(open(f"{work}/emb-report.json"))
assert "cpu_refused" not in report, report["cpu_refused"]

owner = np.load(f"{work}/eval-utterance.npy")[: len(fp32)]
calib = classifier_inputs(load(f"{work}/calib-emb-fp32-*"), np.load(f"{work}/calib-utterance.npy"))
np.save(f"{work}/clf-calib.npy", calib[: len(calib) // 32 * 32])
speech = classifier_inputs(fp32, owner)
boundary = boundary_inputs(pathlib.Path(sys.argv[3]) / "alexa_v0.1.onnx", speech[::20])
for kind, x in (("fp32", speech), ("int8", classifier_inputs(int8, owner)), ("boundary", boundary)):
    pad = -len(x) % 32
    open(f"{work}/clf-{kind}-count", "w").write(str(len(x)))
    x = np.concatenate([x, np.repeat(x[-1:], pad, axis=0)])
    for b in range(len(x) // 32):
        np.save(f"{work}/clf-{kind}-in{b:03d}.npy", x[b * 32:(b + 1) * 32])
PY
mt-convert -q "$models/alexa_v0.1.onnx" --input-shape onnx::Flatten_0:32,16,96 | mt-fuse -q -o "$work/clf-fp32.mt"
mt-quantize -q "$work/clf-fp32.mt" --calibration "$work/clf-calib.npy" -o "$work/clf-int8.mt"
for kind in fp32 int8; do
  for f in "$work/clf-$kind"-in*.npy; do
    b=${f##*-in}
    mt-run -d cpu -q "$work/clf-$kind.mt" -i "$f" -o "$work/clf-$kind-out$b" > /dev/null
  done
  for f in "$work/clf-boundary"-in*.npy; do
    b=${f##*-in}
    mt-run -d cpu -q "$work/clf-$kind.mt" -i "$f" -o "$work/clf-boundary-$kind-out$b" > /dev/null
  done
done
"$python" - "$work" <<'PY'
import glob, sys
import numpy as np
work = sys.argv[1]
def scores(kind, count):
    count = int(open(f"{work}/clf-{count}-count").read())
    return np.concatenate([np.load(f) for f in sorted(glob.glob(f"{work}/clf-{kind}-out*"))]).ravel()[:count]
fp32, int8 = scores("fp32", "fp32"), scores("int8", "int8")
agree = float(((fp32 >= 0.5) == (int8 >= 0.5)).mean())
print(f"alexa on speech: {len(fp32)} windows, int8 pipeline's decisions agree with fp32's on {100 * agree:.2f}%, "
      f"fp32 positives {(fp32 >= 0.5).sum()}, largest score difference {np.abs(fp32 - int8).max():.4f}")
assert agree >= 0.98, agree
assert np.abs(fp32 - int8).max() <= 0.05
# Speech that espeak-ng makes scores near 0, so those decisions are easy; near the threshold:
fp32, int8 = scores("boundary-fp32", "boundary"), scores("boundary-int8", "boundary")
agree = float(((fp32 >= 0.5) == (int8 >= 0.5)).mean())
near = np.abs(fp32 - 0.5) < 0.1
print(f"alexa near the threshold: {len(fp32)} windows with fp32 scores spread over (0, 1), int8 decisions agree on "
      f"{100 * agree:.2f}% ({int(near.sum())} within 0.1 of 0.5), largest score difference {np.abs(fp32 - int8).max():.4f}")
assert agree >= 0.98, agree
PY
echo "quantize_wakeword: ok"
