// The .mt model file (specified in man/mt-format.5): a fixed header, a JSON graph section and a
// 64-byte aligned data section holding every constant tensor, used in place from a memory map.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "lib/core/file_io.h"
#include "lib/format/checksum.h"
#include "lib/ir/graph.h"

namespace mt {

// 2: per-channel quantization tables in the data section; 3: constants in vulkan layouts, whose stored
// size follows from the layout (lib/ir/stored_layout.h); 4: sections sealed with the CRC32C-lanes
// checksum (lib/format/checksum.h), verified at memory speed; 5: constants in the cpu backend's packed
// layouts (stored_layout.h's CpuLayout). Every older version is still read.
inline constexpr uint32_t kFormatVersion = 5;
inline constexpr size_t kHeaderSize = 128;
inline constexpr size_t kDataAlignment = 64;
// The most nodes a model may have. Far above real networks (tens of thousands of nodes at most),
// low enough that a hostile file is refused before it costs gigabytes (importing an ONNX graph
// holds a few KiB per node). Checked by the .mt reader and the ONNX importer before per-node work.
inline constexpr size_t kMaxNodes = size_t{1} << 19;

// Reads and fully validates a model from a path ("-" or "": stdin); the data section's checksum
// runs beside decoding (DataCheck) and has passed when it returns. Constants point into the file's
// memory map. Throws Error(invalid_input) as "PATH: what is wrong".
Graph read_model(const std::string& path);

// Validates and decodes a model from bytes; `input.source` names it in errors.
Graph decode_model(const InputBytes& input);

// A data section this large or larger is verified on a thread of its own; a smaller one in
// start(), where a thread would cost about as much as the checksum (tens of microseconds).
inline constexpr size_t kDataCheckThreadMinBytes = size_t{1} << 20;

// The data section's checksum, verified on a thread of its own while the caller decodes the graph and
// plans it (mt-format(5)): a model is ready sooner by the time the checksum takes, with the same
// guarantee, as long as nothing computed from the weights is used before wait() returns. A corrupted
// file fails with the same error either way: wait() throws it, and guard() puts it in place of any
// error the corrupted weights caused first.
class DataCheck {
 public:
  DataCheck() = default;
  ~DataCheck();  // joins the thread; throws nothing
  DataCheck(const DataCheck&) = delete;
  DataCheck& operator=(const DataCheck&) = delete;

  // Joins the check, mapping the pages the thread has not reached yet meanwhile (its page faults are
  // most of its time); throws Error(invalid_input) "SOURCE: data section checksum mismatch (file
  // corrupted)" where it failed. Also where nothing was started (a no-op).
  void wait();

  // Runs work(); where it throws, waits first and throws the checksum's error if the data section is
  // corrupted, else rethrows work()'s.
  template <typename Work>
  auto guard(Work&& work) -> decltype(work()) {
    try {
      return work();
    } catch (...) {
      wait();
      throw;
    }
  }

  // Starts verifying `size` bytes at `data` (kept alive by `owner`) against `expected`: on a thread,
  // or here and now under kDataCheckThreadMinBytes or where no thread can be started. The thread runs
  // `first` before the checksum, if given; it must not throw (the reader builds the op registry there,
  // which decoding needs only after the JSON parse: 0.15 ms off the caller's thread).
  void start(std::shared_ptr<const void> owner, const std::byte* data, size_t size, uint64_t expected,
             ChecksumAlgorithm algorithm, std::string source, void (*first)() = nullptr);

 private:
  static constexpr size_t kChunk = size_t{256} << 10;  // bytes the thread sums between progress reports
  void touch_unverified_tail() const;

  std::shared_ptr<const void> owner_;
  std::thread thread_;
  bool mismatch_ = false;  // written by the thread, read after join
  std::string source_;
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
  std::atomic<size_t> verified_ = 0;  // bytes the thread has summed
};

// decode_model that leaves the data section's checksum to `data_check` (started here, running while
// the graph is decoded and validated): the caller plans, then calls data_check.wait() before the
// first inference. Every other check runs here, as in decode_model(input).
Graph decode_model(const InputBytes& input, DataCheck& data_check);
Graph read_model(const std::string& path, DataCheck& data_check);

// Serialises a model: header, JSON, data. Deterministic: the same graph gives the same bytes.
void write_model(const Graph& graph, OutputFile& out);
std::vector<std::byte> encode_model(const Graph& graph);

// Writes a model to a path (atomically) or to stdout for "-"/"" (never to a terminal).
void save_model(const Graph& graph, const std::string& path);

}  // namespace mt
