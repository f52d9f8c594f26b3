// The .mt format: byte-exact round trips, alignment, and every validation failure giving a
// one-line error with the right exit code.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "lib/format/checksum.h"
#include "lib/format/model_file.h"
#include "lib/ir/stored_layout.h"
#include "lib/ops/registry.h"

using namespace mt;
using nlohmann::json;

namespace {

ConstData floats(std::initializer_list<float> values) { return ConstData::copy_of(values.begin(), values.size() * sizeof(float)); }

TensorInfo constant(const std::string& name, Shape shape, ConstData data) {
  TensorInfo t{.name = name, .dtype = DType::f32, .shape = std::move(shape)};
  t.data = std::move(data);
  return t;
}

Graph make_graph() {
  Graph g;
  g.add_tensor({.name = "x", .dtype = DType::f32, .shape = {1, 2, 3, 3}});
  g.inputs = {"x"};
  g.add_tensor(constant("w", {3, 2, 1, 1}, floats({1, 2, 3, 4, 5, 6})));
  g.add_tensor(constant("b", {3}, floats({0.5f, -0.5f, 0.25f})));
  g.add_tensor(constant("c", {1, 3, 1, 1}, floats({1, 2, 3})));
  g.nodes.push_back({.name = "conv", .op = "conv2d", .inputs = {"x", "w", "b"}, .outputs = {"y"},
                     .attrs = {{"strides", std::vector<int64_t>{1, 1}}, {"act_max", 6.5}}});
  g.nodes.push_back({.name = "act", .op = "relu", .inputs = {"y"}, .outputs = {"z"}});
  g.nodes.push_back({.name = "sum", .op = "add", .inputs = {"z", "c"}, .outputs = {"out"}});
  g.outputs = {"out"};
  g.infer_shapes();
  g.metadata["note"] = "unit test";
  return g;
}

InputBytes as_input(const std::vector<std::byte>& bytes) {
  auto copy = std::make_shared<std::vector<std::byte>>(bytes);
  return InputBytes{.owner = copy, .data = copy->data(), .size = copy->size(), .source = "test.mt"};
}

template <typename T>
T read_le(const std::vector<std::byte>& b, size_t at) {
  uint64_t v = 0;
  for (size_t i = sizeof(T); i-- > 0;) v = (v << 8) | static_cast<uint64_t>(b[at + i]);
  return static_cast<T>(v);
}
template <typename T>
void write_le(std::vector<std::byte>& b, size_t at, T value) {
  for (size_t i = 0; i < sizeof(T); ++i) b[at + i] = static_cast<std::byte>((static_cast<uint64_t>(value) >> (8 * i)) & 0xff);
}
ChecksumAlgorithm algorithm_of(const std::vector<std::byte>& b) { return checksum_algorithm_for(read_le<uint32_t>(b, 8)); }
void reseal_header(std::vector<std::byte>& b) { write_le<uint64_t>(b, 88, checksum(b.data(), 88, algorithm_of(b))); }
// Both sections and the header, with the checksum of the file's format version.
void reseal_all(std::vector<std::byte>& b) {
  const auto graph_size = read_le<uint64_t>(b, 32), data_offset = read_le<uint64_t>(b, 40), data_size = read_le<uint64_t>(b, 48);
  write_le<uint64_t>(b, 56, checksum(b.data() + 128, graph_size, algorithm_of(b)));
  write_le<uint64_t>(b, 64, checksum(b.data() + data_offset, data_size, algorithm_of(b)));
  reseal_header(b);
}

// Rebuilds a file around a modified JSON section, with every checksum and offset valid, so the
// test reaches the semantic checks behind them (header layout: man/mt-format.5).
std::vector<std::byte> with_json(const std::vector<std::byte>& original, const json& doc) {
  const auto graph_size = read_le<uint64_t>(original, 32);
  const auto data_offset = read_le<uint64_t>(original, 40);
  const auto data_size = read_le<uint64_t>(original, 48);
  const std::string text = doc.dump();
  const size_t new_data_offset = (128 + text.size() + 63) / 64 * 64;
  std::vector<std::byte> out(new_data_offset + data_size, std::byte{0});
  std::memcpy(out.data(), original.data(), 128);
  std::memcpy(out.data() + 128, text.data(), text.size());
  std::memcpy(out.data() + new_data_offset, original.data() + data_offset, data_size);
  (void)graph_size;
  write_le<uint64_t>(out, 32, text.size());
  write_le<uint64_t>(out, 40, new_data_offset);
  write_le<uint64_t>(out, 56, checksum(text.data(), text.size()));
  write_le<uint64_t>(out, 72, out.size());
  reseal_header(out);
  return out;
}

json graph_json(const std::vector<std::byte>& bytes) {
  const auto size = read_le<uint64_t>(bytes, 32);
  auto text = reinterpret_cast<const char*>(bytes.data() + 128);
  return json::parse(text, text + size);
}

// Decodes and expects an Error with `code` whose one-line message contains `fragment`.
// Decodes, verifying the data section before decoding, or (deferred) on DataCheck's thread while
// decoding, waited for after.
Graph decode(const std::vector<std::byte>& bytes, bool deferred) {
  if (!deferred) return decode_model(as_input(bytes));
  DataCheck check;
  Graph graph = decode_model(as_input(bytes), check);
  check.wait();
  return graph;
}

// Both ways of reading fail with the same one-line error.
void expect_error(const std::vector<std::byte>& bytes, ExitCode code, const std::string& fragment) {
  for (const bool deferred : {false, true}) {
    try {
      decode(bytes, deferred);
      FAIL("expected an error containing: " << fragment << (deferred ? " (data check deferred)" : ""));
    } catch (const Error& e) {
      const std::string message = e.what();
      CHECK_MESSAGE(message.find(fragment) != std::string::npos, message);
      CHECK(message.find('\n') == std::string::npos);
      CHECK(message.rfind("test.mt: ", 0) == 0);
      CHECK(static_cast<int>(e.code()) == static_cast<int>(code));
    }
  }
}

json& tensor_entry(json& doc, const std::string& name) {
  for (auto& t : doc["tensors"])
    if (t["name"] == name) return t;
  throw std::runtime_error("no tensor " + name);
}

}  // namespace

