#include "lib/format/model_file.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <set>

#include "lib/core/error.h"
#include "lib/core/version.h"
#include "lib/format/checksum.h"
#include "lib/format/graph_section.h"
#include "lib/format/little_endian.h"
#include "lib/ir/stored_layout.h"
#include "lib/ops/registry.h"
#include "mt/version.h"

namespace mt {
namespace {

using nlohmann::json;

constexpr char kMagic[8] = {'\x89', 'M', 'T', 'M', '\r', '\n', '\x1a', '\n'};
constexpr const char* kDataMismatch = "data section checksum mismatch (file corrupted)";

// Field offsets inside the 128-byte header; all integers little-endian.
struct Header {
  uint32_t format_version = kFormatVersion;
  uint32_t header_size = kHeaderSize;
  uint16_t writer_major = MT_VERSION_MAJOR, writer_minor = MT_VERSION_MINOR, writer_patch = MT_VERSION_PATCH;
  uint16_t flags = 0;
  uint64_t graph_offset = 0, graph_size = 0, data_offset = 0, data_size = 0;
  uint64_t graph_checksum = 0, data_checksum = 0, file_size = 0;
};
constexpr size_t kHeaderChecksumAt = 88;  // checksum of bytes [0, 88) stored here
constexpr size_t kHeaderReservedAt = 96;  // zero up to kHeaderSize

std::array<std::byte, kHeaderSize> encode_header(const Header& h) {
  std::array<std::byte, kHeaderSize> bytes{};
  std::memcpy(bytes.data(), kMagic, 8);
  put_le<uint32_t>(&bytes[8], h.format_version);
  put_le<uint32_t>(&bytes[12], h.header_size);
  put_le<uint16_t>(&bytes[16], h.writer_major);
  put_le<uint16_t>(&bytes[18], h.writer_minor);
  put_le<uint16_t>(&bytes[20], h.writer_patch);
  put_le<uint16_t>(&bytes[22], h.flags);
  put_le<uint64_t>(&bytes[24], h.graph_offset);
  put_le<uint64_t>(&bytes[32], h.graph_size);
  put_le<uint64_t>(&bytes[40], h.data_offset);
  put_le<uint64_t>(&bytes[48], h.data_size);
  put_le<uint64_t>(&bytes[56], h.graph_checksum);
  put_le<uint64_t>(&bytes[64], h.data_checksum);
  put_le<uint64_t>(&bytes[72], h.file_size);
  put_le<uint64_t>(&bytes[kHeaderChecksumAt], checksum(bytes.data(), kHeaderChecksumAt));
  return bytes;
}

bool all_zero(const std::byte* bytes, size_t size) {
  return std::all_of(bytes, bytes + size, [](std::byte b) { return b == std::byte{0}; });
}

size_t align_up(size_t value) { return (value + kDataAlignment - 1) / kDataAlignment * kDataAlignment; }

// ---- writing ----------------------------------------------------------------------------

json attr_to_json(const Attribute& value, const std::string& where) {
  return std::visit(
      [&](const auto& v) -> json {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, double>) {
          if (!std::isfinite(v)) fail(ExitCode::failure, "{}: attribute value {} is not finite", where, v);
        } else if constexpr (std::is_same_v<T, std::vector<double>>) {
          for (double x : v)
            if (!std::isfinite(x)) fail(ExitCode::failure, "{}: attribute value {} is not finite", where, x);
        }
        return json(v);
      },
      value);
}

// A run of bytes in the data section: a constant's values, or a per-channel quantization table.
struct Blob {
  const std::byte* bytes;
  size_t size;
  size_t offset = 0;  // in the data section, kDataAlignment-aligned
};

struct Layout {
  json graph;
  std::string graph_text;
  std::vector<Blob> blobs;  // in data-section order
  std::vector<std::vector<std::byte>> quant_tables;  // the bytes that quant-table blobs point at
  Header header;
};

// Per-channel quantization parameters as one table: float32 scales[n] then int32 zero_points[n],
// little-endian. Thousands of channels as JSON text would cost ~20 bytes a number; the table
// costs 8, which keeps an int8 model near a quarter of its float32 size.
std::vector<std::byte> quant_table(const QuantParams& q) {
  const size_t n = q.scales.size();
  std::vector<std::byte> bytes(n * 8);
  for (size_t i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &q.scales[i], 4);
    put_le<uint32_t>(&bytes[4 * i], bits);
    put_le<uint32_t>(&bytes[4 * (n + i)], static_cast<uint32_t>(q.zero_points[i]));
  }
  return bytes;
}

// Per-tensor parameters stay readable in the JSON; tables are used from this many channels on.
constexpr size_t kQuantTableMinChannels = 2;

