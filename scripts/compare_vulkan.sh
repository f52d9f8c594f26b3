#!/usr/bin/env bash
# Times mt's Vulkan backend beside ncnn's on the zoo models, fp32, fp16 and int8: the comparison of
# docs/vulkan-gpu.md. ncnn is built from its own source outside the tree and converts the models with
# its own tools; nothing of it enters the repository.
#
#   NCNN_SRC=DIR scripts/compare_vulkan.sh [--ncnn-src DIR] [--mt-bin DIR] [--device lavapipe|default]
#       [--models a,b] [--precisions fp32,fp16,int8] [--rounds N] [--warmup N] [--iterations N]
#
# Get ncnn's source with `git clone https://github.com/Tencent/ncnn` (no submodules needed: the
# build uses Debian's glslang). Needs what scripts/install-deps.sh installs (cmake, g++, protoc +
# libprotobuf-dev, Vulkan and mesa-vulkan-drivers for lavapipe, /usr/bin/python3 with torch and onnx
# for the model export) plus `apt-get install glslang-dev glslang-tools ninja-build`.
#
# Steps, each cached under ${XDG_CACHE_HOME:-~/.cache}/mt-compare-vulkan (rerunning is cheap):
#   1. ncnn: libncnn with Vulkan (Debian's glslang), ncnnoptimize, ncnn2table and ncnn2int8, built from --ncnn-src;
#      onnx2ncnn compiled by hand (ncnn's top-level CMake no longer builds it) from
#      tools/onnx with protoc; scripts/ncnn_vulkan_timer.cpp compiled against the installed libncnn.
#   2. models: scripts/export_models.py into the models directory compare_peers.py uses
#      (${XDG_CACHE_HOME:-~/.cache}/mt-compare-peers/models); ncnn's side is
#      scripts/onnx_for_ncnn.py | onnx2ncnn | ncnnoptimize, mt's is mt-convert | mt-fuse. For int8,
#      each quantizes that model with its own tool, calibrated on the model's own input (a timing,
#      not an accuracy, comparison): ncnn2table (KL) | ncnn2int8, and mt-quantize; both then run
#      with fp16 activations (ncnn's fp16 options, mt's --precision fp16).
#   3. timing, round-robin: each round runs every model and precision, ncnn then mt, each as its own
#      process (load, first run, --warmup runs, --iterations timed runs; the median is kept). The
#      result is the median of the rounds' medians, so a burst of other load hits one round of both.
#      ncnn's output of every run is compared with the model's expected.npy (PyTorch), so a broken
#      conversion cannot pass for a fast one.
#      Each run is also timed in CPU time (user + system of the process, all its threads: on lavapipe
#      the shaders run on the CPU, so this is the work both do, and it hardly depends on other load on
#      the machine, unlike latency): the same run again with one timed iteration, and the difference of
#      the two CPU times over ITERATIONS - 1 is the CPU time of one inference (loading, planning and
#      warm-up cancel out). lavapipe compiles each shader at its first dispatch (into Mesa's disk
#      cache), so the first round of new tools on a model can charge compilations to the long run;
#      the median of 3 rounds leaves such a round out.
#
# --device lavapipe (the default) points both at Mesa's CPU driver through VK_ICD_FILENAMES;
# --device default leaves the Vulkan loader alone, and each runtime takes its default device (the
# names both report are printed; a mismatch is an error).
# Prints the markdown table on stdout and writes it, with the raw per-round medians, to
# results.md / results.tsv in the cache. Exit codes: 0 done (a model a runtime cannot convert or
# run is a row saying why), 1 a build or export step failed, 2 a usage error.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SCRIPTS=$ROOT/scripts
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/mt-compare-vulkan
MODELS_DIR=${XDG_CACHE_HOME:-$HOME/.cache}/mt-compare-peers/models
LVP_ICD=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json

ncnn_src=${NCNN_SRC:-}
mt_bin=$ROOT/build/tools
device=lavapipe
models=resnet18,mobilenet_v2,mobilenet_v3_large,efficientnet_b0,resnet50
precisions=fp32,fp16,int8
rounds=3 warmup=2 iterations=5

usage() { sed -n '6,7p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
die() { echo "compare_vulkan.sh: $1" >&2; exit "${2:-1}"; }
log() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }
count() { [[ $1 =~ ^[0-9]+$ ]] || die "$2 must be a whole number, not '$1'" 2; echo "$1"; }

