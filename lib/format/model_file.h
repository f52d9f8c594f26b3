// The .mt model file (specified in man/mt-format.5): a fixed header, a JSON graph section and a
// 64-byte aligned data section holding every constant tensor, used in place from a memory map.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lib/core/file_io.h"
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

// Reads and fully validates a model from a path ("-" or "": stdin). Constants point into the
// file's memory map. Throws Error(invalid_input) as "PATH: what is wrong".
Graph read_model(const std::string& path);

// Validates and decodes a model from bytes; `input.source` names it in errors.
Graph decode_model(const InputBytes& input);

// Serialises a model: header, JSON, data. Deterministic: the same graph gives the same bytes.
void write_model(const Graph& graph, OutputFile& out);
std::vector<std::byte> encode_model(const Graph& graph);

// Writes a model to a path (atomically) or to stdout for "-"/"" (never to a terminal).
void save_model(const Graph& graph, const std::string& path);

}  // namespace mt
