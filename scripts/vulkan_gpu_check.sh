#!/usr/bin/env bash
# The Vulkan backend on a real GPU, in two steps, because the GPU machine often lacks the build:
#
#   scripts/vulkan_gpu_check.sh prepare DIR [MODEL_DIR...]   (here, with the build on PATH)
#     converts each exported test model (scripts/export_models.py: model.onnx + input.npy; default the
#     ci set in build/testdata) to DIR/NAME.mt, writes the cpu backend's output DIR/NAME.cpu.npy as the
#     reference, and, where mt-prepack supports it, DIR/NAME.vk32.mt and DIR/NAME.vk16.mt prepacked
#     for vulkan in fp32 and fp16.
#   scripts/vulkan_gpu_check.sh check DIR                     (on the GPU machine, mt-run/mt-bench on PATH)
#     1. every model on vulkan against the cpu output: fp32 within 1e-3 x range and cosine >= 0.9999,
#        fp16 within 5e-2 x range and cosine >= 0.999 (the tolerances of tests/integration/vulkan_models.sh),
#        prepacked models included;
#     2. three cold starts (empty pipeline cache) and warm starts of DIR/mobilenet_v2.mt: mt-run's own
#        planning time from its -v log, the pipeline cache file's size;
#     3. mt-bench --device vulkan (fp32, fp16) on mobilenet_v2, and --profile;
#     4. with MT_VULKAN_VALIDATION=1 (when the Khronos layer is found), the classifiers again: any
#        validation error fails.
# Set VK_ICD_FILENAMES to the GPU's driver. NVIDIA's own shader disk cache is turned off
# (__GL_SHADER_DISK_CACHE=0) so that a warm start owes its speed to mt's VkPipelineCache alone.
# Exits 1 if any check fails. Not part of the test suite: CI has no GPU (lavapipe runs the same checks).
set -uo pipefail

usage() { echo "usage: $0 prepare DIR [MODEL_DIR...] | check DIR" >&2; exit 2; }
[[ $# -ge 2 ]] || usage
step=$1 dir=$2
shift 2

prepare() {
  mkdir -p "$dir"
  local sources=("$@")
  [[ ${#sources[@]} -gt 0 ]] || sources=("$(dirname "$0")"/../build/testdata/*/)
  for src in "${sources[@]}"; do
    src=${src%/}
    local name
    name=$(basename "$src")
    [[ -f "$src/model.onnx" && -f "$src/input.npy" ]] || { echo "skip $name: no model.onnx/input.npy" >&2; continue; }
    mt-convert -q "$src/model.onnx" -o "$dir/$name.mt" || { echo "FAIL $name: mt-convert" >&2; continue; }
    cp "$src/input.npy" "$dir/$name.in.npy"
    mt-run -q --device cpu "$dir/$name.mt" --input "$dir/$name.in.npy" --output "$dir/$name.cpu.npy" >/dev/null ||
      echo "FAIL $name: cpu run" >&2
    if mt-prepack --help 2>/dev/null | grep -q vulkan; then
      mt-prepack -q --backend vulkan "$dir/$name.mt" -o "$dir/$name.vk32.mt" 2>/dev/null || rm -f "$dir/$name.vk32.mt"
      mt-prepack -q --backend vulkan --precision fp16 "$dir/$name.mt" -o "$dir/$name.vk16.mt" 2>/dev/null ||
        rm -f "$dir/$name.vk16.mt"
    fi
  done
  du -sh "$dir"
}

seconds_since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }'; }

check() {
  export __GL_SHADER_DISK_CACHE=0 XDG_CACHE_HOME
  XDG_CACHE_HOME=$(mktemp -d)
  local failures=0 passes=0
  mt-run --list-devices || return 1

  echo "== vulkan against cpu"
  for model in "$dir"/*.mt; do
    local name=${model##*/}
    name=${name%.mt}
    local base=${name%.vk32} precisions="fp32 fp16"
    base=${base%.vk16}
    [[ $name == *.vk32 ]] && precisions=fp32
    [[ $name == *.vk16 ]] && precisions=fp16
    for precision in $precisions; do
      local tolerance="--atol-range 1e-3 --min-cosine 0.9999"
      [[ $precision == fp16 ]] && tolerance="--atol-range 5e-2 --min-cosine 0.999"
      local out
      # shellcheck disable=SC2086
      if out=$(mt-run -q --device vulkan --precision "$precision" "$model" --input "$dir/$base.in.npy" \
        --compare "$dir/$base.cpu.npy" $tolerance --rtol 0 2>&1); then
        passes=$((passes + 1))
      else
        failures=$((failures + 1))
        echo "FAIL $name $precision: $(tail -2 <<<"$out")"
      fi
      [[ $base == op_* ]] || echo "$name $precision: $(grep -o 'max abs error.*' <<<"$out")"
    done
  done
  echo "vulkan against cpu: $passes passed, $failures failed"

  local model=$dir/mobilenet_v2.mt
  if [[ -f $model ]]; then
    echo "== starts of mobilenet_v2: cold (empty pipeline cache), then warm"
    local cache
    for i in 1 2 3; do
      cache=$(mktemp -d)
      for start in cold warm; do
        local t0
        t0=$(date +%s.%N)
        MT_CACHE_DIR=$cache mt-run -v --device vulkan "$model" --input "$dir/mobilenet_v2.in.npy" >/dev/null 2>"$cache.log" ||
          failures=$((failures + 1))
        echo "$start $i: wall $(seconds_since "$t0") s, $(grep -o 'planned in [0-9.]* ms' "$cache.log"), cache $(stat -c %s "$cache"/*.cache) bytes"
      done
      rm -rf "$cache" "$cache.log"
    done
    echo "== mt-bench --device vulkan"
    for precision in fp32 fp16; do
      mt-bench -q --device vulkan --precision "$precision" -w 10 -n 100 "$model" || failures=$((failures + 1))
    done
    [[ -f $dir/mobilenet_v2.vk16.mt ]] && { mt-bench -q --device vulkan --precision fp16 -w 10 -n 100 "$dir/mobilenet_v2.vk16.mt" || failures=$((failures + 1)); }
    mt-bench -q --device vulkan --profile -w 5 -n 20 "$model" | sed -n '/per op type/,/^$/p'
  fi

  echo "== validation layer"
  for model in "$dir"/mobilenet_v2.mt "$dir"/lraspp_mobilenet_v3_large.mt "$dir"/squeezenet1_1.mt; do
    [[ -f $model ]] || continue
    local base=${model%.mt}
    for precision in fp32 fp16; do
      MT_VULKAN_VALIDATION=1 mt-run -v --device vulkan --precision "$precision" "$model" --input "$base.in.npy" >/dev/null 2>"$base.validation.log"
      local status=$?
      if ! grep -q "validation layer enabled" "$base.validation.log"; then
        echo "validation layer not found (VK_LAYER_PATH=${VK_LAYER_PATH:-unset}): skipped"
        break 2
      fi
      if [[ $status -ne 0 ]] || grep -q "error: vulkan validation" "$base.validation.log"; then
        failures=$((failures + 1))
        echo "FAIL $(basename "$model") $precision: $(grep -m3 error "$base.validation.log")"
      else
        echo "$(basename "$model") $precision: no validation errors"
      fi
    done
  done
  rm -rf "$XDG_CACHE_HOME"
  echo "failures: $failures"
  [[ $failures -eq 0 ]]
}

case $step in
  prepare) prepare "$@" ;;
  check) check ;;
  *) usage ;;
esac
