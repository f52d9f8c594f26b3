#!/usr/bin/env bash
# The small ci test models ($MT_TEST_MODELS, scripts/export_models.py --set ci) on the vulkan backend
# (lavapipe unless MT_VULKAN_ICD names another driver), compared with the cpu backend on the model's
# own input:
#   fp32: every element within 1e-3 x the output's range, cosine >= 0.9999;
#   fp16: cosine >= 0.999, no NaN or infinity, every element within 5e-2 x the range.
# Then the pipeline cache: two starts of one model with an empty cache directory; the first writes
# the cache file, the second loads it (checked through the -v log); both planning times are printed,
# not compared (lavapipe's cache holds no compiled code, so there the two are alike).
# Last, the answers without a device: mt-opnames --check vulkan agrees with a device present, and
# mt-run --device vulkan fails with one line and status 4.
set -euo pipefail
: "${MT_SOURCE_DIR:?MT_SOURCE_DIR must name the source tree}"
: "${MT_TEST_MODELS:?MT_TEST_MODELS must name the directory scripts/export_models.py --set ci wrote}"
source "$MT_SOURCE_DIR/tests/integration/vulkan_common.bash"
require_vulkan_device

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A private pipeline cache, so that the first start below is a cold one.
export XDG_CACHE_HOME="$work/cache"

# Small models keep lavapipe (a CPU) within the test's time: classifiers with every op family the
# vision models use, the segmentation model (resize, sigmoid) and every op_* graph.
models="mobilenet_v3_small squeezenet1_1 shufflenet_v2_x1_0 mobilenet_v2 lraspp_mobilenet_v3_large"
for dir in "$MT_TEST_MODELS"/op_*; do models+=" $(basename "$dir")"; done

count=0
for name in $models; do
  dir="$MT_TEST_MODELS/$name"
  [[ -f "$dir/model.onnx" && -f "$dir/input.npy" ]] || fail "$name: missing from $MT_TEST_MODELS (run the export fixture)"
  model="$work/$name.mt"
  mt-convert -q "$dir/model.onnx" -o "$model" || fail "$name: mt-convert failed"
  mt-run -q --device cpu "$model" --input "$dir/input.npy" --output "$work/$name.cpu.npy" >/dev/null ||
    fail "$name: the cpu backend failed"
  start=$(date +%s.%N)
  mt-run -q --device vulkan "$model" --input "$dir/input.npy" --compare "$work/$name.cpu.npy" \
    --atol-range 1e-3 --rtol 0 --min-cosine 0.9999 >"$work/fp32.txt" ||
    fail "$name: vulkan fp32 differs from cpu: $(grep compare "$work/fp32.txt" || true)"
  middle=$(date +%s.%N)
  mt-run -q --device vulkan --precision fp16 "$model" --input "$dir/input.npy" --compare "$work/$name.cpu.npy" \
    --atol-range 5e-2 --rtol 0 --min-cosine 0.999 >"$work/fp16.txt" ||
    fail "$name: vulkan fp16 differs from cpu: $(grep compare "$work/fp16.txt" || true)"
  end=$(date +%s.%N)
  printf '%-45s fp32 %5.1fs: %s\n%-45s fp16 %5.1fs: %s\n' "$name" "$(echo "$middle - $start" | bc)" \
    "$(grep -o 'max abs error.*' "$work/fp32.txt")" "" "$(echo "$end - $middle" | bc)" \
    "$(grep -o 'max abs error.*' "$work/fp16.txt")"
  count=$((count + 1))
done
echo "vulkan matches cpu on $count models (fp32 and fp16)"

# Pipeline cache: a cold start in an empty cache directory, then a warm one.
export XDG_CACHE_HOME="$work/cold-cache"
model="$work/mobilenet_v2.mt"
input="$MT_TEST_MODELS/mobilenet_v2/input.npy"
mt-run -v --device vulkan "$model" --input "$input" >/dev/null 2>"$work/first.log" || fail "first start failed"
cache_file=$(ls "$XDG_CACHE_HOME"/mt/vulkan-*.cache 2>/dev/null | head -1)
[[ -n "$cache_file" ]] || fail "the first start left no pipeline cache in $XDG_CACHE_HOME/mt: $(cat "$work/first.log")"
grep -q "pipeline cache .*: loaded" "$work/first.log" && fail "the first start claims to have loaded a cache"
mt-run -v --device vulkan "$model" --input "$input" >/dev/null 2>"$work/second.log" || fail "second start failed"
grep -q "pipeline cache $cache_file: loaded [0-9]* bytes" "$work/second.log" ||
  fail "the second start did not load $cache_file: $(cat "$work/second.log")"
first_ms=$(grep -o 'planned in [0-9.]* ms' "$work/first.log" | grep -o '[0-9.]*')
second_ms=$(grep -o 'planned in [0-9.]* ms' "$work/second.log" | grep -o '[0-9.]*')
echo "mobilenet_v2 planning: first start ${first_ms} ms (cold pipeline cache), second ${second_ms} ms (cache $(stat -c %s "$cache_file") bytes)"
# A damaged cache file is ignored, not fatal.
printf 'garbage' >"$cache_file"
mt-run -vv --device vulkan "$model" --input "$input" >/dev/null 2>"$work/damaged.log" ||
  fail "a damaged pipeline cache made the run fail: $(tail -3 "$work/damaged.log")"
grep -q "ignoring pipeline cache" "$work/damaged.log" || fail "a damaged pipeline cache was not reported at debug level"

# Without a device: the same --check answer, and a one-line refusal with status 4.
mt-opnames --check vulkan "$work/mobilenet_v2.mt" >"$work/check.txt" || fail "mt-opnames --check vulkan rejects mobilenet_v2"
VK_ICD_FILENAMES=/nonexistent/icd.json mt-opnames --check vulkan "$work/mobilenet_v2.mt" >"$work/check-nodevice.txt" ||
  fail "mt-opnames --check vulkan needs a device"
cmp -s "$work/check.txt" "$work/check-nodevice.txt" || fail "mt-opnames --check vulkan answers differently without a device"
status=0
VK_ICD_FILENAMES=/nonexistent/icd.json mt-run --device vulkan "$model" --input "$input" >/dev/null 2>"$work/nodevice.log" ||
  status=$?
[[ $status -eq 4 ]] || fail "mt-run --device vulkan without a device exited $status, expected 4"
[[ $(wc -l <"$work/nodevice.log") -eq 1 ]] || fail "expected one line without a device, got: $(cat "$work/nodevice.log")"
grep -q "vulkan" "$work/nodevice.log" || fail "the refusal does not name vulkan: $(cat "$work/nodevice.log")"
echo "without a device: $(cat "$work/nodevice.log")"