while [[ $# -gt 0 ]]; do
  [[ $1 == -h || $1 == --help ]] && { sed -n '2,42p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
  [[ $# -ge 2 ]] || usage
  case $1 in
    --ncnn-src) ncnn_src=$2 ;;
    --mt-bin) mt_bin=$2 ;;
    --device) device=$2 ;;
    --models) models=$2 ;;
    --precisions) precisions=$2 ;;
    --rounds) rounds=$(count "$2" --rounds) ;;
    --warmup) warmup=$(count "$2" --warmup) ;;
    --iterations) iterations=$(count "$2" --iterations) ;;
    *) usage ;;
  esac
  shift 2
done
[[ -n $ncnn_src ]] || die "no ncnn source: set NCNN_SRC or --ncnn-src to a clone of https://github.com/Tencent/ncnn" 2
[[ -f $ncnn_src/src/net.h && -f $ncnn_src/tools/onnx/onnx2ncnn.cpp ]] ||
  die "$ncnn_src: not an ncnn source tree (no src/net.h or tools/onnx/onnx2ncnn.cpp)" 2
ncnn_src=$(cd "$ncnn_src" && pwd)
for tool in mt-convert mt-fuse mt-quantize mt-bench; do
  [[ -x $mt_bin/$tool ]] || die "$mt_bin/$tool: not found (build mt, or pass --mt-bin)" 2
done
mt_bin=$(cd "$mt_bin" && pwd)
case $device in
  lavapipe) [[ -f $LVP_ICD ]] || die "$LVP_ICD: no lavapipe ICD (install mesa-vulkan-drivers)" 2
            export VK_ICD_FILENAMES=$LVP_ICD ;;
  default) ;;
  *) die "--device must be lavapipe or default, not '$device'" 2 ;;
esac
[[ $iterations -ge 2 && $rounds -ge 1 ]] || die "--iterations must be at least 2 and --rounds at least 1" 2
IFS=, read -r -a model_list <<<"$models"
IFS=, read -r -a precision_list <<<"$precisions"
for p in "${precision_list[@]}"; do [[ $p == fp32 || $p == fp16 || $p == int8 ]] || die "unknown precision '$p'" 2; done
wants_int8=false
for p in "${precision_list[@]}"; do [[ $p == int8 ]] && wants_int8=true; done

# ---- 1. ncnn, onnx2ncnn and the timer --------------------------------------------------------------
mkdir -p "$CACHE"
build=$CACHE/ncnn-build install=$CACHE/ncnn-install bin=$CACHE/bin
mkdir -p "$bin"
glslang_dir=$(dirname "$(ls /usr/lib/*/cmake/glslang/glslang-config.cmake /usr/lib/*/cmake/glslang/glslangConfig.cmake \
  2>/dev/null | head -1)")
[[ $glslang_dir != . ]] || die "no glslang CMake package: apt-get install glslang-dev glslang-tools"
if [[ ! -f $build/CMakeCache.txt ]] || ! grep -q "^CMAKE_HOME_DIRECTORY:INTERNAL=$ncnn_src\$" "$build/CMakeCache.txt"; then
  log "configuring ncnn from $ncnn_src"
  rm -rf "$build"
  cmake -S "$ncnn_src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNCNN_VULKAN=ON \
    -DNCNN_SYSTEM_GLSLANG=ON -Dglslang_DIR="$glslang_dir" -DNCNN_BUILD_TOOLS=ON -DNCNN_BUILD_EXAMPLES=OFF \
    -DNCNN_BUILD_BENCHMARK=OFF -DNCNN_BUILD_TESTS=OFF -DNCNN_PYTHON=OFF >"$CACHE/configure.log" 2>&1 ||
    die "configuring ncnn failed; see $CACHE/configure.log"
fi
log "building libncnn and ncnnoptimize (about 20 minutes on 2 cores the first time)"
cmake --build "$build" --target ncnn ncnnoptimize ncnn2table ncnn2int8 >"$CACHE/build.log" 2>&1 ||
  die "building ncnn failed; see $CACHE/build.log"
# Only the library's own install script: the tools this build skips would fail a full install.
cmake --install "$build/src" --prefix "$install" >"$CACHE/install.log" 2>&1 || die "installing libncnn failed; see $CACHE/install.log"
cp "$build/tools/ncnnoptimize" "$build/tools/quantize/ncnn2table" "$build/tools/quantize/ncnn2int8" "$bin/"

