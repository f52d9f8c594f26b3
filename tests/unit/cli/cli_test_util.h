// What the lib/cli flag-group tests share: parsing arguments as a tool does, and the message of the
// usage error a parse must end in.
#pragma once

#include <doctest/doctest.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <string>
#include <vector>

#include "lib/core/error.h"

namespace mt::test {

// Parses `args` into `app` in a tool's order (CLI11 takes the arguments reversed).
inline void parse_in_order(CLI::App& app, std::vector<std::string> args) {
  std::reverse(args.begin(), args.end());
  app.parse(args);
}

// The message of the Error(usage) `body` throws; a test failure when it throws none.
template <typename Body>
std::string usage_error_of(Body body) {
  try {
    body();
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::usage);
    return e.what();
  }
  FAIL("expected a usage error");
  return "";
}

}  // namespace mt::test
