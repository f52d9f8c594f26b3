#include "lib/cli/device_flags.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "lib/core/error.h"

namespace mt::cli {

void DeviceFlags::add_to(CLI::App& app, std::string_view list_devices) {
  app.add_option("-d,--device", device, "Backend to run on")
      ->check(CLI::IsMember({"reference", "cpu", "vulkan"}))
      ->capture_default_str();
  app.add_option("-t,--threads", threads, "Threads of the cpu backend")->check(CLI::Range(1, 256))->capture_default_str();
  app.add_option("--gpu", gpu, fmt::format("Vulkan device to run on (see {})", list_devices))
      ->option_text("N")
      ->check(CLI::NonNegativeNumber)
      ->each([this](const std::string&) { gpu_given_ = true; })
      ->capture_default_str();
  app.add_option("--precision", precision,
                 "Storage and arithmetic of the vulkan backend (fp16: accumulations stay fp32); default: the "
                 "precision a vulkan-prepacked model was packed in, else fp32")
      ->check(CLI::IsMember({"fp32", "fp16"}))
      ->each([this](const std::string&) { precision_given_ = true; });
}

void DeviceFlags::check() const {
  if ((gpu_given_ || precision_given_) && device != "vulkan")
    fail(ExitCode::usage, "{} applies to --device vulkan only", gpu_given_ ? "--gpu" : "--precision");
  if (threads != 1 && device == "reference") spdlog::warn("--threads {}: the reference backend runs on one thread", threads);
}

PlanOptions DeviceFlags::plan_options(PlanOptions base) const {
  base.threads = threads;
  base.gpu_index = gpu;
  base.precision = precision;
  return base;
}

}  // namespace mt::cli
