# Sourced by the build scripts: compile through ccache when it is installed (install-deps.sh installs it),
# so that rebuilding the same sources in another build directory or clone (the sanitizer, TSan and aarch64
# builds, a fresh CI clone on a machine that built before) reuses earlier compilations. CMake reads these
# variables when it first configures a build directory. MT_NO_CCACHE=1 compiles without it.
if [[ ${MT_NO_CCACHE:-0} != 1 ]] && command -v ccache >/dev/null 2>&1; then
  # Paths under the checkout are hashed relative to it, so clones at other paths share the cache.
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
fi
