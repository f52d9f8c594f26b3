// Error reporting shared by every part of mt: one exception type carrying the exit code
// a tool returns, and helpers that format a one-line message naming what and where.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace mt {

// Exit codes, documented in mt(7) and every tool's man page.
enum class ExitCode : int {
  ok = 0,
  failure = 1,        // I/O error, device failure, internal error
  usage = 2,          // bad command line
  invalid_input = 3,  // malformed or inconsistent model, ONNX, .npy or image
  unsupported = 4,    // valid input that mt (or the chosen backend) cannot handle
  check_failed = 5,   // a requested check did not pass (--compare, --check, verify, regression)
};

// Thrown by library code; tools catch it once, in run_tool(), print the message and exit.
// Messages are one line and name the file, node or tensor at fault.
class Error : public std::runtime_error {
 public:
  Error(ExitCode code, std::string message) : std::runtime_error(std::move(message)), code_(code) {}
  ExitCode code() const { return code_; }

 private:
  ExitCode code_;
};

template <typename... Args>
[[noreturn]] void fail(ExitCode code, fmt::format_string<Args...> format, Args&&... args) {
  throw Error(code, fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args>
[[noreturn]] void invalid_input(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(ExitCode::invalid_input, fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args>
[[noreturn]] void unsupported(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(ExitCode::unsupported, fmt::format(format, std::forward<Args>(args)...));
}

// Adds context ("model.mt: ") in front of an error's message, keeping its exit code.
Error with_context(const Error& error, const std::string& context);

}  // namespace mt
