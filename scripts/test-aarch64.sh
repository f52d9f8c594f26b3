#!/usr/bin/env bash
# CI stage: mt built for aarch64 (scripts/cross-aarch64.sh) and run under qemu-aarch64, where the cpu
# backend runs XNNPACK's NEON kernels and none of mt's x86 paths. Asserts, not prints:
#  - mt-run on a subset of the ci models (fp32 and int8, plain and prepacked for cpu) gives the x86
#    results within the cpu tolerances (fp32: max abs error <= 1e-4 x range, cosine >= 0.99999, also
#    against PyTorch; int8: see INT8_TOLERANCE), and x86 itself gives them with its AVX-512 GEMM and
#    Winograd turned off, and on an emulated x86 CPU without AVX-512 (qemu-x86_64 -cpu Haswell);
#  - the op harness's cpu cases (every op, 1 and 2 threads) against the reference kernels, on arm64;
#  - the C API's unit tests; examples/c/classify.c cross-built against the arm64 libmt.so picks mt-run's class;
#  - mt-convert converts to the same models; mt-opnames and mt-bench run; --device vulkan without an arm64 Vulkan driver is refused in one line.
# Needs the x86 build (build/) and the ci models (ctest -R fixture.export_models, or MT_TEST_MODELS);
# scripts/test.sh runs it after ctest. MT_AARCH64_MODELS="a b" picks other models of the ci set.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
source tests/integration/common.bash
python=/usr/bin/python3
x86=build/tools
models_dir=${MT_TEST_MODELS:-$PWD/build/testdata}
models=${MT_AARCH64_MODELS:-mobilenet_v3_small squeezenet1_1}
sysroot=${MT_AARCH64_SYSROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/mt/aarch64-sysroot}
arm=${MT_AARCH64_BUILD:-build-aarch64}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# int8: x86 (AVX2/AVX-512) and NEON requantize with the same fp32 arithmetic, but nothing promises
# bit equality across instruction sets; one int8 step of a logit is about 1% of its range.
INT8_TOLERANCE=(--atol-range 0.02 --rtol 0 --min-cosine 0.999)
FP32_TOLERANCE=(--atol-range 1e-4 --rtol 0 --min-cosine 0.99999)

for name in $models; do
  [[ -f $models_dir/$name/model.onnx ]] || fail "$models_dir/$name/model.onnx missing: run ctest --test-dir build -R fixture.export_models"
done
cmake --build build -j"${MT_JOBS:-$(nproc)}" --target mt-convert mt-fuse mt-quantize mt-prepack mt-run >/dev/null
scripts/cross-aarch64.sh mt-run mt-opnames mt-bench mt-convert test_op_harness test_capi mt >"$work/build.log" 2>&1 ||
  fail "cross build: $(tail -20 "$work/build.log")"
echo "test-aarch64: cross build done at $((SECONDS - start)) s"
# arm64 [-cpu MODEL] COMMAND...: COMMAND under qemu-aarch64, with the sysroot's loader and libraries.
arm64() {
  local cpu=(-cpu max)
  if [[ $1 == -cpu ]]; then cpu=(-cpu "$2"); shift 2; fi
  qemu-aarch64 "${cpu[@]}" -L "$sysroot" -E LD_LIBRARY_PATH="$PWD/$arm/lib/capi" "$@"
}
readelf -h "$arm/tools/mt-run" | grep -q AArch64 || fail "$arm/tools/mt-run is not an aarch64 binary"

# The models, made on x86: NAME.mt (fp32), NAME.int8.mt (calibrated on its own input), and each
# prepacked for cpu. digits is the shipped classifier, 20 test images per batch.
"$python" -c 'import numpy as n, sys; n.save(sys.argv[2], n.load(sys.argv[1])[:20]); n.save(sys.argv[4], n.load(sys.argv[3])[:20])' \
  models/digits-test.npy "$work/digits.input.npy" models/digits-test-logits.npy "$work/digits.expected.npy"
