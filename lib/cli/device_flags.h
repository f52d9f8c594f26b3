// The device flags mt-run and mt-bench share (--device, --threads, --gpu, --precision), declared
// and cross-checked in one place so both tools accept and reject exactly the same combinations.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>

#include "lib/runtime/plan_options.h"

namespace mt::cli {

struct DeviceFlags {
  std::string device = "cpu";
  int threads = 1;
  int gpu = 0;
  std::string precision;  // empty: the model's (default_precision: as vulkan-prepacked, else fp32)

  // Adds -d/--device, -t/--threads, --gpu and --precision to `app`. `list_devices` is where --gpu's
  // help points for the device numbers ("--list-devices" in mt-run, "mt-run --list-devices").
  // The flags keep pointers into this object: it must outlive the parse and stay where it is.
  void add_to(CLI::App& app, std::string_view list_devices);

  // The cross-checks, made before the model is read: --gpu and --precision apply to --device
  // vulkan only (a usage error naming the first given); --threads on the reference backend, which
  // runs on one thread, is a warning.
  void check() const;

  // `base` (the kernel paths: PlanOptions::from_environment() in the tools) with threads, gpu and
  // precision set as given. precision stays empty when --precision was not given: the caller
  // resolves it with default_precision(graph) once the model is read.
  PlanOptions plan_options(PlanOptions base) const;

 private:
  bool gpu_given_ = false, precision_given_ = false;
};

}  // namespace mt::cli
