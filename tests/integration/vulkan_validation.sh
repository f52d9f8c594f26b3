#!/usr/bin/env bash
# The model test under the Khronos validation layer (MT_VULKAN_VALIDATION=1): any error the layer
# reports (while planning, running or destroying) makes mt-run fail. The models of vulkan_models.sh
# and op graphs that cover the remaining shaders, in fp32 and fp16.
set -euo pipefail
: "${MT_SOURCE_DIR:?MT_SOURCE_DIR must name the source tree}"
: "${MT_TEST_MODELS:?MT_TEST_MODELS must name the directory scripts/export_models.py --set ci wrote}"
source "$MT_SOURCE_DIR/tests/integration/vulkan_common.bash"
require_vulkan_device

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export XDG_CACHE_HOME="$work/cache"
export MT_VULKAN_VALIDATION=1

# The model test's classifiers and segmentation model, and op graphs for the shaders they do not use.
for name in mobilenet_v3_small squeezenet1_1 shufflenet_v2_x1_0 mobilenet_v2 lraspp_mobilenet_v3_large \
  op_layernorm_opset17 op_conv_transpose_opset13 op_matmul_broadcast_opset13 op_gather_opset13 op_pad_reflect_opset13 \
  op_softmax_axis1_opset13 op_transpose_rank5_opset13 op_resize_bicubic_opset13 op_gelu_opset13; do
  dir="$MT_TEST_MODELS/$name"
  [[ -f "$dir/model.onnx" ]] || fail "$name: missing from $MT_TEST_MODELS (run the export fixture)"
  mt-convert -q "$dir/model.onnx" -o "$work/$name.mt" || fail "$name: mt-convert failed"
  mt-run -q --device cpu "$work/$name.mt" --input "$dir/input.npy" --output "$work/$name.cpu.npy" >/dev/null
  for precision in fp32 fp16; do
    mt-run -v --device vulkan --precision "$precision" "$work/$name.mt" --input "$dir/input.npy" \
      --compare "$work/$name.cpu.npy" --atol-range 5e-2 --rtol 0 --min-cosine 0.999 >/dev/null 2>"$work/log" ||
      fail "$name ($precision) under validation: $(grep -m3 -i 'error\|fail' "$work/log" || tail -3 "$work/log")"
    grep -q "validation layer enabled" "$work/log" || fail "$name: the validation layer was not enabled"
    if grep -q "error: vulkan validation" "$work/log"; then fail "$name ($precision): $(grep -m3 'error: vulkan validation' "$work/log")"; fi
    echo "$name ($precision): no validation errors"
  done
done

# An int8 model (mt-quantize of the fused mobilenet_v3_small, as vulkan_models.sh: the int8 shaders,
# quantize and dequantize), with int8 dot products (the extension and feature enabled) and without.
input="$MT_TEST_MODELS/mobilenet_v3_small/input.npy"
mt-fuse -q --no-verify "$work/mobilenet_v3_small.mt" -o "$work/fused.mt" &&
  mt-quantize -q "$work/fused.mt" --calibration "$input" -o "$work/int8.mt" || fail "mt-quantize failed"
mt-run -q --device cpu "$work/int8.mt" --input "$input" --output "$work/int8.cpu.npy" >/dev/null
for run in "fp32 1" "fp32 0" "fp16 1"; do
  read -r precision dot <<<"$run"
  MT_VULKAN_INT8_DOT=$dot mt-run -v --device vulkan --precision "$precision" "$work/int8.mt" --input "$input" \
    --compare "$work/int8.cpu.npy" --atol-range 1e-2 --rtol 0 --min-cosine 0.9999 >/dev/null 2>"$work/log" ||
    fail "int8 ($precision, MT_VULKAN_INT8_DOT=$dot) under validation: $(grep -m3 -i 'error\|fail' "$work/log" || tail -3 "$work/log")"
  if grep -q "error: vulkan validation" "$work/log"; then fail "int8 ($precision): $(grep -m3 'error: vulkan validation' "$work/log")"; fi
  echo "int8 mobilenet_v3_small ($precision, int8 dot products $dot): no validation errors"
done
