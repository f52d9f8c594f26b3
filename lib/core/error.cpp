#include "lib/core/error.h"

namespace mt {

Error with_context(const Error& error, const std::string& context) {
  return Error(error.code(), context + ": " + error.what());
}

}  // namespace mt
