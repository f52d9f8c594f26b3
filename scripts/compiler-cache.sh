# Sourced by the build scripts: compile through ccache when it is installed (install-deps.sh installs it),
# so that rebuilding the same sources in another build directory or clone (the sanitizer, TSan and aarch64
# builds, a fresh CI clone on a machine that built before) reuses earlier compilations. CMake reads these
# variables when it first configures a build directory. MT_NO_CCACHE=1 compiles without it.
if [[ ${MT_NO_CCACHE:-0} != 1 ]] && command -v ccache >/dev/null 2>&1; then
  # Paths under the checkout are hashed relative to it, so clones at other paths share the cache.
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
  # The sanitizer and TSan builds compile with -g..., for which ccache also hashes the build directory
  # by default. Sharing them across clones costs only this: a hit keeps the other clone's compilation
  # directory in its debug info, the prefix of the paths a sanitizer report prints.
  export CCACHE_NOHASHDIR=1
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
fi
