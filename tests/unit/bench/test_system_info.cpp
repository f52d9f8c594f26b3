// System facts: parsing /proc/cpuinfo, /etc/os-release and /proc/self/status text, the ISO 8601
// date, and the live values on this machine.
#include <doctest/doctest.h>

#include <regex>

#include "lib/bench/peak_memory.h"
#include "lib/bench/system_info.h"

namespace mt::bench {

TEST_CASE("cpu model from x86, arm and risc-v cpuinfo") {
  CHECK(cpu_model_from_cpuinfo("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13 64-Core Processor\n"
                               "processor\t: 1\nmodel name\t: AMD EPYC 7B13 64-Core Processor\n") ==
        "AMD EPYC 7B13 64-Core Processor");
  CHECK(cpu_model_from_cpuinfo("processor\t: 0\nBogoMIPS\t: 38.40\n\nHardware\t: Qualcomm Technologies, Inc SM8250\n") ==
        "Qualcomm Technologies, Inc SM8250");
  CHECK(cpu_model_from_cpuinfo("processor\t: 0\nhart\t\t: 0\nisa\t\t: rv64imafdc\n") == "rv64imafdc");
  CHECK_FALSE(cpu_model_from_cpuinfo("processor\t: 0\nmodel name\t:\n").has_value());
  CHECK_FALSE(cpu_model_from_cpuinfo("").has_value());
}

TEST_CASE("os name from os-release") {
  CHECK(os_from_os_release("NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\n") ==
        "Debian GNU/Linux 12 (bookworm)");
  CHECK(os_from_os_release("PRETTY_NAME=Alpine") == "Alpine");
  CHECK_FALSE(os_from_os_release("NAME=x\n").has_value());
}

TEST_CASE("ISO 8601 UTC dates") {
  using namespace std::chrono;
  CHECK(iso8601_utc(system_clock::time_point{}) == "1970-01-01T00:00:00Z");
  CHECK(iso8601_utc(system_clock::time_point{seconds{1700000000}}) == "2023-11-14T22:13:20Z");
}

TEST_CASE("VmHWM from /proc/self/status") {
  CHECK(vm_hwm_from_status("Name:\tx\nVmPeak:\t  9000 kB\nVmHWM:\t    2084 kB\nVmRSS:\t 2000 kB\n") == 2084u * 1024);
  CHECK_FALSE(vm_hwm_from_status("VmRSS:\t 2000 kB\n").has_value());
  CHECK_FALSE(vm_hwm_from_status("VmHWM:\t 20x0 kB\n").has_value());
  CHECK_FALSE(vm_hwm_from_status("VmHWM:\t 2000 MB\n").has_value());
}

TEST_CASE("this machine: cores, a dated report, a resident set") {
  const SystemInfo info = collect_system_info();
  CHECK(info.cores >= 1);
  CHECK_FALSE(info.cpu_model.empty());
  CHECK_FALSE(info.os.empty());
  CHECK(std::regex_match(info.date, std::regex(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z)")));
  const PeakMemory peak = peak_memory();
  CHECK(peak.max_rss_bytes > 0);
  REQUIRE(peak.vm_hwm_bytes.has_value());  // Linux
  CHECK(*peak.vm_hwm_bytes > 0);
}

}  // namespace mt::bench
