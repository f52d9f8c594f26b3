#!/usr/bin/env bash
# Installs the dependencies, builds, and runs every test: unit tests,
# the op harness, and the integration tests on real models (exported by scripts/export_models.py);
# then the sanitizer stage (scripts/test-sanitizers.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
# The Vulkan tests run on Mesa's lavapipe (installed by install-deps.sh); here a missing Vulkan device
# fails them instead of skipping them.
export MT_REQUIRE_VULKAN=1
ctest --test-dir build --output-on-failure -j"${MT_JOBS:-$(nproc)}" "$@"
# The aarch64 stage: a cross build run under qemu against the x86 results (skipped with ctest arguments).
if [[ $# -eq 0 && ${MT_SKIP_AARCH64:-0} != 1 ]]; then scripts/test-aarch64.sh; fi
# Then the sanitizer stage: the unit, op and pipeline tests again under ASan + UBSan, in its own
# build directory (scripts/test-sanitizers.sh). Skipped when ctest arguments select tests, or with
# MT_SKIP_SANITIZERS=1.
if [[ $# -eq 0 && ${MT_SKIP_SANITIZERS:-0} != 1 ]]; then
  scripts/test-sanitizers.sh
fi
