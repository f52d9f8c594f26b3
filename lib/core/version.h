// The version of mt that a tool reports and records in the models it writes.
#pragma once

#include <string>

namespace mt {

const char* version_string();   // "0.1.0"
std::string version_details();  // "mt 0.1.0 (git abc123, gcc 12.2.0)"

}  // namespace mt