Layout plan_layout(const Graph& graph) {
  Layout layout;
  // Constants go in order of first use, so a forward pass reads the map front to back; their
  // quantization tables follow all of them.
  std::vector<const TensorInfo*> constants;
  std::set<std::string, std::less<>> placed;
  auto place = [&](const std::string& name) {
    if (name.empty() || placed.count(name)) return;
    auto it = graph.tensors.find(name);
    if (it == graph.tensors.end() || !it->second.is_constant()) return;
    placed.insert(name);
    constants.push_back(&it->second);
  };
  for (const auto& node : graph.nodes)
    for (const auto& in : node.inputs) place(in);
  for (const auto& name : graph.outputs) place(name);
  for (const auto& [name, info] : graph.tensors) place(name);

  size_t offset = 0;
  auto add_blob = [&](const std::byte* bytes, size_t size) {
    offset = align_up(offset);
    layout.blobs.push_back({bytes, size, offset});
    offset += size;
    return layout.blobs.back().offset;
  };
  std::map<std::string, size_t, std::less<>> offset_of, quant_offset_of;
  for (const TensorInfo* info : constants) {
    const uint64_t expected = stored_byte_size(info->dtype, info->shape, info->layout);
    if (info->data.size() != expected)
      fail(ExitCode::failure, "tensor '{}': holds {} bytes, {} {} in layout '{}' needs {}", info->name, info->data.size(),
           dtype_name(info->dtype), shape_str(info->shape), info->layout, expected);
    offset_of[info->name] = add_blob(info->data.data(), info->data.size());
  }
  layout.quant_tables.reserve(graph.tensors.size());  // blobs point into it: no reallocation
  for (const auto& [name, info] : graph.tensors) {
    if (!info.quant || info.quant->scales.size() < kQuantTableMinChannels) continue;
    if (info.quant->zero_points.size() != info.quant->scales.size())
      fail(ExitCode::failure, "tensor '{}': {} quant scales but {} zero points", name, info.quant->scales.size(),
           info.quant->zero_points.size());
    const auto& table = layout.quant_tables.emplace_back(quant_table(*info.quant));
    quant_offset_of[name] = add_blob(table.data(), table.size());
  }
  const size_t data_size = align_up(offset);

  json tensors = json::array();
  for (const auto& [name, info] : graph.tensors) {
    json t = {{"name", name}, {"dtype", dtype_name(info.dtype)}, {"shape", info.shape}};
    if (!info.layout.empty()) t["layout"] = info.layout;
    if (auto table = quant_offset_of.find(name); table != quant_offset_of.end())
      t["quant"] = {{"axis", info.quant->axis}, {"table_offset", table->second}};
    else if (info.quant)
      t["quant"] = {{"scales", info.quant->scales}, {"zero_points", info.quant->zero_points}, {"axis", info.quant->axis}};
    if (info.is_constant()) {
      t["offset"] = offset_of.at(name);
      t["size"] = info.data.size();
    }
    tensors.push_back(std::move(t));
  }
  json nodes = json::array();
  for (const auto& node : graph.nodes) {
    json attrs = json::object();
    for (const auto& [key, value] : node.attrs) attrs[key] = attr_to_json(value, "node '" + node.name + "'");
    nodes.push_back({{"name", node.name}, {"op", node.op}, {"inputs", node.inputs}, {"outputs", node.outputs}, {"attrs", attrs}});
  }
  layout.graph = {{"inputs", graph.inputs}, {"outputs", graph.outputs}, {"tensors", tensors}, {"nodes", nodes}, {"metadata", graph.metadata}};
  layout.graph_text = layout.graph.dump();

  Header& h = layout.header;
  h.graph_offset = kHeaderSize;
  h.graph_size = layout.graph_text.size();
  h.data_offset = align_up(h.graph_offset + h.graph_size);
  h.data_size = data_size;
  h.file_size = h.data_offset + h.data_size;
  h.graph_checksum = checksum(layout.graph_text.data(), layout.graph_text.size());
  Checksum data_sum;
  static const std::byte zeros[kDataAlignment] = {};
  size_t at = 0;
  for (const Blob& blob : layout.blobs) {
    data_sum.update(zeros, blob.offset - at);
    data_sum.update(blob.bytes, blob.size);
    at = blob.offset + blob.size;
  }
  data_sum.update(zeros, data_size - at);
  h.data_checksum = data_sum.finish();
  return layout;
}

