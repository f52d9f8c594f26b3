#!/usr/bin/env bash
# Installs the dependencies, builds mt, and runs the main job on the shipped digits classifier
# (models/, trained by scripts/train_digits.py): convert the ONNX model, fuse it, prepack it for the
# cpu backend, check that the cpu backend runs every op, then classify the 360 held-out test images;
# then the same chain with mt-quantize (int8), and the accuracy of both.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
export PATH="$PWD/build/tools:$PATH"
out=build/demo
mkdir -p "$out"

step() { printf '\n== %s\n' "$*"; }

step "mt-convert | mt-fuse | mt-prepack --backend cpu  (a batch of 360 test images per run)"
mt-convert models/digits.onnx --input-shape image:360,1,8,8 -q | mt-fuse --report |
  mt-prepack --backend cpu -v -o "$out/digits.mt"

step "mt-opnames --info / --counts / --check cpu"
mt-opnames --info "$out/digits.mt"
mt-opnames --counts "$out/digits.mt"
mt-opnames --check cpu "$out/digits.mt"

step "mt-run --device cpu on the held-out test set (fp32)"
mt-run --device cpu "$out/digits.mt" --input models/digits-test.npy --output "$out/logits.npy" \
  --compare models/digits-test-logits.npy --atol-range 1e-4 --min-cosine 0.99999

# Calibration takes samples of the model's input shape, so the int8 model has batches of 20: the
# 100 calibration images are 5 samples, the 360 test images 18 runs.
step "mt-convert | mt-fuse | mt-quantize | mt-prepack --backend cpu  (int8, calibrated on models/digits-calib.npy)"
mt-convert models/digits.onnx --input-shape image:20,1,8,8 -q | mt-fuse -q |
  mt-quantize --calibration models/digits-calib.npy --report |
  mt-prepack --backend cpu -o "$out/digits-int8.mt"
ls -l "$out/digits.mt" "$out/digits-int8.mt"

step "mt-run --device cpu on the held-out test set (int8, 18 batches of 20)"
/usr/bin/python3 - models/digits-test.npy "$out" <<'PY'
import sys, numpy as np
x = np.load(sys.argv[1])
for b in range(18):
    np.save(f"{sys.argv[2]}/test-batch{b:02d}.npy", np.ascontiguousarray(x[b * 20:(b + 1) * 20]))
PY
for b in $(seq -w 0 17); do
  mt-run --device cpu -q "$out/digits-int8.mt" --input "$out/test-batch$b.npy" --output "$out/logits-int8-$b.npy" > /dev/null
done

/usr/bin/python3 - "$out" models/digits-test-labels.npy <<'PY'
import sys, numpy as np
out, labels = sys.argv[1], np.load(sys.argv[2])
fp32 = np.load(f"{out}/logits.npy")
int8 = np.concatenate([np.load(f"{out}/logits-int8-{b:02d}.npy") for b in range(18)])
for name, logits in (("fp32", fp32), ("int8", int8)):
    correct = int((logits.argmax(axis=1) == labels).sum())
    print(f"top-1 accuracy {name}: {correct}/{len(labels)} = {100.0 * correct / len(labels):.2f}%")
PY
