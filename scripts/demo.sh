#!/usr/bin/env bash
# Installs the dependencies, builds mt, and runs the main job on the shipped digits classifier:
# convert the ONNX model to .mt and list the operators it needs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
export PATH="$PWD/build/tools:$PATH"
out=build/demo
mkdir -p "$out"

echo "== mt-convert models/digits.onnx -> $out/digits.mt"
mt-convert models/digits.onnx -o "$out/digits.mt"
echo "== mt-opnames --info"
mt-opnames --info "$out/digits.mt"
echo "== mt-opnames --counts"
mt-opnames --counts "$out/digits.mt"