"$x86/mt-convert" -q models/digits.onnx --input-shape image:20,1,8,8 | "$x86/mt-fuse" -q -o "$work/digits.mt"
"$x86/mt-quantize" -q "$work/digits.mt" --calibration models/digits-calib.npy -o "$work/digits.int8.mt"
for name in $models; do
  cp "$models_dir/$name/input.npy" "$work/$name.input.npy"
  cp "$models_dir/$name/expected.npy" "$work/$name.expected.npy"
  "$x86/mt-convert" -q "$models_dir/$name/model.onnx" | "$x86/mt-fuse" -q -o "$work/$name.mt"
  "$x86/mt-quantize" -q "$work/$name.mt" --calibration "$work/$name.input.npy" -o "$work/$name.int8.mt"
done

runs=0
for name in digits $models; do
  for kind in "" .int8; do
    for packed in "" .cpu; do
      model="$work/$name$kind$packed.mt"
      # Prepacked for any CPU (--cpu generic): the arm64 build has none of the AVX-512 kernels.
      [[ -z $packed ]] || "$x86/mt-prepack" -q --backend cpu --cpu generic "$work/$name$kind.mt" -o "$model"
      input="$work/$name.input.npy"
      tolerance=("${FP32_TOLERANCE[@]}")
      [[ -z $kind ]] || tolerance=("${INT8_TOLERANCE[@]}")
      "$x86/mt-run" -q --device cpu "$model" --input "$input" --output "$work/x86.npy" >/dev/null
      if [[ -z $kind ]]; then  # fp32: x86 and its generic path against PyTorch
        "$x86/mt-run" -q --device cpu "$model" --input "$input" --compare "$work/$name.expected.npy" "${tolerance[@]}" \
          >"$work/out" || fail "x86 $name$packed differs from PyTorch: $(grep ^compare "$work/out")"
        # As on a CPU without our AVX kernels; the unpacked model also without Winograd (the prepacked
        # one stores Winograd's points, which need it).
        generic=(MT_CPU_TARGET=generic)
        [[ -n $packed ]] || generic+=(MT_CPU_WINOGRAD=0)
        env "${generic[@]}" "$x86/mt-run" -q --device cpu "$model" --input "$input" \
          --compare "$work/$name.expected.npy" "${tolerance[@]}" >"$work/out" ||
          fail "x86 generic path, $name$packed, differs from PyTorch: $(grep ^compare "$work/out")"
      fi
      # qemu's default CPU has every arm64 extension XNNPACK looks for (dot product, fp16 arithmetic);
      # a Cortex-A53 has plain ARMv8.0 NEON, as older phones do: XNNPACK picks other kernels there.
      for cpu in max cortex-a53; do
        arm64 -cpu "$cpu" "$arm/tools/mt-run" --device cpu "$model" --input "$input" --compare "$work/x86.npy" \
          "${tolerance[@]}" >"$work/out" 2>"$work/err" ||
          fail "arm64 ($cpu) $name$kind$packed: $(grep ^compare "$work/out") $(tail -1 "$work/err")"
        echo "ok   arm64 ($cpu) $name$kind$packed: $(grep ^compare "$work/out" | sed 's/^compare [^ ]* with [^:]*: //')"
        runs=$((runs + 1))
      done
    done
  done
done
echo "test-aarch64: $runs model runs match x86 at $((SECONDS - start)) s"

# mt-convert on arm64 (libonnx:arm64) makes the same model as on x86: equal results, bit for bit.
for name in digits $models; do
  onnx="$models_dir/$name/model.onnx"
  [[ $name != digits ]] || onnx=models/digits.onnx
  arm64 "$arm/tools/mt-convert" -q "$onnx" -o "$work/$name.arm64.mt"
  "$x86/mt-convert" -q "$onnx" -o "$work/$name.x86.mt"
  "$x86/mt-run" -q --device cpu "$work/$name.x86.mt" --random-input --output "$work/x86.npy" >/dev/null
  "$x86/mt-run" -q --device cpu "$work/$name.arm64.mt" --random-input --compare "$work/x86.npy" --atol 0 --rtol 0 \
    >"$work/out" || fail "arm64 mt-convert of $name differs from x86's: $(grep ^compare "$work/out")"
done
echo "ok   arm64 mt-convert: the same models as x86's"

