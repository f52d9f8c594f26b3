#!/usr/bin/env bash
# mt-convert's import of pre-quantized ONNX (QuantizeLinear/DequantizeLinear pairs, QLinearConv, QLinearMatMul,
# ConvInteger, MatMulInteger),
# checked against onnxruntime-node running the same file (tests/integration/qdq_import.py):
#  - the small models of scripts/make_qdq_test_models.py (conv, depthwise conv, Gemm, MatMul, Add, pooling,
#    Concat, QLinear*, a float32 fallback) within 1 step of the output scale, and those with ConvInteger and
#    MatMulInteger (float32 on exact integers) within 1e-5, on reference and cpu;
#  - the QDQ exports of torchvision's quantized mobilenet_v2, mobilenet_v3_large and resnet18
#    (export_models.py --set qdq, exported into $MT_TEST_MODELS on first use, about a minute): output cosine
#    with ORT at least ORT's cosine with PyTorch's own int8 execution, on reference, cpu, and cpu after
#    mt-fuse and mt-prepack; every quantized op int8; mt-opnames --check cpu finds nothing to refuse.
# About 30 s with the models exported (on an idle 2-core machine; the first export adds about a minute).
set -euo pipefail

: "${MT_SOURCE_DIR:?MT_SOURCE_DIR must name the source tree}"
: "${MT_TEST_MODELS:?MT_TEST_MODELS must name the directory scripts/export_models.py writes}"
python=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export MT_SOURCE_DIR

"$python" "$MT_SOURCE_DIR/tests/integration/qdq_import.py" small "$work/small"

models=(mobilenet_v2_qdq mobilenet_v3_large_qdq resnet18_qdq)
"$python" "$MT_SOURCE_DIR/scripts/export_models.py" --only "$(IFS=,; echo "${models[*]}")" --out "$MT_TEST_MODELS"
"$python" "$MT_SOURCE_DIR/tests/integration/qdq_import.py" models "${models[@]/#/$MT_TEST_MODELS/}"
echo "qdq_import: all checks passed"
