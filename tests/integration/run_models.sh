#!/usr/bin/env bash
# Runs every test model with mt-run against the PyTorch (or numpy) output the export script saved:
# for each model of `export_models.py --list --set ${MT_MODEL_SET:-ci}` and of `--set multi_input`
# (several inputs: input.npy and input_NAME.npy) in $MT_TEST_MODELS, mt-convert model.onnx, then
# mt-run --input input.npy --compare expected.npy on the reference backend and, when this build has
# it, on cpu with 1 and 2 threads. The acceptance check of the
# runtime: max abs error <= 1e-4 x the output's range and cosine >= 0.99999
# (--atol-range 1e-4 --rtol 0 --min-cosine 0.99999). Every model and device is tried; the
# failures are listed at the end.
#
# All models: scripts/export_models.py --set all --out DIR, then
#   MT_TEST_MODELS=DIR MT_MODEL_SET=all MT_SOURCE_DIR=. PATH=build/tools:$PATH tests/integration/run_models.sh
set -euo pipefail

: "${MT_SOURCE_DIR:?MT_SOURCE_DIR must name the source tree}"
: "${MT_TEST_MODELS:?MT_TEST_MODELS must name the directory scripts/export_models.py wrote}"
python=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

models=$("$python" "$MT_SOURCE_DIR/scripts/export_models.py" --list --set "${MT_MODEL_SET:-ci}"
        "$python" "$MT_SOURCE_DIR/scripts/export_models.py" --list --set multi_input)
devices=$(mt-run --list-devices)
[[ "$devices" == reference* ]] || { echo "FAIL: mt-run --list-devices does not start with reference: $devices" >&2; exit 1; }
runs=("reference 1")
if grep -qx cpu <<< "$devices"; then runs+=("cpu 1" "cpu 2"); fi

failures=()
count=0
for name in $models; do
  dir="$MT_TEST_MODELS/$name"
  for file in model.onnx input.npy expected.npy; do
    [[ -f "$dir/$file" ]] || { failures+=("$name: $dir/$file missing (run scripts/export_models.py)"); continue 2; }
  done
  if ! mt-convert "$dir/model.onnx" -o "$work/$name.mt" 2> "$work/err"; then
    failures+=("$name: mt-convert: $(tail -1 "$work/err")")
    continue
  fi
  inputs=(--input "$dir/input.npy")
  extras=("$dir"/input_*.npy)
  if [[ -e "${extras[0]}" ]]; then  # a multi_input model: every input by name
    inputs=(--input "input=$dir/input.npy")
    for extra in "${extras[@]}"; do
      extra_name=${extra##*/input_}
      inputs+=(--input "${extra_name%.npy}=$extra")
    done
  fi
  for run in "${runs[@]}"; do
    read -r device threads <<< "$run"
    status=0
    mt-run --device "$device" --threads "$threads" "$work/$name.mt" "${inputs[@]}" \
      --compare "$dir/expected.npy" --atol-range 1e-4 --rtol 0 --min-cosine 0.99999 \
      > "$work/out" 2> "$work/err" || status=$?
    result=$(grep '^compare ' "$work/out" | sed 's/^compare [^ ]* with [^:]*: //' || true)
    printf '%-48s %-9s %s thread(s): %s\n' "$name" "$device" "$threads" "${result:-exit $status: $(tail -1 "$work/err")}"
    [[ $status -eq 0 ]] || failures+=("$name on $device, $threads thread(s): exit $status: ${result:-$(tail -1 "$work/err")}")
    count=$((count + 1))
  done
done

[[ $count -gt 0 || ${#failures[@]} -gt 0 ]] || { echo "FAIL: no models listed" >&2; exit 1; }
if [[ ${#failures[@]} -gt 0 ]]; then
  printf 'FAIL: %s\n' "${failures[@]}" >&2
  echo "run_models: ${#failures[@]} failures, $count runs" >&2
  exit 1
fi
echo "run_models: all $count runs within max abs error 1e-4 x range and cosine 0.99999 (devices: ${runs[*]})"