onnx2ncnn_src=$ncnn_src/tools/onnx
if [[ ! -x $bin/onnx2ncnn || $onnx2ncnn_src/onnx2ncnn.cpp -nt $bin/onnx2ncnn || $onnx2ncnn_src/onnx.proto -nt $bin/onnx2ncnn ]]; then
  log "compiling onnx2ncnn"
  mkdir -p "$CACHE/onnx2ncnn"
  protoc --proto_path="$onnx2ncnn_src" --cpp_out="$CACHE/onnx2ncnn" "$onnx2ncnn_src/onnx.proto"
  g++ -O2 -std=c++17 -I"$CACHE/onnx2ncnn" "$onnx2ncnn_src/onnx2ncnn.cpp" "$CACHE/onnx2ncnn/onnx.pb.cc" -lprotobuf \
    -lpthread -o "$bin/onnx2ncnn" 2>"$CACHE/onnx2ncnn.log" || die "compiling onnx2ncnn failed; see $CACHE/onnx2ncnn.log"
fi

timer_build=$CACHE/timer-build
mkdir -p "$CACHE/timer-src"
# A CMake project is how ncnn's static library brings its dependencies (glslang, OpenMP, threads).
cat >"$CACHE/timer-src/CMakeLists.txt.new" <<EOF
cmake_minimum_required(VERSION 3.16)
project(ncnn_vulkan_timer CXX)
find_package(ncnn REQUIRED)
add_executable(ncnn_vulkan_timer "$SCRIPTS/ncnn_vulkan_timer.cpp")
target_compile_features(ncnn_vulkan_timer PRIVATE cxx_std_17)
target_link_libraries(ncnn_vulkan_timer PRIVATE ncnn)
EOF
cmp -s "$CACHE/timer-src/CMakeLists.txt.new" "$CACHE/timer-src/CMakeLists.txt" ||
  mv "$CACHE/timer-src/CMakeLists.txt.new" "$CACHE/timer-src/CMakeLists.txt"
rm -f "$CACHE/timer-src/CMakeLists.txt.new"
{ cmake -S "$CACHE/timer-src" -B "$timer_build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -Dncnn_DIR="$(dirname "$(ls "$install"/lib*/cmake/ncnn/ncnnConfig.cmake | head -1)")" &&
  cmake --build "$timer_build"; } >"$CACHE/timer.log" 2>&1 || die "building the timer failed; see $CACHE/timer.log"
timer=$timer_build/ncnn_vulkan_timer

# ---- 2. models ---------------------------------------------------------------------------------------
log "exporting ${models} into $MODELS_DIR (skips models already current)"
/usr/bin/python3 "$SCRIPTS/export_models.py" --only "$models" --out "$MODELS_DIR" >&2 || die "exporting the models failed"

