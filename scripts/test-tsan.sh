#!/usr/bin/env bash
# ThreadSanitizer stage: the concurrency tests (tests/unit/concurrency: the cpu plan's thread pool; one model, one plan per
# thread on several threads, on the reference backend, the cpu backend at 1 and 2 threads per plan,
# and the vulkan backend on Mesa's lavapipe) built with clang -fsanitize=thread in build-tsan, only
# the targets that test needs. Any data race or lock-order report fails it. Suppressions
# (tests/tsan.supp) cover only what ThreadSanitizer cannot see through in uninstrumented system
# libraries; each entry says why. scripts/test.sh runs it after the sanitizer stage. Warnings are
# errors, as in every CI build (MT_WERROR=OFF keeps them warnings).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/compiler-cache.sh
build=${MT_TSAN_BUILD:-build-tsan}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -fsanitize=thread" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -fsanitize=thread" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" -DMT_WERROR="${MT_WERROR:-ON}" > /dev/null
cmake --build "$build" -j"${MT_JOBS:-$(nproc)}" --target test_concurrency

export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/tests/tsan.supp ${TSAN_OPTIONS:-}"
export MT_REQUIRE_VULKAN=1  # a missing Vulkan device fails the vulkan case instead of skipping it
if [[ -e /usr/share/vulkan/icd.d/lvp_icd.x86_64.json ]]; then export VK_ICD_FILENAMES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json; fi
"$build/tests/test_concurrency"