TEST_CASE("round trip is byte-identical and preserves the graph") {
  const Graph g = make_graph();
  const auto bytes = encode_model(g);
  const Graph back = decode_model(as_input(bytes));
  CHECK(encode_model(back) == bytes);
  CHECK(back.inputs == g.inputs);
  CHECK(back.outputs == g.outputs);
  REQUIRE(back.nodes.size() == 3);
  CHECK(back.nodes[0].attrs == g.nodes[0].attrs);
  CHECK(back.metadata == g.metadata);
  CHECK(back.tensor("out").shape == Shape{1, 3, 3, 3});
  const auto w = back.tensor("w").data.as<float>();
  CHECK(std::vector<float>(w.begin(), w.end()) == std::vector<float>{1, 2, 3, 4, 5, 6});
}

TEST_CASE("constants are 64-byte aligned in the file and used in place") {
  const auto bytes = encode_model(make_graph());
  const auto data_offset = read_le<uint64_t>(bytes, 40);
  CHECK(data_offset % 64 == 0);
  const json doc = graph_json(bytes);  // a named copy: a range-for over a temporary's member dangles (ASan)
  for (const auto& t : doc["tensors"])
    if (t.contains("offset")) CHECK(t["offset"].get<uint64_t>() % 64 == 0);
  const InputBytes input = as_input(bytes);
  const Graph g = decode_model(input);
  const std::byte* w = g.tensor("w").data.data();
  CHECK(w >= input.data);
  CHECK(w < input.data + input.size);
}