declare -A ncnn_failed mt_failed failed_int8  # failed_int8[ncnn|mt,model]: its int8 quantization
for m in "${model_list[@]}"; do
  src=$MODELS_DIR/$m work=$CACHE/models/$m
  mkdir -p "$work"
  if [[ ! -f $work/model.ncnn.param || $src/model.onnx -nt $work/model.ncnn.param ]]; then
    log "$m: converting for ncnn"
    rm -f "$work"/model.ncnn.*
    if ! { /usr/bin/python3 "$SCRIPTS/onnx_for_ncnn.py" "$src/model.onnx" "$work/for_ncnn.onnx" &&
           "$bin/onnx2ncnn" "$work/for_ncnn.onnx" "$work/raw.param" "$work/raw.bin" &&
           "$bin/ncnnoptimize" "$work/raw.param" "$work/raw.bin" "$work/opt.param" "$work/opt.bin" 0; } \
           >"$work/convert.log" 2>&1; then
      ncnn_failed[$m]="conversion failed: $(grep -v '^$' "$work/convert.log" | tail -1)"
    elif grep -q "not supported yet" "$work/convert.log"; then
      ncnn_failed[$m]="onnx2ncnn: $(grep -m1 'not supported yet' "$work/convert.log")"
    else
      mv "$work/opt.param" "$work/model.ncnn.param"
      mv "$work/opt.bin" "$work/model.ncnn.bin"
      rm -f "$work/for_ncnn.onnx" "$work"/raw.*
    fi
  fi
  if [[ ! -f $work/model.mt || $src/model.onnx -nt $work/model.mt || $mt_bin/mt-fuse -nt $work/model.mt ]]; then
    log "$m: converting for mt"
    if "$mt_bin/mt-convert" "$src/model.onnx" 2>"$work/mt-convert.log" | "$mt_bin/mt-fuse" >"$work/model.mt.tmp" 2>>"$work/mt-convert.log"; then
      mv "$work/model.mt.tmp" "$work/model.mt"
    else
      rm -f "$work/model.mt.tmp"
      mt_failed[$m]="conversion failed: $(tail -1 "$work/mt-convert.log")"
    fi
  fi
  if $wants_int8 && [[ -z ${ncnn_failed[$m]:-} ]] &&
     [[ ! -f $work/model_int8.ncnn.param || $work/model.ncnn.param -nt $work/model_int8.ncnn.param ]]; then
    log "$m: quantizing for ncnn int8"
    # ncnn2table reads the calibration input as [c, h, w] (no batch axis) with shape=[w,h,c].
    shape=$(/usr/bin/python3 - "$src/input.npy" "$work/calibration.npy" <<'PY'
import sys
import numpy as np
x = np.load(sys.argv[1]).astype(np.float32)
np.save(sys.argv[2], np.ascontiguousarray(x[0]))
print(",".join(str(d) for d in reversed(x.shape[1:])))
PY
)
    echo "$work/calibration.npy" >"$work/calibration.txt"
    if ! { "$bin/ncnn2table" "$work/model.ncnn.param" "$work/model.ncnn.bin" "$work/calibration.txt" "$work/ncnn.table" \
             "shape=[$shape]" method=kl type=1 thread=2 &&
           "$bin/ncnn2int8" "$work/model.ncnn.param" "$work/model.ncnn.bin" "$work/model_int8.ncnn.param" \
             "$work/model_int8.ncnn.bin" "$work/ncnn.table"; } >"$work/ncnn-quantize.log" 2>&1; then
      rm -f "$work"/model_int8.ncnn.*
      failed_int8[ncnn,$m]="ncnn2table | ncnn2int8 failed: $(tail -1 "$work/ncnn-quantize.log")"
    fi
  fi
  if $wants_int8 && [[ -z ${mt_failed[$m]:-} ]] &&
     [[ ! -f $work/model_int8.mt || $work/model.mt -nt $work/model_int8.mt || $mt_bin/mt-quantize -nt $work/model_int8.mt ]]; then
    log "$m: quantizing for mt int8"
    "$mt_bin/mt-quantize" -q "$work/model.mt" --calibration "$src/input.npy" -o "$work/model_int8.mt" \
      2>"$work/mt-quantize.log" || failed_int8[mt,$m]="mt-quantize failed: $(tail -1 "$work/mt-quantize.log")"
  fi
done

