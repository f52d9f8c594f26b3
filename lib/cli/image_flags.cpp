#include "lib/cli/image_flags.h"

#include <cmath>

#include "lib/core/error.h"

namespace mt::cli {
namespace {

// "a,b,c" as numbers; every item must be a whole finite number.
std::vector<double> parse_numbers(const std::string& text, std::string_view flag) {
  std::vector<double> values;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t end = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, end - pos);
    size_t used = 0;
    double value = 0;
    try {
      value = std::stod(item, &used);
    } catch (const std::exception&) {
      used = std::string::npos;
    }
    if (item.empty() || used != item.size() || !std::isfinite(value))
      fail(ExitCode::usage, "{} {}: '{}' is not a number", flag, text, item);
    values.push_back(value);
    pos = end + 1;
  }
  return values;
}

// One value for every channel, or one per RGB channel.
std::vector<float> parse_channel_values(const std::string& text, std::string_view flag) {
  std::vector<float> values;
  if (text.empty()) return values;
  for (double v : parse_numbers(text, flag)) values.push_back(static_cast<float>(v));
  if (values.size() != 1 && values.size() != 3) fail(ExitCode::usage, "{} takes 1 or 3 values, got {}", flag, values.size());
  return values;
}

}  // namespace

void ImageFlags::add_to(CLI::App& app) {
  app.add_option("--size", size, "Images: resize to H,W, or one size for both (default: the input's own size)")
      ->option_text("H,W");
  app.add_option("--mean", mean, "Images: per-channel mean subtracted after scaling to [0, 1]")->option_text("M[,M,M]");
  app.add_option("--std", std, "Images: per-channel standard deviation divided by")->option_text("S[,S,S]");
  app.add_option("--layout", layout, "Images: layout of the image inputs")
      ->check(CLI::IsMember({"nchw", "nhwc"}))
      ->capture_default_str();
}

ImagePreprocess ImageFlags::parse() const {
  ImagePreprocess image;
  if (!size.empty()) {
    const auto dims = parse_numbers(size, "--size");
    const auto valid = [](double d) { return d >= 1 && d <= 65536 && d == std::floor(d); };
    if (dims.size() > 2 || !valid(dims.front()) || !valid(dims.back()))
      fail(ExitCode::usage, "--size {}: expected H,W (or one size for both) in 1..65536", size);
    image.height = static_cast<int>(dims.front());
    image.width = static_cast<int>(dims.back());
  }
  image.mean = parse_channel_values(mean, "--mean");
  image.std = parse_channel_values(std, "--std");
  image.nhwc = layout == "nhwc";
  return image;
}

}  // namespace mt::cli