TEST_CASE("header validation") {
  const auto good = encode_model(make_graph());
  SUBCASE("empty") { expect_error({}, ExitCode::invalid_input, "empty file"); }
  SUBCASE("bad magic") {
    auto b = good;
    b[1] = std::byte{'X'};
    expect_error(b, ExitCode::invalid_input, "not an mt model");
  }
  SUBCASE("truncated header") {
    expect_error(std::vector<std::byte>(good.begin(), good.begin() + 60), ExitCode::invalid_input, "shorter than the 128-byte header");
  }
  SUBCASE("newer format") {
    auto b = good;
    write_le<uint32_t>(b, 8, kFormatVersion + 1);
    write_le<uint16_t>(b, 16, 9);
    reseal_header(b);
    expect_error(b, ExitCode::invalid_input, "written by mt-9.");
  }
  SUBCASE("older formats still read, with their own checksum") {
    for (uint32_t version = 1; version < kFormatVersion; ++version) {
      auto b = good;
      write_le<uint32_t>(b, 8, version);
      reseal_all(b);
      CHECK(decode_model(as_input(b)).nodes.size() == 3);
      // The CRC32C-lanes checksums (format 4 on) on an older file: refused.
      if (checksum_algorithm_for(version) == checksum_algorithm_for(kFormatVersion)) continue;
      auto mixed = good;
      write_le<uint32_t>(mixed, 8, version);
      write_le<uint64_t>(mixed, 88, checksum(mixed.data(), 88, ChecksumAlgorithm::multiply_rotate));
      expect_error(mixed, ExitCode::invalid_input, "graph section checksum mismatch");
    }
  }
  SUBCASE("every corrupted byte is detected") {
    for (size_t at = 0; at < good.size(); ++at) {
      auto b = good;
      b[at] ^= std::byte{0x10};
      CHECK_THROWS_AS(decode(b, false), Error);
      CHECK_THROWS_AS(decode(b, true), Error);
    }
  }
  SUBCASE("header checksum") {
    auto b = good;
    b[30] ^= std::byte{1};
    expect_error(b, ExitCode::invalid_input, "header checksum mismatch");
  }
  SUBCASE("graph checksum") {
    auto b = good;
    b[140] ^= std::byte{1};
    expect_error(b, ExitCode::invalid_input, "graph section checksum mismatch");
  }
  SUBCASE("data checksum") {
    auto b = good;
    b[b.size() - 70] ^= std::byte{1};
    expect_error(b, ExitCode::invalid_input, "data section checksum mismatch");
  }
  SUBCASE("data checksum on its thread: the graph decodes, wait() refuses it; guard() prefers its error") {
    // A data section large enough for DataCheck's thread: an extra constant of 1.2 MB.
    Graph big = make_graph();
    std::vector<float> values(300000, 0.5f);
    big.add_tensor(constant("big", {300000}, ConstData::copy_of(values.data(), values.size() * sizeof(float))));
    REQUIRE(read_le<uint64_t>(encode_model(big), 48) >= kDataCheckThreadMinBytes);
    CHECK(decode_model(as_input(encode_model(big))).tensors.size() == big.tensors.size());
    auto b = encode_model(big);
    b[b.size() - 70] ^= std::byte{1};
    expect_error(b, ExitCode::invalid_input, "data section checksum mismatch");
    DataCheck check;
    const Graph graph = decode_model(as_input(b), check);
    CHECK(graph.nodes.size() == 3);
    CHECK_THROWS_WITH_AS(check.wait(), "test.mt: data section checksum mismatch (file corrupted)", Error);
    DataCheck again;
    const Graph same = decode_model(as_input(b), again);
    CHECK_THROWS_WITH_AS(again.guard([]() -> int { invalid_input("a later error the corrupted weights caused"); }),
                         "test.mt: data section checksum mismatch (file corrupted)", Error);
    DataCheck intact;
    const Graph fine = decode_model(as_input(encode_model(big)), intact);
    CHECK_THROWS_WITH_AS(intact.guard([]() -> int { invalid_input("its own error"); }), "its own error", Error);
    CHECK_NOTHROW(intact.wait());
  }
  SUBCASE("truncated at every section boundary") {
    const auto data_offset = read_le<uint64_t>(good, 40);
    for (size_t cut : {size_t{128}, size_t{129}, size_t(data_offset), size_t(data_offset + 1), good.size() - 1})
      expect_error(std::vector<std::byte>(good.begin(), good.begin() + static_cast<long>(cut)), ExitCode::invalid_input, "truncated");
  }
  SUBCASE("trailing data") {
    auto b = good;
    b.push_back(std::byte{0});
    expect_error(b, ExitCode::invalid_input, "trailing data");
  }
  SUBCASE("sections outside the file") {
    auto b = good;
    write_le<uint64_t>(b, 32, b.size());
    reseal_header(b);
    expect_error(b, ExitCode::invalid_input, "extends past the end");
    b = good;
    write_le<uint64_t>(b, 40, read_le<uint64_t>(good, 40) + 1);
    reseal_header(b);
    expect_error(b, ExitCode::invalid_input, "aligned");
  }
}

