#!/usr/bin/env bash
# Cross-builds mt for aarch64 (arm64) Linux into build-aarch64/ with Debian's cross toolchain and
# the toolchain file cmake/aarch64-linux-gnu.cmake; qemu-user runs the result (scripts/test-aarch64.sh).
#   scripts/cross-aarch64.sh [TARGET...]     default: every target
# Idempotent; works on a fresh Debian 12 (bookworm) machine. Run as root or with sudo.
#
# The arm64 libraries go into a private sysroot, ${XDG_CACHE_HOME:-~/.cache}/mt/aarch64-sysroot:
# the .debs are resolved by apt with its own state and architecture (nothing is added to the
# system's dpkg database) and unpacked with dpkg -x. Multiarch (:arm64 packages installed on the
# machine) would be simpler, but a -dev package that is not Multi-Arch: same replaces its amd64
# twin, which on a shared machine breaks the native build.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/compiler-cache.sh
cache=${XDG_CACHE_HOME:-$HOME/.cache}/mt
sysroot=${MT_AARCH64_SYSROOT:-$cache/aarch64-sysroot}
build=${MT_AARCH64_BUILD:-build-aarch64}

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"

# 1. Host tools (amd64 packages, nothing replaced): the cross compiler and qemu-aarch64.
host_packages=(crossbuild-essential-arm64 qemu-user cmake pkg-config glslc protobuf-compiler)
missing=()
for p in "${host_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "cross-aarch64: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# 2. The arm64 sysroot: what mt's libraries and tools link (libonnx/protobuf for mt-convert) and
# the header-only packages, with every dependency.
arm64_packages=(libc6-dev libstdc++-12-dev libxnnpack-dev libpthreadpool-dev libcpuinfo-dev libspdlog-dev
                libfmt-dev libpng-dev libjpeg62-turbo-dev libvulkan-dev libvulkan-volk-dev libonnx-dev libprotobuf-dev
                libcli11-dev nlohmann-json3-dev doctest-dev)
stamp="$sysroot/.mt-packages"
if [ "$(cat "$stamp" 2>/dev/null)" != "${arm64_packages[*]}" ]; then
  apt_dir="$cache/aarch64-apt"
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$apt_dir/dpkg"
  : > "$apt_dir/dpkg/status"  # empty: resolve every dependency, as for an empty arm64 system
  apt_opts=(-q -o APT::Architecture=arm64 -o APT::Architectures::=arm64 -o Debug::NoLocking=1
            -o Dir::State::Lists="$apt_dir/lists" -o Dir::State::status="$apt_dir/dpkg/status"
            -o Dir::Cache::Archives="$apt_dir/archives" -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=
            -o APT::Sandbox::User=root)
  echo "cross-aarch64: downloading the arm64 packages into $apt_dir" >&2
  apt-get "${apt_opts[@]}" update
  apt-get "${apt_opts[@]}" install -y --download-only --no-install-recommends "${arm64_packages[@]}"
  echo "cross-aarch64: unpacking them into $sysroot" >&2
  rm -rf "$sysroot"
  mkdir -p "$sysroot"
  for deb in "$apt_dir"/archives/*.deb; do dpkg -x "$deb" "$sysroot"; done
  # Absolute symlinks (e.g. /usr/lib/.../libfoo.so -> /lib/...) must point inside the sysroot.
  find "$sysroot" -type l -lname '/*' | while read -r link; do
    ln -sfn "$sysroot$(readlink "$link")" "$link"
  done
  echo "${arm64_packages[*]}" > "$stamp"
fi

# 3. Configure and build, warnings as errors as in every CI build (MT_WERROR=OFF keeps them warnings).
# Tests are not built here: scripts/test-aarch64.sh runs what it needs.
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
  -DMT_AARCH64_SYSROOT="$sysroot" -DMT_WERROR="${MT_WERROR:-ON}" >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$build" -j"${MT_JOBS:-$(nproc)}" "${targets[@]}"
echo "cross-aarch64: built into $build (run with: qemu-aarch64 -L $sysroot $build/tools/mt-run ...)" >&2
