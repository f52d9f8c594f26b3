// Initializers in each TensorProto encoding: raw bytes, typed fields, external data files
// beside the model (and the references that must be refused).
#include <fstream>

#include "tests/unit/import/onnx_test_util.h"

namespace mt::test {
namespace {

// y = x + w, with w's TensorProto set up by `make_w`.
OnnxBuilder add_model(const std::function<void(onnx::TensorProto&)>& make_w, std::vector<int64_t> dims = {4}) {
  OnnxBuilder b(13);
  b.input("x", {4}).output("y");
  auto* w = b.graph().add_initializer();
  w->set_name("w");
  for (auto d : dims) w->add_dims(d);
  w->set_data_type(onnx::TensorProto::FLOAT);
  make_w(*w);
  b.node("Add", {"x", "w"}, {"y"});
  return b;
}

std::string float_bytes(const std::vector<float>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
}

void set_external(onnx::TensorProto& w, const std::string& location, const std::string& offset,
                  const std::string& length) {
  w.set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const char* key, const std::string& value) {
    if (value.empty()) return;
    auto* entry = w.add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  };
  add("location", location);
  add("offset", offset);
  add("length", length);
}

TEST_CASE("raw_data and typed fields") {
  Graph g = add_model([](auto& w) { w.set_raw_data(float_bytes({1, 2, 3, 4})); }).import();
  CHECK(constant_values<float>(g, "w") == std::vector<float>{1, 2, 3, 4});

  Error e = import_error(add_model([](auto& w) { w.set_raw_data(float_bytes({1, 2, 3})); }));
  CHECK(e.code() == ExitCode::invalid_input);
  CHECK(std::string(e.what()).find("tensor 'w': raw_data holds 12 bytes, shape 4 of float32 needs 16") !=
        std::string::npos);

  OnnxBuilder ints(13);
  ints.input("x", {3}, onnx::TensorProto::INT8).output("y", onnx::TensorProto::INT8);
  auto* w = ints.graph().add_initializer();
  w->set_name("w");
  w->add_dims(3);
  w->set_data_type(onnx::TensorProto::INT8);
  for (int v : {-1, 2, 127}) w->add_int32_data(v);
  auto* flags = ints.graph().add_initializer();
  flags->set_name("flags");
  flags->add_dims(2);
  flags->set_data_type(onnx::TensorProto::BOOL);
  flags->set_raw_data(std::string("\x00\x05", 2));
  ints.node("Identity", {"x"}, {"y"});
  ints.node("Identity", {"w"}, {"w_out"});
  ints.node("Identity", {"flags"}, {"flags_out"});
  ints.output("w_out", onnx::TensorProto::INT8).output("flags_out", onnx::TensorProto::BOOL);
  g = ints.import();
  CHECK(constant_values<int8_t>(g, "w") == std::vector<int8_t>{-1, 2, 127});
  CHECK(constant_values<uint8_t>(g, "flags") == std::vector<uint8_t>{0, 1});  // booleans normalised
}

TEST_CASE("an initializer of a type mt lacks is unsupported, named") {
  OnnxBuilder b(13);
  b.input("x", {2}).output("y");
  auto* w = b.graph().add_initializer();
  w->set_name("wd");
  w->add_dims(2);
  w->set_data_type(onnx::TensorProto::DOUBLE);
  w->add_double_data(1);
  w->add_double_data(2);
  b.node("Add", {"x", "wd"}, {"y"}, "add");
  Error e = import_error(b);
  CHECK(e.code() == ExitCode::unsupported);
  CHECK(std::string(e.what()).find("tensor 'wd' has element type DOUBLE") != std::string::npos);
}

TEST_CASE("external data loads from beside the model, with offset and length") {
  const auto data_path = temp_dir() / "weights.bin";
  std::ofstream(data_path, std::ios::binary) << float_bytes({9, 9, 1, 2, 3, 4, 9});
  Graph g = add_model([](auto& w) { set_external(w, "weights.bin", "8", "16"); }).import();
  CHECK(constant_values<float>(g, "w") == std::vector<float>{1, 2, 3, 4});
  check_close(run_graph(g, {{1, 1, 1, 1}}), {2, 3, 4, 5});

  // Length may be omitted: the rest of the file from the offset.
  std::ofstream(temp_dir() / "tail.bin", std::ios::binary) << float_bytes({0, 5, 6, 7, 8});
  g = add_model([](auto& w) { set_external(w, "tail.bin", "4", ""); }).import();
  CHECK(constant_values<float>(g, "w") == std::vector<float>{5, 6, 7, 8});
}

TEST_CASE("external data references that are refused") {
  std::ofstream(temp_dir() / "weights.bin", std::ios::binary) << float_bytes({1, 2, 3, 4});
  auto error_for = [](const std::string& location, const std::string& offset, const std::string& length) {
    return import_error(add_model([&](auto& w) { set_external(w, location, offset, length); }));
  };
  for (const std::string& escaping :
       std::vector<std::string>{"../weights.bin", "sub/../../weights.bin", (temp_dir() / "weights.bin").string()}) {
    INFO(escaping);
    Error e = error_for(escaping, "0", "16");
    CHECK(e.code() == ExitCode::invalid_input);
    const std::string message = e.what();
    // The ONNX checker may refuse it first; either way it is named and never read.
    CHECK((message.find("is outside the model's directory") != std::string::npos ||
           message.find("fails the ONNX checker") != std::string::npos));
  }
  Error e = error_for("weights.bin", "8", "16");
  CHECK(e.code() == ExitCode::invalid_input);
  CHECK(std::string(e.what()).find("external data range 8+16 is beyond the end of weights.bin (16 bytes)") !=
        std::string::npos);
  e = error_for("weights.bin", "20", "");
  CHECK(std::string(e.what()).find("offset 20 is beyond the end") != std::string::npos);
  e = error_for("weights.bin", "0", "12");
  CHECK(std::string(e.what()).find("external data holds 12 bytes, its shape and type need 16") != std::string::npos);
  e = error_for("weights.bin", "-4", "16");
  CHECK(std::string(e.what()).find("offset '-4' is not a byte count") != std::string::npos);
  e = error_for("no_such.bin", "0", "16");
  CHECK(e.code() == ExitCode::invalid_input);
}

}  // namespace
}  // namespace mt::test
