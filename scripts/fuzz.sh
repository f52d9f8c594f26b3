#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, clang, ASan + UBSan) in build-fuzz and runs each for a
# bounded time from a seed corpus of real files (made once by tests/fuzz/make_corpus.sh).
#   scripts/fuzz.sh [SECONDS_EACH] [TARGET...]     default 60 s each; targets: model npy image onnx
# A crash, sanitizer report, timeout (> 30 s per input: a large JPEG, or an ONNX graph folding a
# million-element constant, takes seconds under the sanitizers and coverage) or allocation beyond
# 2 GiB stops that target with its input saved under build-fuzz/artifacts/: turn it into a
# regression test, then fix it.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(model npy image onnx)
build=${MT_FUZZ_BUILD:-build-fuzz}

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DMT_FUZZ=ON -DBUILD_TESTING=OFF > /dev/null
cmake --build "$build" -j"${MT_JOBS:-$(nproc)}" --target "${targets[@]/#/fuzz_}" mt-convert
if [[ ! -d "$build/corpus" ]]; then
  PATH="$PWD/$build/tools:$PATH" tests/fuzz/make_corpus.sh "$build/corpus.tmp"
  mv "$build/corpus.tmp" "$build/corpus"
fi
mkdir -p "$build/artifacts"
status=0
for target in "${targets[@]}"; do
  echo "== fuzz_$target for ${seconds}s" >&2
  mkdir -p "$build/found/$target"  # new inputs go here; the seed corpus stays as generated
  "$build/tests/fuzz/fuzz_$target" "$build/found/$target" "$build/corpus/$target" -max_total_time="$seconds" \
    -timeout=30 -rss_limit_mb=2048 -malloc_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$build/artifacts/${target}-" 2>&1 | grep -v -e '^#[0-9]' -e '# Uses: ' || status=1
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
done
if ((status)); then
  echo "fuzz: findings in $build/artifacts" >&2
  exit 1
fi
