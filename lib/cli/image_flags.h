// The image preprocessing flags mt-run and mt-quantize share (--size, --mean, --std, --layout),
// declared and validated in one place so both tools accept and reject exactly the same values.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "lib/io/image.h"

namespace mt::cli {

struct ImageFlags {
  std::string size, mean, std, layout = "nchw";

  // Adds the four options to `app`.
  void add_to(CLI::App& app);
  // The validated settings (channels left at its default: the model input decides). A malformed
  // value is a usage error naming the flag and the value.
  ImagePreprocess parse() const;
};

}  // namespace mt::cli
