// The machine peak (lib/bench/machine_peak.h) and a profile against it: a measurement's shape,
// the peak at other thread counts, the bandwidth level a working set falls into, the peak file
// read back, refused when damaged or from another machine, and the roofline shares with_peak sets.
#include <doctest/doctest.h>

#include <fstream>

#include "bench_test_util.h"
#include "lib/bench/machine_peak.h"
#include "lib/bench/profile.h"
#include "lib/core/error.h"

namespace mt::bench::test {
namespace {

MachinePeak two_core_peak() {
  return MachinePeak{.cpu_model = "Test CPU",
                     .cores = 2,
                     .isa = "avx512f",
                     .date = "2026-01-01T00:00:00Z",
                     .at = {{.threads = 1, .gflops_per_second = 100, .levels = {{1e6, 200}, {3e7, 80}, {1e9, 20}}},
                            {.threads = 2, .gflops_per_second = 190, .levels = {{2e6, 390}, {3e7, 150}, {1e9, 30}}}}};
}

}  // namespace

TEST_CASE("machine peak: a measurement on 1 and 2 threads") {
  const SystemInfo system{.cpu_model = "Test CPU", .cores = 2, .date = "2026-01-01T00:00:00Z"};
  const MachinePeak peak = measure_machine_peak(system, 2);
  CHECK(peak.cpu_model == "Test CPU");
  REQUIRE(peak.at.size() == 2);
  for (const PeakAt& at : peak.at) {
    CHECK(at.gflops_per_second > 0);
    REQUIRE(at.levels.size() >= 2);
    for (size_t i = 0; i < at.levels.size(); ++i) {
      CHECK(at.levels[i].gbytes_per_second > 0);
      if (i > 0) CHECK(at.levels[i].bytes > at.levels[i - 1].bytes);
    }
  }
  CHECK(peak.at[1].threads == 2);
}

TEST_CASE("machine peak: other thread counts and working sets") {
  const MachinePeak peak = two_core_peak();
  CHECK(peak.for_threads(2).gflops_per_second == 190);  // measured
  const PeakAt four = peak.for_threads(4);              // 1 thread x 4, capped at 2 threads'
  CHECK(four.gflops_per_second == 190);
  CHECK(four.levels[0].gbytes_per_second == 390);
  CHECK(four.levels[2].gbytes_per_second == 30);
  const PeakAt one = peak.for_threads(1);
  CHECK(one.gbytes_per_second(5e5) == 200);  // fits L2
  CHECK(one.gbytes_per_second(1e6) == 200);
  CHECK(one.gbytes_per_second(2e6) == 80);  // the last-level cache
  CHECK(one.gbytes_per_second(5e9) == 20);  // past every level: memory
}

TEST_CASE("machine peak: the file round-trips, and a damaged one or another machine's is not used") {
  const MachinePeak peak = two_core_peak();
  TempFile file("mt-peak-test.json");
  save_machine_peak(peak, file.path());
  const SystemInfo same{.cpu_model = "Test CPU", .cores = 2};
  const std::optional<MachinePeak> loaded = load_machine_peak(file.path(), same);
  REQUIRE(loaded.has_value());
  CHECK(peak_json(*loaded) == peak_json(peak));
  CHECK_FALSE(load_machine_peak(file.path(), SystemInfo{.cpu_model = "Test CPU", .cores = 4}).has_value());
  CHECK_FALSE(load_machine_peak(file.path(), SystemInfo{.cpu_model = "Other CPU", .cores = 2}).has_value());
  CHECK_FALSE(load_machine_peak(file.path() + ".missing", same).has_value());

  for (const char* damaged :
       {"not json", "[]", R"({"schema": "mt-peak/2"})",
        R"({"schema": "mt-peak/1", "cpu_model": "Test CPU", "cores": 2, "isa": "x", "date": "d", "at": []})",
        R"({"schema": "mt-peak/1", "cpu_model": "Test CPU", "cores": 2, "isa": "x", "date": "d",
            "at": [{"threads": 1, "gflops_per_s": -5, "bandwidth": [{"bytes": 1, "gbytes_per_s": 1}]}]})",
        R"({"schema": "mt-peak/1", "cpu_model": "Test CPU", "cores": 2, "isa": "x", "date": "d",
            "at": [{"threads": 1, "gflops_per_s": 5, "bandwidth": [{"bytes": 9, "gbytes_per_s": 1},
                                                                  {"bytes": 2, "gbytes_per_s": 1}]}]})"}) {
    INFO(damaged);
    std::ofstream(file.path()) << damaged;
    CHECK_FALSE(load_machine_peak(file.path(), same).has_value());
  }
}

TEST_CASE("with_peak: GFLOP/s against the roofline, GB/s against the bandwidth of the node's working set") {
  const Graph graph = conv_relu_graph();
  Profile p = aggregate_profile(graph, {{{0, 1e-6}, {1, 1e-7}}});
  const PeakAt peak = two_core_peak().for_threads(1);
  with_peak(p, peak, "test");
  REQUIRE(p.peak.has_value());
  // conv: 13824 FLOP over 192 + 108 + 4 + 256 floats (x, w, b, c).
  const NodeProfile& conv = p.nodes[0];
  CHECK(conv.bytes == (192 + 108 + 4 + 256) * 4);
  const double roof = std::min(100.0, 13824 / conv.bytes * 200);  // its bytes fit L2: 200 GB/s
  CHECK(conv.memory_bound == (roof < 100));
  CHECK(*conv.percent_of_peak == doctest::Approx(100 * *conv.gflops_per_second / roof));
  // relu: no FLOPs; 2 x 256 floats in 0.1 us.
  const NodeProfile& relu = p.nodes[1];
  CHECK(relu.memory_bound);
  CHECK(*relu.gbytes_per_second == doctest::Approx(2048 / 1e-7 / 1e9));
  CHECK(*relu.percent_of_peak == doctest::Approx(100 * *relu.gbytes_per_second / 200));
}

}  // namespace mt::bench::test
