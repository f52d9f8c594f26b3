#!/usr/bin/env bash
# Installs every Debian package that building, testing and the demo need, and nothing else.
# Idempotent and non-interactive; run as root (or with sudo available).
set -euo pipefail

packages=(
  # build
  cmake g++ make pkg-config ccache
  libcli11-dev libspdlog-dev nlohmann-json3-dev doctest-dev
  libonnx-dev libprotobuf-dev protobuf-compiler
  libxnnpack-dev libpthreadpool-dev libcpuinfo-dev
  libvulkan-dev libvulkan-volk-dev glslc
  libpng-dev libjpeg62-turbo-dev
  # tests and demo: Vulkan on the CPU, model export and reference outputs
  mesa-vulkan-drivers vulkan-validationlayers
  python3-torch python3-torchvision python3-onnx python3-numpy python3-sklearn
  # mt-bench tests (JSON schema) and scripts/compare_peers.py (chart)
  python3-jsonschema python3-matplotlib
  # fuzzing (scripts/fuzz.sh): clang with libFuzzer; PIL writes the image seed corpus
  clang libclang-rt-14-dev python3-pil
  # the aarch64 stage (scripts/cross-aarch64.sh, test-aarch64.sh): cross compiler and qemu-aarch64
  crossbuild-essential-arm64 qemu-user
  # onnxruntime-node (npm) as the reference for pre-quantized and trained models; speech for their inputs
  nodejs espeak-ng
  # ONNX's backend conformance suite (scripts/test-conformance.sh)
  libonnx-testdata
)
# npm comes with NodeSource's nodejs; with Debian's nodejs it is a package of its own.
command -v npm >/dev/null 2>&1 || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present" >&2
  exit 0
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
echo "install-deps: installing ${missing[*]}" >&2
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
