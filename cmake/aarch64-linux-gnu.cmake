# CMake toolchain file for aarch64 (arm64) Linux with Debian's cross compiler
# (crossbuild-essential-arm64) and the arm64 sysroot scripts/cross-aarch64.sh unpacks:
#   cmake -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake [-DMT_AARCH64_SYSROOT=DIR]
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

if(NOT MT_AARCH64_SYSROOT)
  if(DEFINED ENV{XDG_CACHE_HOME})
    set(MT_AARCH64_SYSROOT $ENV{XDG_CACHE_HOME}/mt/aarch64-sysroot)
  else()
    set(MT_AARCH64_SYSROOT $ENV{HOME}/.cache/mt/aarch64-sysroot)
  endif()
endif()
set(MT_AARCH64_SYSROOT ${MT_AARCH64_SYSROOT} CACHE PATH "arm64 sysroot (scripts/cross-aarch64.sh makes it)")
# try_compile projects see the toolchain file again without the cache: pass the sysroot on.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES MT_AARCH64_SYSROOT)
set(CMAKE_SYSROOT ${MT_AARCH64_SYSROOT})
set(CMAKE_FIND_ROOT_PATH ${MT_AARCH64_SYSROOT})
# Libraries, headers and CMake packages from the sysroot only; programs (glslc, protoc) from the host.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# pkg-config (libpng, libjpeg) reads the sysroot's .pc files, with their paths prefixed by it.
set(ENV{PKG_CONFIG_DIR} "")
set(ENV{PKG_CONFIG_LIBDIR} "${MT_AARCH64_SYSROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${MT_AARCH64_SYSROOT}/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_SYSROOT_DIR} ${MT_AARCH64_SYSROOT})
# Shared libraries' own dependencies (libpng -> libz) are found in the sysroot at link time.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,-rpath-link,${MT_AARCH64_SYSROOT}/usr/lib/aarch64-linux-gnu:${MT_AARCH64_SYSROOT}/lib/aarch64-linux-gnu")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "${CMAKE_EXE_LINKER_FLAGS_INIT}")
# Tests and tools run under qemu-aarch64 with the sysroot's loader and libraries.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L ${MT_AARCH64_SYSROOT})
