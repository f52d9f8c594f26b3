#include "lib/io/shared_library.h"

#include <dlfcn.h>

#include "lib/core/error.h"

namespace mt {

SharedLibrary::SharedLibrary(std::string soname, std::string what)
    : soname_(std::move(soname)), what_(std::move(what)) {
  handle_ = dlopen(soname_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr) unsupported("cannot decode {}: {} cannot be loaded ({})", what_, soname_, dlerror());
}

void* SharedLibrary::address(const char* name) const {
  void* address = dlsym(handle_, name);
  if (address == nullptr) unsupported("cannot decode {}: {} has no function {}", what_, soname_, name);
  return address;
}

}  // namespace mt