# An x86 CPU without AVX-512 (qemu-x86_64 -cpu Haswell: AVX2, and qemu emulates no AVX-512 at all):
# the x86 binary must pick its generic paths from the CPU's features alone (an AVX-512 instruction
# would be SIGILL here) and still match PyTorch, plain and prepacked.
for model in digits.mt digits.cpu.mt; do
  qemu-x86_64 -cpu Haswell "$x86/mt-run" -q --device cpu "$work/$model" --input "$work/digits.input.npy" \
    --compare "$work/digits.expected.npy" "${FP32_TOLERANCE[@]}" >"$work/out" 2>/dev/null ||
    fail "x86 without AVX-512 (qemu -cpu Haswell), $model: $(grep ^compare "$work/out")"
  echo "ok   x86 without AVX-512 $model: $(grep ^compare "$work/out" | sed 's/^compare [^ ]* with [^:]*: //')"
done

# Tools and errors on arm64.
for model in digits.int8.mt digits.cpu.mt; do
  arm64 "$arm/tools/mt-opnames" --check cpu "$work/$model" >/dev/null || fail "arm64 mt-opnames --check cpu $model"
done
arm64 "$arm/tools/mt-bench" --device cpu "$work/digits.mt" --warmup 1 --iterations 3 >"$work/bench" 2>&1 ||
  fail "arm64 mt-bench: $(tail -3 "$work/bench")"
expect 4 "vulkan" arm64 "$arm/tools/mt-run" --device vulkan "$work/digits.mt" --random-input

# The C example against the arm64 libmt.so, on one digit, against x86 mt-run's best class.
"$python" -c 'import numpy as n, sys; n.save(sys.argv[2], n.load(sys.argv[1])[7:8])' models/digits-test.npy "$work/one.npy"
"$x86/mt-convert" -q models/digits.onnx | "$x86/mt-fuse" -q -o "$work/digits1.mt"
aarch64-linux-gnu-gcc --sysroot="$sysroot" -std=c11 -Wall -Wextra -Werror -Iinclude examples/c/classify.c \
  -L"$arm/lib/capi" -lmt -Wl,-rpath-link,"$sysroot/usr/lib/aarch64-linux-gnu" -o "$work/classify"
arm64 "$work/classify" "$work/digits1.mt" "$work/one.npy" models/digits-labels.txt >"$work/classify.txt" ||
  fail "arm64 classify failed"
expected=$("$x86/mt-run" "$work/digits1.mt" --input "$work/one.npy" --topk 1 --json 2>/dev/null |
  "$python" -c 'import json, sys; print(json.load(sys.stdin)["outputs"][0]["topk"][0][0]["index"])')
[[ $(head -1 "$work/classify.txt" | awk '{print $3}') == "$expected" ]] ||
  fail "arm64 classify says $(head -1 "$work/classify.txt"), x86 mt-run class $expected"
sed 's/^/     classify (arm64): /' "$work/classify.txt"

# The C API's unit tests (error paths, one model on many threads).
arm64 "$arm/tests/test_capi" >"$work/capi" 2>&1 || fail "arm64 test_capi: $(grep -E 'ERROR' "$work/capi" | head -5)"
echo "ok   arm64 test_capi: $(grep -E '^\[doctest\] test cases' "$work/capi" | tr -s ' ')"

# The op harness: cpu against the reference on every op case (vulkan is skipped: no arm64 driver).
# (The plan tests of test_backend_plans.cpp plan every backend and need a Vulkan driver.)
MT_REQUIRE_VULKAN=0 arm64 "$arm/tests/ops/test_op_harness" -s \
  --test-case='every registered op*,every backend matches*,the cpu backend accepts*' >"$work/ops" 2>&1 ||
  fail "arm64 op harness: $(grep -E 'ERROR|FAIL' "$work/ops" | head -10)"
grep -q "backend runs compared" "$work/ops" || fail "arm64 op harness compared nothing: $(tail -5 "$work/ops")"
echo "ok   arm64 $(grep -o 'op harness: .*' "$work/ops")"

echo "test-aarch64: passed in $((SECONDS - start)) s"
