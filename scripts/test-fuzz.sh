#!/usr/bin/env bash
# CI fuzzing stage: every libFuzzer target (tests/fuzz: the .mt reader, the ONNX importer, the .npy
# reader, the image readers) for MT_FUZZ_SECONDS (default 30) each, on its seed corpus and the
# regression inputs under tests/data; any crash, sanitizer report, timeout or runaway allocation
# fails. Built in the sanitizer stage's directory (build-asan, scripts/configure-asan.sh), so after
# scripts/test-sanitizers.sh only the four fuzz targets are left to compile. scripts/test.sh runs it
# after the sanitizer stage; scripts/fuzz.sh runs longer.
set -euo pipefail
cd "$(dirname "$0")/.."
# A fixed libFuzzer seed (MT_FUZZ_SEED, default 1): CI replays the same mutations on every run, so a
# finding is reproducible with the same command and a green main stays green; new ground is for
# scripts/fuzz.sh, whose runs draw a random seed.
export MT_FUZZ_SEED=${MT_FUZZ_SEED:-1}
exec scripts/fuzz.sh "${MT_FUZZ_SECONDS:-30}"
