#!/usr/bin/env bash
# The test suite under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan, MT_SANITIZE=ON;
# any report aborts the test, leaks included): every unit test binary, the op harness, and the
# integration tests that push hostile and real models through the tools (hostile_inputs,
# convert_errors, and convert | fuse | run pipelines on the exported models). scripts/test.sh runs
# it after the main suite; MT_SKIP_SANITIZERS=1 skips it there. Extra arguments go to ctest.
#
# Built by scripts/configure-asan.sh (clang -O1, no Vulkan backend; shared with the fuzzing stage,
# scripts/test-fuzz.sh, which builds its targets in the same directory), only the targets these
# tests need.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${MT_ASAN_BUILD:-build-asan}
jobs=${MT_JOBS:-$(nproc)}
scripts/configure-asan.sh "$build"
# Every unit area this build defines: tests/unit/vulkan exists only where the vulkan backend is
# built, and this build has none.
targets=$(cmake --build "$build" --target help)
units=()
for dir in tests/unit/*/; do
  unit=test_$(basename "$dir")
  compgen -G "$dir*.cpp" > /dev/null && grep -qx "\.\.\. $unit" <<<"$targets" && units+=("$unit")
done
cmake --build "$build" -j"$jobs" --target "${units[@]}" test_op_harness mt-convert mt-opnames mt-fuse mt-run mt-bench

# The models exported for the main suite (scripts/test.sh builds in build/) are reused: exporting
# them again would cost minutes of PyTorch.
if [[ -d build/testdata && ! -e "$build/testdata" ]]; then ln -s "$PWD/build/testdata" "$build/testdata"; fi

# Leaks are reported too; abort_on_error so that a report is never mistaken for a refusal with an
# exit status.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --test-dir "$build" --output-on-failure -j"$jobs" \
  -R '^(unit\..*|ops\.harness|fixture\.export_models|integration\.(hostile_inputs|convert_errors|fuse_models))$' "$@"