TEST_CASE("graph validation") {
  const auto good = encode_model(make_graph());
  json doc = graph_json(good);
  SUBCASE("not JSON") {
    auto b = with_json(good, json("x"));
    expect_error(b, ExitCode::invalid_input, "not valid JSON");
  }
  SUBCASE("deep nesting") {
    json deep = json::array();
    for (int i = 0; i < 40; ++i) deep = json::array({deep});
    doc["metadata"]["deep"] = deep;
    expect_error(with_json(good, doc), ExitCode::invalid_input, "nests deeper");
  }
  SUBCASE("unknown dtype") {
    tensor_entry(doc, "w")["dtype"] = "float128";
    expect_error(with_json(good, doc), ExitCode::invalid_input, "unknown dtype 'float128'");
  }
  SUBCASE("negative dimension") {
    tensor_entry(doc, "x")["shape"] = {1, -2, 3, 3};
    expect_error(with_json(good, doc), ExitCode::invalid_input, "negative dimension");
  }
  SUBCASE("huge shape is rejected before any allocation") {
    tensor_entry(doc, "w")["shape"] = {int64_t{1} << 40, int64_t{1} << 40};
    expect_error(with_json(good, doc), ExitCode::invalid_input, "too large");
  }
  SUBCASE("dtype x shape disagrees with the stored size") {
    tensor_entry(doc, "w")["shape"] = {3, 2, 1, 2};
    expect_error(with_json(good, doc), ExitCode::invalid_input, "needs 48");
  }
  SUBCASE("data outside the data section") {
    tensor_entry(doc, "w")["offset"] = 1 << 20;
    expect_error(with_json(good, doc), ExitCode::invalid_input, "outside the data section");
  }
  SUBCASE("misaligned data") {
    tensor_entry(doc, "w")["offset"] = 4;
    expect_error(with_json(good, doc), ExitCode::invalid_input, "not 64-byte aligned");
  }
  SUBCASE("undefined node input") {
    doc["nodes"][1]["inputs"] = {"nope"};
    expect_error(with_json(good, doc), ExitCode::invalid_input, "'nope', which is not defined");
  }
  SUBCASE("nodes out of order (a cycle or misordering)") {
    std::swap(doc["nodes"][0], doc["nodes"][1]);
    expect_error(with_json(good, doc), ExitCode::invalid_input, "before it is produced");
  }
  SUBCASE("attribute of the wrong type") {
    doc["nodes"][0]["attrs"]["strides"] = "wide";
    expect_error(with_json(good, doc), ExitCode::invalid_input, "attribute 'strides' must be ints");
  }
  SUBCASE("unknown attribute") {
    doc["nodes"][0]["attrs"]["colour"] = 1;
    expect_error(with_json(good, doc), ExitCode::invalid_input, "unknown attribute 'colour'");
  }
  SUBCASE("unknown op") {
    doc["nodes"][1]["op"] = "teleport";
    expect_error(with_json(good, doc), ExitCode::unsupported, "op 'teleport'");
  }
  SUBCASE("missing field") {
    doc["nodes"][1].erase("outputs");
    expect_error(with_json(good, doc), ExitCode::invalid_input, "missing 'outputs'");
  }
  SUBCASE("declared shape disagrees with shape inference") {
    tensor_entry(doc, "y")["shape"] = {1, 3, 2, 2};
    expect_error(with_json(good, doc), ExitCode::invalid_input, "is declared float32 1x3x2x2");
  }
  SUBCASE("graph output not produced") {
    doc["outputs"] = {"ghost"};
    expect_error(with_json(good, doc), ExitCode::invalid_input, "graph output 'ghost'");
  }
  SUBCASE("duplicate tensor") {
    doc["tensors"].push_back(doc["tensors"][0]);
    expect_error(with_json(good, doc), ExitCode::invalid_input, "defined twice");
  }
  SUBCASE("quantization parameters that do not match the shape") {
    tensor_entry(doc, "w")["quant"] = {{"scales", {0.1, 0.2}}, {"zero_points", {0, 0}}, {"axis", 0}};
    expect_error(with_json(good, doc), ExitCode::invalid_input, "expected 3");
  }
  SUBCASE("a per-channel quantization table outside the data section, misaligned, or holding bad values") {
    const int64_t w_offset = tensor_entry(doc, "w")["offset"], b_offset = tensor_entry(doc, "b")["offset"];
    json& quant = tensor_entry(doc, "w")["quant"] = {{"axis", 0}, {"table_offset", 1 << 20}};
    expect_error(with_json(good, doc), ExitCode::invalid_input, "quant table (3 channels at 1048576) lies outside");
    quant["table_offset"] = 8;
    expect_error(with_json(good, doc), ExitCode::invalid_input, "quant table offset 8 is not 64-byte aligned");
    quant["axis"] = -1;
    expect_error(with_json(good, doc), ExitCode::invalid_input, "a quant table needs a per-channel axis, got -1");
    // Tables read over other constants: w's floats 4, 5, 6 as zero points, b's -0.5 as a scale.
    quant = {{"axis", 0}, {"table_offset", w_offset}};
    expect_error(with_json(good, doc), ExitCode::invalid_input, "zero point 1082130432 is out of range");
    quant = {{"axis", 0}, {"table_offset", b_offset}};
    expect_error(with_json(good, doc), ExitCode::invalid_input, "quant scale -0.5 must be positive and finite");
  }
  SUBCASE("the unmodified JSON still reads") { CHECK_NOTHROW(decode_model(as_input(with_json(good, doc)))); }
}

