// Benchmark reports in three formats: a terminal table (text), one JSON document that records
// the setup and every sample (schema: docs/mt-bench.schema.json), and CSV for spreadsheets.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "lib/bench/baseline.h"
#include "lib/bench/benchmark.h"

namespace mt::bench {

// Identifies the JSON layout; bumped when a field changes meaning or goes away.
inline constexpr const char* kReportSchema = "mt-bench/1";

nlohmann::json report_json(const BenchResult& result, const std::optional<BaselineCheck>& baseline);

// Aligned sections: setup, timings, latency statistics, memory, and with a profile the per-op
// and per-node tables; the baseline verdict last.
std::string report_text(const BenchResult& result, const std::optional<BaselineCheck>& baseline);

// Blocks separated by one empty line, each a header row and data rows: the summary (one row);
// with a profile, then the per-node table and the per-op table.
std::string report_csv(const BenchResult& result, const std::optional<BaselineCheck>& baseline);

// "13.9 MiB", "512 B": binary units, three significant digits.
std::string human_bytes(double bytes);

// "180.2 GB/s in 1.00 MiB, 61.0 GB/s in 16.0 MiB, 39.0 GB/s in 128 MiB": a peak's copy bandwidths.
std::string bandwidth_text(const PeakAt& peak);

}  // namespace mt::bench
