#!/usr/bin/env bash
# Checks that two builds of mt compute the same bits: every model of a test-model directory
# (scripts/export_models.py's layout: NAME/model.onnx + NAME/input.npy) goes through the same
# pipeline with each build's tools, and the files each step writes and every output of mt-run must
# be byte-identical. A restructuring that claims "behaviour unchanged" shows it with this script.
#
#   scripts/compare_builds.sh OLD_BUILD NEW_BUILD MODELS_DIR [NAME...]
#
# Steps per model: mt-convert, mt-fuse, mt-quantize (calibrated on the model's own input), each
# file compared byte for byte (.mt files whose header alone differs, a format-version change, are
# counted apart); then mt-run of the fused and the int8 model on reference, cpu at 1 and 2
# threads, cpu from mt-prepack --backend cpu, and vulkan fp32 and fp16 where a Vulkan device
# exists, every output compared byte for byte. Prints one line per model and step that differs,
# and a summary on stdout; exits 1 if anything differs, 2 on a usage error. A step the old build
# refuses is skipped for both (the new build must refuse it too).
set -uo pipefail

usage() { echo "usage: $0 OLD_BUILD NEW_BUILD MODELS_DIR [NAME...]" >&2; exit 2; }
[[ $# -ge 3 ]] || usage
old=$(cd "$1" && pwd) || usage
new=$(cd "$2" && pwd) || usage
models=$(cd "$3" && pwd) || usage
shift 3
for b in "$old" "$new"; do
  [[ -x $b/tools/mt-run ]] || { echo "$0: $b/tools/mt-run: no such tool (a build directory?)" >&2; exit 2; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
have_vulkan=0
"$old/tools/mt-run" --list-devices 2>/dev/null | grep -q '^vulkan' && have_vulkan=1

names=("$@")
if [[ ${#names[@]} -eq 0 ]]; then
  for d in "$models"/*/; do [[ -f $d/model.onnx && -f $d/input.npy ]] && names+=("$(basename "$d")"); done
fi

checked=0 differ=0 skipped=0 header_only=0
report() { echo "DIFFER $1: $2"; differ=$((differ + 1)); }

# step NAME TAG -- COMMAND...: runs COMMAND with each build's tools first on PATH, in
# $work/{old,new}/NAME (the same relative paths on both sides, since the tools record their
# arguments in the file's provenance). Returns 1 if the old build failed.
step() {
  local name=$1 tag=$2; shift 3
  local rc_old rc_new
  for side in old new; do
    local bin=$old; [[ $side == new ]] && bin=$new
    local dir=$work/$side/$name
    mkdir -p "$dir"
    local rc=0
    (cd "$dir" && PATH="$bin/tools:$PATH" "$@" >"$tag.stdout" 2>"$tag.stderr") || rc=$?
    if [[ $side == old ]]; then rc_old=$rc; else rc_new=$rc; fi
  done
  if [[ $rc_old -ne 0 ]]; then
    [[ $rc_new -ne 0 ]] || report "$name" "$tag: the old build refused it (exit $rc_old), the new one ran it"
    skipped=$((skipped + 1))
    return 1
  fi
  [[ $rc_new -eq 0 ]] || { report "$name" "$tag: the new build failed (exit $rc_new): $(tail -1 "$work/new/$name/$tag.stderr")"; return 1; }
  return 0
}

same() {  # same NAME FILE: byte comparison of one file written by both builds
  local name=$1 file=$2 a=$work/old/$name/$2 b=$work/new/$name/$2
  checked=$((checked + 1))
  cmp -s "$a" "$b" && return 0
  # A .mt file whose graph and data sections (everything after the 128-byte header) are identical
  # differs only in the header's format version and checksums: a format change, not a result change.
  if [[ $file == *.mt ]] && cmp -s <(tail -c +129 "$a") <(tail -c +129 "$b"); then
    header_only=$((header_only + 1))
    return 0
  fi
  report "$name" "$file differs"
}

for name in "${names[@]}"; do
  src=$models/$name
  input=$src/input.npy
  step "$name" convert -- mt-convert "$src/model.onnx" -o model.mt || continue
  same "$name" model.mt
  step "$name" fuse -- mt-fuse model.mt -o fused.mt || continue
  same "$name" fused.mt
  runs=(fused)
  if step "$name" quantize -- mt-quantize fused.mt --calibration "$input" -o int8.mt; then
    same "$name" int8.mt
    runs+=(int8)
  fi
  for m in "${runs[@]}"; do
    for config in "reference" "cpu 1" "cpu 2" "vulkan fp32" "vulkan fp16"; do
      read -r device opt <<<"$config"
      args=(--device "$device")
      case $device in
        cpu) args+=(--threads "$opt") ;;
        vulkan) [[ $have_vulkan == 1 ]] || continue; args+=(--precision "$opt") ;;
      esac
      tag="run-$m-$device${opt:+-$opt}"
      step "$name" "$tag" -- mt-run $m.mt --input "$input" --output-dir $tag -q "${args[@]}" || continue
      for f in "$work/old/$name/$tag"/*.npy; do same "$name" "$tag/$(basename "$f")"; done
    done
    if step "$name" "prepack-$m" -- mt-prepack --backend cpu $m.mt -o $m-cpu.mt; then
      tag=run-$m-prepacked-cpu
      if step "$name" "$tag" -- mt-run $m-cpu.mt --input "$input" --output-dir $tag -q --device cpu; then
        for f in "$work/old/$name/$tag"/*.npy; do same "$name" "$tag/$(basename "$f")"; done
      fi
    fi
  done
  rm -rf "$work/old/$name" "$work/new/$name"
done

echo "compare_builds: ${#names[@]} models, $checked files compared, $differ differ" \
  "($header_only .mt files differ only in their header: format version and checksums)," \
  "$skipped steps the old build refused"
[[ $differ -eq 0 ]]
