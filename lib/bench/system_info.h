// What a benchmark ran on: CPU model, core count, operating system and kernel, and the date,
// so that a stored result says which machine and when.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace mt::bench {

struct SystemInfo {
  std::string cpu_model;  // "AMD EPYC 7B13"; "unknown" when /proc/cpuinfo does not say
  int cores = 0;          // logical CPUs online
  std::string os;         // "Debian GNU/Linux 12 (bookworm)"
  std::string kernel;     // "Linux 6.1.0-18-amd64 x86_64"
  std::string date;       // ISO 8601 UTC: "2024-05-01T12:34:56Z"
};

SystemInfo collect_system_info();

// The CPU model named by /proc/cpuinfo text: the first "model name" (x86), else "Hardware" or
// "Processor" (arm), else "uarch"/"isa" (risc-v); nullopt if none is there.
std::optional<std::string> cpu_model_from_cpuinfo(std::string_view cpuinfo);

// PRETTY_NAME from /etc/os-release text, quotes removed; nullopt if absent.
std::optional<std::string> os_from_os_release(std::string_view os_release);

// "2024-05-01T12:34:56Z".
std::string iso8601_utc(std::chrono::system_clock::time_point time);

}  // namespace mt::bench
