// A shared library opened when first needed (dlopen by soname) instead of linked: the image codecs
// (libpng with zlib, libjpeg) cost every process that maps them about 0.25 MiB resident, and only one
// that decodes an image uses them (docs/benchmarks.md, issue 16).
#pragma once

#include <string>

namespace mt {

class SharedLibrary {
 public:
  // Opens `soname`; throws Error(unsupported) "cannot decode WHAT: SONAME cannot be loaded (dlerror)".
  SharedLibrary(std::string soname, std::string what);
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  // Function `name` of the library, as type F (its declaration's: decltype(&name)); throws
  // Error(unsupported) naming it when the library lacks it.
  template <typename F>
  F function(const char* name) const {
    return reinterpret_cast<F>(address(name));
  }

 private:
  void* address(const char* name) const;
  void* handle_ = nullptr;  // never closed: decoders may run until exit
  std::string soname_, what_;
};

}  // namespace mt
