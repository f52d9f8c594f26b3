#!/usr/bin/env bash
# Installs the dependencies, builds mt, and runs the main job on the shipped digits classifier
# (models/, trained by scripts/train_digits.py): convert the ONNX model, fuse it, prepack it for the
# cpu backend, check that the cpu backend runs every op, then classify the 360 held-out test images
# and report the accuracy.
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

step "mt-run --device cpu on the held-out test set"
mt-run --device cpu "$out/digits.mt" --input models/digits-test.npy --output "$out/logits.npy" \
  --compare models/digits-test-logits.npy --atol-range 1e-4 --min-cosine 0.99999
/usr/bin/python3 - "$out/logits.npy" models/digits-test-labels.npy <<'PY'
import sys, numpy as np
logits, labels = np.load(sys.argv[1]), np.load(sys.argv[2])
correct = int((logits.argmax(axis=1) == labels).sum())
print(f"top-1 accuracy: {correct}/{len(labels)} = {100.0 * correct / len(labels):.2f}%")
PY