template <typename Sink>
void emit(const Layout& layout, Sink&& sink) {
  static const std::byte zeros[kDataAlignment] = {};
  const auto header = encode_header(layout.header);
  sink(header.data(), header.size());
  sink(layout.graph_text.data(), layout.graph_text.size());
  sink(zeros, layout.header.data_offset - (layout.header.graph_offset + layout.header.graph_size));
  size_t at = 0;
  for (const Blob& blob : layout.blobs) {
    sink(zeros, blob.offset - at);
    sink(blob.bytes, blob.size);
    at = blob.offset + blob.size;
  }
  sink(zeros, layout.header.data_size - at);
}

// ---- reading ----------------------------------------------------------------------------

// The op registry is built on first use (find_op), here on the data check's thread while the JSON is
// parsed. A registry that fails to build (an internal error) fails again, reported, on the reader's
// find_op.
void build_op_registry() {
  try {
    find_op("");
  } catch (...) {
  }
}

class Reader {
 public:
  // data_check: where the data section's checksum is started, before decoding.
  Reader(const InputBytes& input, DataCheck& data_check) : input_(input), data_check_(data_check) {}

  Graph decode() {
    const Header h = read_header();
    const char* text = reinterpret_cast<const char*>(input_.data + h.graph_offset);
    const DataSection data{.owner = input_.owner, .bytes = input_.data + h.data_offset, .size = h.data_size};
    Graph graph = decode_graph_section(text, h.graph_size, data, input_.source);
    try {
      graph.validate();
    } catch (const Error& e) {
      throw with_context(e, input_.source);
    }
    return graph;
  }

 private:
  template <typename... Args>
  [[noreturn]] void bad(fmt::format_string<Args...> format, Args&&... args) const {
    invalid_input("{}: {}", input_.source, fmt::format(format, std::forward<Args>(args)...));
  }

  Header read_header() const {
    const size_t size = input_.size;
    if (size == 0) bad("empty file, not an mt model");
    if (size < 8 || std::memcmp(input_.data, kMagic, 8) != 0) bad("not an mt model (bad magic; is it an ONNX file? use mt-convert)");
    if (size < kHeaderSize) bad("truncated: {} bytes, shorter than the {}-byte header", size, kHeaderSize);
    const std::byte* p = input_.data;
    Header h;
    h.format_version = get_le<uint32_t>(p + 8);
    h.header_size = get_le<uint32_t>(p + 12);
    h.writer_major = get_le<uint16_t>(p + 16);
    h.writer_minor = get_le<uint16_t>(p + 18);
    h.writer_patch = get_le<uint16_t>(p + 20);
    h.flags = get_le<uint16_t>(p + 22);
    if (h.format_version > kFormatVersion)
      bad("written by mt-{}.{}.{} (format {}), this is mt-{} (format {}): upgrade mt to read it", h.writer_major,
          h.writer_minor, h.writer_patch, h.format_version, version_string(), kFormatVersion);
    if (h.format_version == 0) bad("invalid format version 0");
    // Formats 1 to 3 are sealed with the older checksum; a corrupted version field picks the wrong
    // algorithm, whose header checksum then does not match either.
    const ChecksumAlgorithm algorithm = checksum_algorithm_for(h.format_version);
    if (get_le<uint64_t>(p + kHeaderChecksumAt) != checksum(p, kHeaderChecksumAt, algorithm))
      bad("header checksum mismatch (file corrupted)");
    if (h.header_size != kHeaderSize) bad("header size {} is not {}", h.header_size, kHeaderSize);
    if (h.flags != 0) bad("unknown header flags 0x{:x}", h.flags);
    h.graph_offset = get_le<uint64_t>(p + 24);
    h.graph_size = get_le<uint64_t>(p + 32);
    h.data_offset = get_le<uint64_t>(p + 40);
    h.data_size = get_le<uint64_t>(p + 48);
    h.graph_checksum = get_le<uint64_t>(p + 56);
    h.data_checksum = get_le<uint64_t>(p + 64);
    h.file_size = get_le<uint64_t>(p + 72);
    if (h.file_size > size) bad("truncated: header says {} bytes, file has {}", h.file_size, size);
    if (h.file_size < size) bad("header says {} bytes, file has {} (trailing data)", h.file_size, size);
    if (h.graph_offset != kHeaderSize) bad("graph section offset {} is not {}", h.graph_offset, kHeaderSize);
    if (h.graph_size > size - h.graph_offset) bad("graph section ({} bytes at {}) extends past the end of the file", h.graph_size, h.graph_offset);
    if (h.data_offset % kDataAlignment != 0) bad("data section offset {} is not {}-byte aligned", h.data_offset, kDataAlignment);
    if (h.data_offset < h.graph_offset + h.graph_size) bad("data section at {} overlaps the graph section", h.data_offset);
    if (h.data_offset > size || h.data_size != size - h.data_offset)
      bad("data section ({} bytes at {}) does not end at the end of the file ({} bytes)", h.data_size, h.data_offset, size);
    // The bytes no checksum covers are zero: header bytes 96 to 127 and the padding before the data
    // section. So a corrupted byte anywhere in the file is refused.
    if (!all_zero(p + kHeaderReservedAt, kHeaderSize - kHeaderReservedAt)) bad("reserved header bytes 96 to 127 are not zero");
    if (!all_zero(p + h.graph_offset + h.graph_size, h.data_offset - (h.graph_offset + h.graph_size)))
      bad("the padding between the graph and data sections is not zero");
    if (checksum(p + h.graph_offset, h.graph_size, algorithm) != h.graph_checksum)
      bad("graph section checksum mismatch (file corrupted)");
    data_check_.start(input_.owner, p + h.data_offset, h.data_size, h.data_checksum, algorithm, input_.source,
                      build_op_registry);
    return h;
  }

