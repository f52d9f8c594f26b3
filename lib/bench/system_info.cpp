#include "lib/bench/system_info.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <ctime>
#include <fmt/format.h>

#include "lib/bench/text_file.h"

namespace mt::bench {

std::optional<std::string> cpu_model_from_cpuinfo(std::string_view cpuinfo) {
  for (const char* key : {"model name", "Hardware", "Processor", "uarch", "isa"}) {
    auto value = find_key_value(cpuinfo, key, ':');
    if (value && !value->empty()) return value;
  }
  return std::nullopt;
}

std::optional<std::string> os_from_os_release(std::string_view os_release) {
  auto value = find_key_value(os_release, "PRETTY_NAME", '=');
  if (!value) return std::nullopt;
  std::string name = *value;
  if (name.size() >= 2 && (name.front() == '"' || name.front() == '\'') && name.back() == name.front())
    name = name.substr(1, name.size() - 2);
  if (name.empty()) return std::nullopt;
  return name;
}

std::string iso8601_utc(std::chrono::system_clock::time_point time) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(time);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

SystemInfo collect_system_info() {
  SystemInfo info;
  const auto cpuinfo = read_text_file("/proc/cpuinfo");
  info.cpu_model = cpuinfo ? cpu_model_from_cpuinfo(*cpuinfo).value_or("unknown") : "unknown";
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  info.cores = online > 0 ? static_cast<int>(online) : 0;
  const auto os_release = read_text_file("/etc/os-release");
  utsname names{};
  const bool have_uname = uname(&names) == 0;
  info.kernel = have_uname ? fmt::format("{} {} {}", names.sysname, names.release, names.machine) : "unknown";
  info.os = os_release ? os_from_os_release(*os_release).value_or("") : "";
  if (info.os.empty()) info.os = have_uname ? names.sysname : "unknown";
  info.date = iso8601_utc(std::chrono::system_clock::now());
  return info;
}

}  // namespace mt::bench
