#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) in the sanitizer build directory (build-asan, configured
# by scripts/configure-asan.sh: clang, ASan + UBSan, coverage) and runs each for a bounded time from
# its seed corpus of real files (made once by tests/fuzz/make_corpus.sh) and the regression inputs
# under tests/data (tests/data/fuzz/TARGET; for images also tests/data/image).
#   scripts/fuzz.sh [SECONDS_EACH] [TARGET...]     default 60 s each; default targets: every
#   tests/fuzz/fuzz_TARGET.cpp (model npy image onnx, and any added there)
# CI runs it for 30 s each with a fixed seed (scripts/test-fuzz.sh); MT_FUZZ_SEED=N fixes the
# seed here too (libFuzzer draws one otherwise); longer runs find more.
# A crash, sanitizer report, timeout (> 30 s per input: a large JPEG, or an ONNX graph folding a
# million-element constant, takes seconds under the sanitizers and coverage) or allocation beyond
# 2 GiB stops that target with its input saved under BUILD/artifacts/: copy it into
# tests/data/fuzz/TARGET/ (replayed from then on, here and by a unit test), then fix it.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
  for source in tests/fuzz/fuzz_*.cpp; do targets+=("$(basename "$source" .cpp | sed 's/^fuzz_//')"); done
fi
build=${MT_FUZZ_BUILD:-${MT_ASAN_BUILD:-build-asan}}

scripts/configure-asan.sh "$build"
cmake --build "$build" -j"${MT_JOBS:-$(nproc)}" --target "${targets[@]/#/fuzz_}" mt-convert
if [[ ! -d "$build/corpus" ]]; then
  # The op models exported for the tests (build/testdata, or this build's) seed the corpus when present.
  models=
  for dir in "$build/testdata" build/testdata; do [[ -d $dir ]] && models=$dir && break; done
  PATH="$PWD/$build/tools:$PATH" MT_TEST_MODELS=$models tests/fuzz/make_corpus.sh "$build/corpus.tmp"
  mv "$build/corpus.tmp" "$build/corpus"
fi
mkdir -p "$build/artifacts"
status=0
for target in "${targets[@]}"; do
  echo "== fuzz_$target for ${seconds}s" >&2
  mkdir -p "$build/found/$target"  # new inputs go here; the seed corpus stays as generated
  regressions=()
  for dir in "tests/data/fuzz/$target" $([[ $target == image ]] && echo tests/data/image); do
    [[ -d $dir ]] && regressions+=("$dir")
  done
  "$build/tests/fuzz/fuzz_$target" "$build/found/$target" "$build/corpus/$target" "${regressions[@]}" \
    -max_total_time="$seconds" ${MT_FUZZ_SEED:+-seed="$MT_FUZZ_SEED"} -timeout=30 -rss_limit_mb=2048 -malloc_limit_mb=2048 -print_final_stats=1 -print_funcs=0 \
    -artifact_prefix="$build/artifacts/${target}-" 2>&1 | grep -v -e '^#[0-9]' -e '# Uses: ' || status=1
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
done
if ((status)); then
  echo "fuzz: findings in $build/artifacts: copy each into tests/data/fuzz/TARGET/ as a regression input" >&2
  exit 1
fi
