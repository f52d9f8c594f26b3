#!/usr/bin/env bash
# Configures and builds mt into build/ (Release). Extra arguments go to cmake's configure step.
# Warnings are errors (MT_WERROR, as in every CI build); MT_WERROR=OFF scripts/build.sh keeps them
# warnings, e.g. with a newer compiler than CI's.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/compiler-cache.sh
jobs=${MT_JOBS:-$(nproc)}
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DMT_WERROR="${MT_WERROR:-ON}" "$@" >/dev/null
cmake --build build -j"$jobs"
