#!/usr/bin/env bash
# Configures the one clang build directory that the sanitizer stage (scripts/test-sanitizers.sh),
# the CI fuzzing stage (scripts/test-fuzz.sh) and long fuzzing runs (scripts/fuzz.sh) share:
# AddressSanitizer + UndefinedBehaviorSanitizer on everything, and libFuzzer's coverage
# instrumentation (MT_FUZZ, -fsanitize=fuzzer-no-link) so that the fuzz targets link against the
# same libraries the tests use. The tests and tools link without libFuzzer (the sanitizer runtime
# defines the coverage callbacks), so one set of objects serves both stages.
#
# Clang at -O1 with line tables only (about 2.5x faster to compile than GCC's -O2 -g, which matters
# on a 2-core CI machine), and without the Vulkan backend (its driver is not instrumented and holds
# allocations for the life of the process). Warnings are errors, as in every CI build (MT_WERROR=OFF
# keeps them warnings).
#   scripts/configure-asan.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/compiler-cache.sh
cmake -S . -B "$1" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
  -DMT_SANITIZE=ON -DMT_FUZZ=ON -DMT_GLSLC=OFF -DMT_WERROR="${MT_WERROR:-ON}" > /dev/null
