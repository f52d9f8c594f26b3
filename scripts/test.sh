#!/usr/bin/env bash
# Installs the dependencies, builds, and runs every test: unit tests,
# the op harness, and the integration tests on real models (exported by scripts/export_models.py).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
ctest --test-dir build --output-on-failure -j"${MT_JOBS:-$(nproc)}" "$@"
