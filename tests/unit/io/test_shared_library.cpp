// The image codecs' libraries are opened when first needed (shared_library.h): a library or a
// function that is missing is refused as unsupported, with its name, instead of crashing.
#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "lib/core/error.h"
#include "lib/io/shared_library.h"

namespace mt::test {
namespace {

// Runs `open` and returns the Error it throws (code and message), failing the test if none.
template <typename Open>
Error refusal(Open&& open) {
  try {
    open();
  } catch (const Error& e) {
    return e;
  }
  FAIL("no error thrown");
  return Error(ExitCode::ok, "");
}

}  // namespace

TEST_CASE("shared library: functions of a library opened by soname") {
  const SharedLibrary libc("libc.so.6", "test data");
  const auto length = libc.function<decltype(&std::strlen)>("strlen");
  CHECK(length("codec") == 5);
  const Error missing = refusal([&] { libc.function<void (*)()>("mt_no_such_function"); });
  CHECK(missing.code() == ExitCode::unsupported);
  CHECK(std::string(missing.what()) == "cannot decode test data: libc.so.6 has no function mt_no_such_function");
}

TEST_CASE("shared library: one that cannot be loaded is unsupported, named") {
  const Error e = refusal([] { SharedLibrary("libmt-no-such-codec.so.0", "PNG images"); });
  CHECK(e.code() == ExitCode::unsupported);
  CHECK(std::string(e.what()).starts_with("cannot decode PNG images: libmt-no-such-codec.so.0 cannot be loaded ("));
}

}  // namespace mt::test