# ---- 3. timing -----------------------------------------------------------------------------------------
json() { /usr/bin/python3 -c "import json, sys; d = json.load(sys.stdin); print($1)"; }
results=$CACHE/results.tsv
printf 'round\tmodel\tprecision\truntime\tmedian_ms\tdevice\tmax_abs_error\tcosine\tload\tcpu_ms\n' >"$results"
cpu_file=$CACHE/cpu.txt
# cpu_seconds CMD...: runs CMD (its stdout passes through) and leaves its user + system seconds in $cpu_file.
cpu_seconds() { /usr/bin/time -f '%U %S' -o "$cpu_file" "$@"; }
cpu_sum() { awk 'END { print $1 + $2 }' "$cpu_file"; }
# cpu_per_inference LONG_CPU CMD...: runs CMD, the command that took LONG_CPU seconds with --iterations
# timed runs, now with one; prints (LONG_CPU - its CPU seconds) / (iterations - 1) in ms.
cpu_per_inference() {
  local long=$1
  shift
  cpu_seconds "$@" >/dev/null 2>&1 || { echo ""; return; }
  awk -v long="$long" -v short="$(cpu_sum)" -v n="$iterations" 'BEGIN { printf "%.1f", (long - short) / (n - 1) * 1e3 }'
}
ncnn_device="" mt_device=""
for ((round = 1; round <= rounds; round++)); do
  for m in "${model_list[@]}"; do
    src=$MODELS_DIR/$m work=$CACHE/models/$m
    in_name=$(json 'd["input"]["name"]' <"$src/info.json")
    out_name=$(json 'd["output"]["name"]' <"$src/info.json")
    for p in "${precision_list[@]}"; do
      load=$(cut -d' ' -f1 /proc/loadavg)
      if [[ -z ${ncnn_failed[$m]:-} && ( $p != int8 || -z ${failed_int8[ncnn,$m]:-} ) ]]; then
        ncnn_model=$work/model ncnn_precision=$p
        [[ $p == int8 ]] && ncnn_model=$work/model_int8 ncnn_precision=fp16
        ncnn_run=("$timer" "$ncnn_model.ncnn.param" "$ncnn_model.ncnn.bin" "$src/input.npy" "$in_name" "$out_name"
                  "$ncnn_precision" "$warmup")  # then ITERATIONS [EXPECTED.npy]
        if out=$(cpu_seconds "${ncnn_run[@]}" "$iterations" "$src/expected.npy" 2>"$work/ncnn-run.log"); then
          cpu_ms=$(cpu_per_inference "$(cpu_sum)" "${ncnn_run[@]}" 1)
          printf '%s\t%s\t%s\tncnn\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$m" "$p" "$(json 'd["median_ms"]' <<<"$out")" \
            "$(json 'd["device"]' <<<"$out")" "$(json 'd["max_abs_error"]' <<<"$out")" \
            "$(json 'd["cosine"]' <<<"$out")" "$load" "$cpu_ms" >>"$results"
          ncnn_device=$(json 'd["device"]' <<<"$out")
        else
          # ncnn names a layer it refuses before its last line ("extracting output failed"); an int8
          # failure leaves the model's float runs.
          why="run failed: $(grep -m1 'not supported' "$work/ncnn-run.log" || tail -1 "$work/ncnn-run.log")"
          if [[ $p == int8 ]]; then failed_int8[ncnn,$m]=$why; else ncnn_failed[$m]=$why; fi
        fi
      fi
      if [[ -z ${mt_failed[$m]:-} && ( $p != int8 || -z ${failed_int8[mt,$m]:-} ) ]]; then
        mt_model=$work/model.mt mt_precision=$p
        [[ $p == int8 ]] && mt_model=$work/model_int8.mt mt_precision=fp16
        mt_run=("$mt_bin/mt-bench" "$mt_model" -d vulkan --precision "$mt_precision" -w "$warmup"
                -i "$in_name=$src/input.npy" -f json -q -n)  # then ITERATIONS
        if out=$(cpu_seconds "${mt_run[@]}" "$iterations" 2>"$work/mt-run.log"); then
          cpu_ms=$(cpu_per_inference "$(cpu_sum)" "${mt_run[@]}" 1)
          printf '%s\t%s\t%s\tmt\t%s\t%s\t\t\t%s\t%s\n' "$round" "$m" "$p" "$(json 'd["timing"]["latency_ms"]["median"]' <<<"$out")" \
            "$(json 'd["setup"]["gpu_name"]' <<<"$out")" "$load" "$cpu_ms" >>"$results"
          mt_device=$(json 'd["setup"]["gpu_name"]' <<<"$out")
        else
          why="run failed: $(tail -1 "$work/mt-run.log")"  # an int8 failure leaves the float runs
          if [[ $p == int8 ]]; then failed_int8[mt,$m]=$why; else mt_failed[$m]=$why; fi
        fi
      fi
      log "round $round/$rounds: $m $p done"
    done
  done
done
echo "ncnn ran on: ${ncnn_device:-nothing}; mt ran on: ${mt_device:-nothing}" >&2
if [[ $device == default && -n $ncnn_device && -n $mt_device && $mt_device != "$ncnn_device"* ]]; then
  die "ncnn and mt chose different devices ($ncnn_device / $mt_device); limit VK_ICD_FILENAMES to one"
fi

# ---- the table -------------------------------------------------------------------------------------------
failures=$CACHE/failures.tsv
: >"$failures"
for m in "${model_list[@]}"; do
  [[ -z ${ncnn_failed[$m]:-} ]] || printf '%s\tncnn\t%s\n' "$m" "${ncnn_failed[$m]}" >>"$failures"
  [[ -z ${mt_failed[$m]:-} ]] || printf '%s\tmt\t%s\n' "$m" "${mt_failed[$m]}" >>"$failures"
  for runtime in ncnn mt; do
    [[ -z ${failed_int8[$runtime,$m]:-} ]] || printf '%s\t%s int8\t%s\n' "$m" "$runtime" "${failed_int8[$runtime,$m]}" >>"$failures"
  done
done
/usr/bin/python3 "$SCRIPTS/compare_vulkan_table.py" "$results" "$failures" "$warmup" "$iterations" | tee "$CACHE/results.md"
