#!/usr/bin/env bash
# Converts every ci test model (scripts/export_models.py --set ci, in $MT_TEST_MODELS) with mt-convert and
# checks the result: the op names mt-opnames lists equal tests/integration/data/opnames/<model>.txt,
# `mt-convert model.onnx | mt-opnames` gives the same list through a pipe, and the inputs and outputs that
# `mt-opnames --info --format json` reports (name, dtype, shape) match the model's info.json.
# Stops at the first failure with a message naming the model and the check.
set -euo pipefail

: "${MT_SOURCE_DIR:?MT_SOURCE_DIR must name the source tree}"
source "$MT_SOURCE_DIR/tests/integration/common.bash"
: "${MT_TEST_MODELS:?MT_TEST_MODELS must name the directory scripts/export_models.py --set ci wrote}"
python=/usr/bin/python3
expected_dir="$MT_SOURCE_DIR/tests/integration/data/opnames"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Compares the ios of a converted model ($1: mt-opnames --info --format json) with info.json ($2).
# Prints a one-line difference and exits 1 on mismatch.
compare_io() {
  "$python" - "$1" "$2" <<'EOF'
import json, sys
mt, info = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
for kind, key in (("inputs", "input"), ("outputs", "output")):
    want = [{"name": info[key]["name"], "dtype": info[key]["dtype"], "shape": info[key]["shape"]}]
    got = [{"name": t["name"], "dtype": t["dtype"], "shape": t["shape"]} for t in mt[kind]]
    # An output whose rows depend on the data (NonMaxSuppression's): mt plans it at its largest size,
    # at least the rows PyTorch gave, with its count of valid rows as the next output.
    count = {"name": want[0]["name"] + ".valid_rows", "dtype": "int64", "shape": []}
    if kind == "outputs" and len(got) == 2 and got[1] == count and got[0]["shape"][1:] == want[0]["shape"][1:] \
            and got[0]["shape"][0] >= want[0]["shape"][0]:
        want = [dict(want[0], shape=got[0]["shape"]), count]
    if got != want:
        sys.exit(f"{kind}: mt-opnames --info says {got}, info.json says {want}")
EOF
}

models=$("$python" "$MT_SOURCE_DIR/scripts/export_models.py" --list --set ci)
count=0
for name in $models; do
  dir="$MT_TEST_MODELS/$name"
  expected="$expected_dir/$name.txt"
  [[ -f "$dir/model.onnx" && -f "$dir/info.json" ]] ||
    fail "$name: $dir/model.onnx or info.json missing (run scripts/export_models.py --set ci --out $MT_TEST_MODELS)"
  [[ -f "$expected" ]] || fail "$name: no expected op list $expected"

  echo "== $name: mt-convert model.onnx -o $name.mt"
  mt-convert "$dir/model.onnx" -o "$work/$name.mt" || fail "$name: mt-convert exited with $?"

  echo "   mt-opnames: op names equal $(basename "$expected")"
  mt-opnames "$work/$name.mt" > "$work/$name.ops" || fail "$name: mt-opnames exited with $?"
  diff -u "$expected" "$work/$name.ops" >&2 || fail "$name: op names differ from $expected (- expected, + got)"

  echo "   mt-convert model.onnx | mt-opnames: same op names through a pipe"
  mt-convert "$dir/model.onnx" | mt-opnames > "$work/$name.pipe.ops" || fail "$name: mt-convert | mt-opnames failed"
  diff -u "$expected" "$work/$name.pipe.ops" >&2 || fail "$name: op names through the pipe differ from $expected"

  echo "   mt-opnames --info: input/output name, dtype, shape equal info.json"
  mt-opnames --info --format json "$work/$name.mt" > "$work/$name.info.json" ||
    fail "$name: mt-opnames --info exited with $?"
  compare_io "$work/$name.info.json" "$dir/info.json" || fail "$name: graph inputs/outputs differ from info.json"
  count=$((count + 1))
done
[[ $count -gt 0 ]] || fail "no models listed by export_models.py --list --set ci"
echo "convert_models: $count models converted and checked"