TEST_CASE("quantization parameters: per tensor inline, per channel as a binary table, both round trip") {
  Graph g = make_graph();
  g.tensors.at("w").quant = QuantParams{.scales = {0.5f, 0.25f, 1e-7f}, .zero_points = {0, -3, 255}, .axis = 0};
  g.tensors.at("x").quant = QuantParams{.scales = {0.1f}, .zero_points = {-128}, .axis = -1};
  const auto bytes = encode_model(g);
  const json doc = graph_json(bytes);
  CHECK(tensor_entry(const_cast<json&>(doc), "x")["quant"] ==
        json{{"scales", {0.1f}}, {"zero_points", {-128}}, {"axis", -1}});
  const json w_quant = tensor_entry(const_cast<json&>(doc), "w")["quant"];
  CHECK_FALSE(w_quant.contains("scales"));
  // The table follows every constant: 16 bytes into the data section's 64-byte slots after w, b, c.
  const int64_t table_offset = w_quant["table_offset"];
  CHECK(table_offset == 3 * 64);
  const auto data_offset = read_le<uint64_t>(bytes, 40);
  CHECK(read_le<uint32_t>(bytes, data_offset + table_offset) == 0x3f000000u);       // 0.5f
  CHECK(read_le<uint32_t>(bytes, data_offset + table_offset + 16) == 0xfffffffdu);  // zero point -3
  const Graph back = decode_model(as_input(bytes));
  CHECK(back.tensor("w").quant == g.tensor("w").quant);
  CHECK(back.tensor("x").quant == g.tensor("x").quant);
  CHECK(encode_model(back) == bytes);
}