  const InputBytes& input_;
  DataCheck& data_check_;
};

}  // namespace

DataCheck::~DataCheck() {
  if (thread_.joinable()) thread_.join();
}

void DataCheck::start(std::shared_ptr<const void> owner, const std::byte* data, size_t size, uint64_t expected,
                      ChecksumAlgorithm algorithm, std::string source, void (*first)()) {
  if (thread_.joinable()) thread_.join();
  owner_ = std::move(owner);
  source_ = std::move(source);
  mismatch_ = false;
  data_ = data;
  size_ = size;
  verified_.store(0, std::memory_order_relaxed);
  if (size < kDataCheckThreadMinBytes) {
    mismatch_ = checksum(data, size, algorithm) != expected;
    return;
  }
  // In chunks, telling wait() how far it has come.
  auto verify = [this, data, size, expected, algorithm] {
    Checksum sum(algorithm);
    for (size_t at = 0; at < size; at += kChunk) {
      sum.update(data + at, std::min(kChunk, size - at));
      verified_.store(at + kChunk, std::memory_order_relaxed);
    }
    mismatch_ = sum.finish() != expected;
  };
  try {
    thread_ = std::thread([verify, first] {
      if (first != nullptr) first();
      verify();
    });
  } catch (const std::system_error&) {  // no thread to be had (a process or memory limit): verify here
    verify();
  }
}

void DataCheck::wait() {
  if (thread_.joinable()) {
    touch_unverified_tail();
    thread_.join();
  }
  owner_.reset();
  if (mismatch_) invalid_input("{}: {}", source_, kDataMismatch);
}

// Most of the checksum thread's time on a fresh memory map goes to the page faults that map the file
// (0.9 of 1.35 ms for MobileNetV2's 13.5 MB), not to the sums. The waiting caller takes those over for
// the pages the thread has not reached, from the end backwards, until the two meet: a read of one byte
// a page maps it (and the kernel maps its neighbours with it), so the thread then only sums them.
void DataCheck::touch_unverified_tail() const {
  constexpr size_t kPage = 4096;
  for (size_t at = size_ & ~(kPage - 1); at >= kPage; at -= kPage) {
    if (at < verified_.load(std::memory_order_relaxed) + 2 * kChunk) return;  // the thread is there
    (void)*reinterpret_cast<const volatile std::byte*>(data_ + at - kPage);
  }
}

Graph decode_model(const InputBytes& input) {
  DataCheck data_check;
  Graph graph = decode_model(input, data_check);
  data_check.wait();
  return graph;
}

Graph decode_model(const InputBytes& input, DataCheck& data_check) {
  return data_check.guard([&] { return Reader(input, data_check).decode(); });
}

Graph read_model(const std::string& path) { return decode_model(read_input(path)); }

Graph read_model(const std::string& path, DataCheck& data_check) { return decode_model(read_input(path), data_check); }

void write_model(const Graph& graph, OutputFile& out) {
  const Layout layout = plan_layout(graph);
  emit(layout, [&](const void* data, size_t size) { out.write(data, size); });
}

std::vector<std::byte> encode_model(const Graph& graph) {
  const Layout layout = plan_layout(graph);
  std::vector<std::byte> bytes;
  bytes.reserve(layout.header.file_size);
  emit(layout, [&](const void* data, size_t size) {
    auto p = static_cast<const std::byte*>(data);
    bytes.insert(bytes.end(), p, p + size);
  });
  return bytes;
}

void save_model(const Graph& graph, const std::string& path) {
  graph.validate();  // never write a model that would not read back
  OutputFile out(path, /*binary=*/true);
  write_model(graph, out);
  out.commit();
}

}  // namespace mt
