#!/usr/bin/env bash
# openWakeWord's detector end to end through mt, against onnxruntime-node: about three seconds of
# espeak-ng speech -> melspectrogram.onnx -> embedding_model.onnx -> hey_jarvis_v0.1.onnx (fetched by
# scripts/fetch_trained_models.sh), each pipeline on its own results, on the reference and cpu
# backends (scripts/mt_models/wakeword_pipeline.py): log-mel frames within 1e-4 x their range,
# embeddings within 1e-5 x their range (cosine >= 0.9999), every wake-word score within 1e-4 and
# the same decisions, on the speech and on inputs placed around the classifier's 0.5 threshold, so
# that both branches of its If (the verifier network above it) run. The vulkan backend runs the
# pipeline too (`wakeword_pipeline.py --devices vulkan`, about a minute on lavapipe: not in CI; its
# comparison and where are in the op harness).
# Skipped (77) when the models or onnxruntime-node cannot be fetched, unless MT_REQUIRE_TRAINED_MODELS=1.
set -euo pipefail

: "${MT_SOURCE_DIR:?MT_SOURCE_DIR must name the source tree}"
source "$MT_SOURCE_DIR/tests/integration/common.bash"
python=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

models=$("$MT_SOURCE_DIR/scripts/fetch_trained_models.sh") || skip_trained "the trained models cannot be fetched"
command -v espeak-ng > /dev/null || skip_trained "espeak-ng is not installed (scripts/install-deps.sh)"
status=0
"$python" "$MT_SOURCE_DIR/scripts/mt_models/wakeword_pipeline.py" --models "$models" --devices reference,cpu \
  --work "$work" || status=$?
[[ $status -ne 2 ]] || skip_trained "onnxruntime-node is unavailable"
[[ $status -eq 0 ]] || fail "the wake-word pipeline differs from onnxruntime-node's (see above)"
echo "wakeword_pipeline: ok"