TEST_CASE("save_model writes atomically and never leaves partial output") {
  const auto dir = std::filesystem::temp_directory_path() / ("mt_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto target = (dir / "model.mt").string();
  SUBCASE("success replaces the target whole") {
    save_model(make_graph(), target);
    CHECK(read_model(target).nodes.size() == 3);
  }
  SUBCASE("an invalid graph writes nothing") {
    Graph bad = make_graph();
    bad.outputs = {"ghost"};
    CHECK_THROWS_AS(save_model(bad, target), Error);
    CHECK_FALSE(std::filesystem::exists(target));
  }
  SUBCASE("an output abandoned before commit leaves no file") {
    {
      OutputFile out(target, true);
      out.write("partial", 7);
    }
    CHECK_FALSE(std::filesystem::exists(target));
  }
  CHECK(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()) <= 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a node list beyond kMaxNodes is refused before any node is read") {
  const auto bytes = encode_model(make_graph());
  json doc = graph_json(bytes);
  // Entries that are not even objects: the count is checked before the first one is looked at.
  doc["nodes"] = json::array();
  for (size_t i = 0; i <= kMaxNodes; ++i) doc["nodes"].push_back(nullptr);
  expect_error(with_json(bytes, doc), ExitCode::invalid_input,
               fmt::format("{} nodes, more than the {} a model may have", kMaxNodes + 1, kMaxNodes));
}

TEST_CASE("stored sizes follow the layout: vulkan layouts pad channels to 4 and may be fp16") {
  CHECK(stored_byte_size(DType::f32, {3, 2, 1, 1}, "") == 24);
  CHECK(stored_byte_size(DType::f32, {3, 2, 1, 1}, "ohwi") == 24);
  CHECK(stored_byte_size(DType::f32, {3, 2, 1, 1}, "vk_conv2d") == 1 * 1 * 16 * 4);
  CHECK(stored_byte_size(DType::f32, {6, 5, 3, 3}, "vk_conv_transpose2d.f16") == 2 * 2 * 9 * 16 * 2);
  CHECK(stored_byte_size(DType::f32, {5, 1, 3, 3}, "vk_depthwise") == 2 * 9 * 4 * 4);
  CHECK(stored_byte_size(DType::f32, {10, 7}, "vk_linear.f16") == 3 * 7 * 4 * 2);
  CHECK(stored_byte_size(DType::f32, {3}, "vk_channels") == 16);
  CHECK(stored_byte_size(DType::f32, {0, 2, 1, 1}, "vk_conv2d") == 0);
  // int8 layouts: one byte a weight, channels padded to 4; int8 tensors only, no fp16 form.
  CHECK(stored_byte_size(DType::i8, {6, 5, 3, 3}, "vk_conv2d_i8") == 2 * 2 * 9 * 16);
  CHECK(stored_byte_size(DType::i8, {5, 1, 3, 3}, "vk_depthwise_i8") == 2 * 9 * 4);
  CHECK(stored_byte_size(DType::i8, {10, 7}, "vk_linear_i8") == 3 * 2 * 16);
  CHECK_THROWS_WITH(stored_byte_size(DType::f32, {10, 7}, "vk_linear_i8"),
                    doctest::Contains("needs an int8 tensor of rank 2, not float32"));
  CHECK_THROWS_WITH(stored_byte_size(DType::i8, {10, 7}, "vk_linear"), doctest::Contains("needs a float32 tensor"));
  CHECK_FALSE(parse_vulkan_layout("vk_conv2d_i8.f16"));
  CHECK(is_int8_layout(parse_vulkan_layout("vk_depthwise_i8")->layout));
  CHECK_FALSE(is_int8_layout(VulkanLayout::depthwise));
  CHECK(parse_vulkan_layout("vk_linear.f16")->fp16);
  CHECK(parse_vulkan_layout("vk_linear.f16")->layout == VulkanLayout::linear);
  CHECK_FALSE(parse_vulkan_layout("vk_linear.f32"));
  CHECK_FALSE(parse_vulkan_layout(".f16"));
  CHECK(vulkan_layout_tag({VulkanLayout::depthwise, true}) == "vk_depthwise.f16");
  CHECK_THROWS_AS(stored_byte_size(DType::f32, {3, 2}, "vk_conv2d"), Error);     // rank
  CHECK_THROWS_AS(stored_byte_size(DType::i8, {3, 2}, "vk_linear"), Error);      // dtype
  CHECK_THROWS_AS(stored_byte_size(DType::f32, {4, 2, 3, 3}, "vk_depthwise"), Error);  // not one channel a group
  // Sizes that would not fit 64 bits are refused, not wrapped (each dim within the element limit).
  CHECK_THROWS_AS(stored_byte_size(DType::f32, {int64_t{1} << 40, int64_t{1} << 40, 1 << 20, 1 << 20}, "vk_conv2d"), Error);
}

TEST_CASE("a constant in a vulkan layout round trips; its stored size is checked against the layout") {
  Graph g = make_graph();
  TensorInfo& w = g.tensors.at("w");  // [3, 2, 1, 1]: one 4x4 block, 16 floats
  std::vector<float> packed(16, 0.0f);
  w.data = ConstData::copy_of(packed.data(), packed.size() * 4);
  w.layout = "vk_conv2d";
  TensorInfo& b = g.tensors.at("b");  // [3] as fp16, padded to 4 halves
  b.data = ConstData::allocate(8);
  b.layout = "vk_channels.f16";
  const auto bytes = encode_model(g);
  CHECK(read_le<uint32_t>(bytes, 8) == kFormatVersion);
  const Graph back = decode_model(as_input(bytes));
  CHECK(back.tensor("w").data.size() == 64);
  CHECK(back.tensor("b").data.size() == 8);
  CHECK(back.tensor("b").layout == "vk_channels.f16");
  CHECK(encode_model(back) == bytes);

  json doc = graph_json(bytes);
  tensor_entry(doc, "w")["size"] = 24;  // the row-major size is wrong for the layout
  expect_error(with_json(bytes, doc), ExitCode::invalid_input, "tensor 'w': 24 bytes stored, but float32 3x2x1x1 in layout 'vk_conv2d' needs 64");
  doc = graph_json(bytes);
  tensor_entry(doc, "b")["layout"] = "vk_channels";  // fp32 needs twice the bytes
  expect_error(with_json(bytes, doc), ExitCode::invalid_input, "in layout 'vk_channels' needs 16");
  doc = graph_json(bytes);
  tensor_entry(doc, "b")["layout"] = "vk_linear";
  expect_error(with_json(bytes, doc), ExitCode::invalid_input, "tensor 'b': layout 'vk_linear' needs a float32 tensor of rank 2");

  // A writer never stores bytes its layout does not account for.
  w.layout = "vk_conv2d.f16";
  CHECK_THROWS_AS(encode_model(g), Error);
}

TEST_CASE("stored sizes follow the layout: the cpu layouts are the packed forms of the cpu engines") {
  // cpu_gemm: ceil(M/32) panels of k x 32 floats, then the bias padded to the panels.
  CHECK(stored_byte_size(DType::f32, {3, 2, 1, 1}, "cpu_gemm") == (32 * 2 + 32) * 4);
  CHECK(stored_byte_size(DType::f32, {40, 3, 3, 3}, "cpu_gemm") == (64 * 27 + 64) * 4);
  CHECK(stored_byte_size(DType::f32, {40, 7}, "cpu_gemm") == (64 * 7 + 64) * 4);  // linear [N, K]
  // Winograd: 36 or 16 points of [M][C], or of a GEMM block of C x M.
  CHECK(stored_byte_size(DType::f32, {5, 4, 3, 3}, "cpu_winograd4") == 36 * 5 * 4 * 4);
  CHECK(stored_byte_size(DType::f32, {5, 4, 3, 3}, "cpu_winograd2") == 16 * 5 * 4 * 4);
  CHECK(stored_byte_size(DType::f32, {5, 4, 3, 3}, "cpu_winograd4_gemm") == 36 * (32 * 4 + 32) * 4);
  CHECK(stored_byte_size(DType::f32, {33, 4, 3, 3}, "cpu_winograd2_gemm") == 16 * (64 * 4 + 64) * 4);
  // int8 VNNI: taps x channels rounded up to 4 bytes per column, then an int32 bias and a float multiplier.
  CHECK(stored_byte_size(DType::i8, {40, 5, 3, 3}, "cpu_vnni_gemm") == 64 * (9 * 8 + 8));
  CHECK(stored_byte_size(DType::i8, {40, 5, 3, 3}, "cpu_vnni_gemm_gathered") == 64 * (48 + 8));
  CHECK(stored_byte_size(DType::i8, {10, 6}, "cpu_vnni_gemm") == 32 * (8 + 8));
  // Depthwise: per 16 channels, k rows of ceil(k/2) int16 pairs, then bias and multiplier.
  CHECK(stored_byte_size(DType::i8, {20, 1, 3, 3}, "cpu_vnni_depthwise") == 32 * (3 * 2 * 4 + 8));
  CHECK(stored_byte_size(DType::i8, {20, 1, 5, 5}, "cpu_vnni_depthwise") == 32 * (5 * 3 * 4 + 8));
  CHECK(stored_byte_size(DType::f32, {0, 2, 1, 1}, "cpu_gemm") == 0);
  for (CpuLayout layout :
       {CpuLayout::gemm, CpuLayout::winograd4, CpuLayout::winograd2, CpuLayout::winograd4_gemm,
        CpuLayout::winograd2_gemm, CpuLayout::vnni_gemm, CpuLayout::vnni_gemm_gathered, CpuLayout::vnni_depthwise})
    CHECK(parse_cpu_layout(cpu_layout_tag(layout)) == layout);
  CHECK_FALSE(parse_cpu_layout("cpu_gemm.f16"));
  CHECK_FALSE(parse_cpu_layout("ohwi"));
  // Each layout's dtype, rank and kernel.
  CHECK_THROWS_AS(stored_byte_size(DType::i8, {3, 2}, "cpu_gemm"), Error);
  CHECK_THROWS_AS(stored_byte_size(DType::f32, {3, 2, 2}, "cpu_gemm"), Error);
  CHECK_THROWS_AS(stored_byte_size(DType::f32, {3, 2}, "cpu_winograd4"), Error);
  CHECK_THROWS_AS(stored_byte_size(DType::f32, {3, 2, 5, 5}, "cpu_winograd2_gemm"), Error);
  CHECK_THROWS_AS(stored_byte_size(DType::f32, {3, 2, 1, 1}, "cpu_vnni_gemm"), Error);
  CHECK_THROWS_AS(stored_byte_size(DType::i8, {3, 2}, "cpu_vnni_gemm_gathered"), Error);
  CHECK_THROWS_AS(stored_byte_size(DType::i8, {4, 2, 3, 3}, "cpu_vnni_depthwise"), Error);  // not one channel a group
  CHECK_THROWS_AS(stored_byte_size(DType::i8, {4, 1, 3, 5}, "cpu_vnni_depthwise"), Error);  // not square
  // Sizes that would not fit 64 bits are refused, not wrapped.
  CHECK_THROWS_AS(stored_byte_size(DType::f32, {int64_t{1} << 40, int64_t{1} << 40, 1 << 20, 1 << 20}, "cpu_gemm"),
                  Error);
  CHECK_THROWS_AS(stored_byte_size(DType::i8, {int64_t{1} << 40, 1, 1 << 20, 1 << 20}, "cpu_vnni_depthwise"), Error);
}

TEST_CASE("a constant in a cpu layout round trips; its stored size is checked against the layout") {
  Graph g = make_graph();
  TensorInfo& w = g.tensors.at("w");  // [3, 2, 1, 1]: one panel of 2 x 32 floats and 32 bias floats
  w.data = ConstData::allocate(96 * 4);
  w.layout = "cpu_gemm";
  const auto bytes = encode_model(g);
  CHECK(read_le<uint32_t>(bytes, 8) == kFormatVersion);
  const Graph back = decode_model(as_input(bytes));
  CHECK(back.tensor("w").layout == "cpu_gemm");
  CHECK(back.tensor("w").data.size() == 96 * 4);
  CHECK(encode_model(back) == bytes);

  json doc = graph_json(bytes);
  tensor_entry(doc, "w")["size"] = 24;  // the row-major size
  expect_error(with_json(bytes, doc), ExitCode::invalid_input,
               "tensor 'w': 24 bytes stored, but float32 3x2x1x1 in layout 'cpu_gemm' needs 384");
  doc = graph_json(bytes);
  tensor_entry(doc, "w")["layout"] = "cpu_winograd4";
  expect_error(with_json(bytes, doc), ExitCode::invalid_input, "tensor 'w': layout 'cpu_winograd4' needs a 3x3 kernel");
  doc = graph_json(bytes);
  tensor_entry(doc, "w")["layout"] = "cpu_vnni_gemm";
  expect_error(with_json(bytes, doc), ExitCode::invalid_input,
               "tensor 'w': layout 'cpu_vnni_gemm' needs an int8 tensor");

  // A writer never stores bytes its layout does not account for.
  w.layout = "cpu_winograd4_gemm";
  CHECK_THROWS_AS(encode_model(g), Error);
}
