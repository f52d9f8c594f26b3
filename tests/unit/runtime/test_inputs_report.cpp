// mt-run's library side: input specs, random inputs, input checks and their errors, output
// specs, file names, labels, top-k and checks against references.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>

#include "lib/core/error.h"
#include "lib/runtime/inputs.h"
#include "lib/runtime/report.h"

namespace mt {
namespace {

Graph two_input_graph() {
  Graph graph;
  graph.add_tensor({.name = "image", .dtype = DType::f32, .shape = {1, 3, 4, 4}});
  graph.add_tensor({.name = "ids", .dtype = DType::i64, .shape = {2, 3}});
  graph.add_tensor({.name = "out", .dtype = DType::f32, .shape = {1, 5}});
  graph.inputs = {"image", "ids"};
  graph.outputs = {"out"};
  return graph;
}

std::string error_of(const std::function<void()>& fn, ExitCode expected_code) {
  try {
    fn();
  } catch (const Error& e) {
    CHECK(e.code() == expected_code);
    return e.what();
  }
  FAIL("expected an error");
  return "";
}

HostArray floats(Shape shape, std::vector<float> values) {
  return {.dtype = DType::f32, .shape = std::move(shape), .data = ConstData::copy_of(values.data(), values.size() * 4)};
}

}  // namespace

TEST_CASE("parse_input_spec: named, single-input shorthand, errors") {
  const Graph graph = two_input_graph();
  CHECK(parse_input_spec(graph, "ids=a=b.npy").index == 1);
  CHECK(parse_input_spec(graph, "ids=a=b.npy").path == "a=b.npy");
  CHECK(error_of([&] { parse_input_spec(graph, "x.npy"); }, ExitCode::usage) ==
        "--input x.npy: the model has 2 inputs, so name one as NAME=FILE (inputs: image, ids)");
  CHECK(error_of([&] { parse_input_spec(graph, "nope=x.npy"); }, ExitCode::usage) ==
        "--input nope=x.npy: the model has no input 'nope' (inputs: image, ids)");
  Graph single = graph;
  single.inputs = {"image"};
  CHECK(parse_input_spec(single, "dir/x.npy").path == "dir/x.npy");
  CHECK(error_of([&] { parse_input_spec(single, "odd=name.npy"); }, ExitCode::usage) ==
        "--input odd=name.npy: the model has no input 'odd' (inputs: image)");
  const std::string odd = "/tmp/mt_test_odd=" + std::to_string(::getpid()) + ".npy";
  std::ofstream(odd) << "x";
  CHECK(parse_input_spec(single, odd).path == odd);  // an existing file whose name has '=' in it
  std::remove(odd.c_str());
}

TEST_CASE("random_array is seeded and in range") {
  const HostArray a = random_array(DType::f32, {100}, 5), b = random_array(DType::f32, {100}, 5);
  CHECK(std::memcmp(a.data.data(), b.data.data(), 400) == 0);
  CHECK(std::memcmp(a.data.data(), random_array(DType::f32, {100}, 6).data.data(), 400) != 0);
  for (int i = 0; i < 100; ++i) {
    CHECK(a.as<float>()[i] >= -1.0f);
    CHECK(a.as<float>()[i] < 1.0f);
  }
  const HostArray ids = random_array(DType::i64, {50}, 1);
  for (int i = 0; i < 50; ++i) {
    CHECK(ids.as<int64_t>()[i] >= 0);
    CHECK(ids.as<int64_t>()[i] < 10);
  }
}

TEST_CASE("load_inputs: files, random fill, and errors") {
  const Graph graph = two_input_graph();
  const std::string dir = "/tmp/mt_test_inputs_" + std::to_string(::getpid());
  const std::string ids_path = dir + "_ids.npy", wrong_path = dir + "_wrong.npy";
  const std::vector<int64_t> ids = {1, 2, 3, 4, 5, 6};
  write_npy(ids_path, DType::i64, {2, 3}, ids.data());
  const std::vector<int32_t> ids32 = {1, 2, 3, 4, 5, 6};
  write_npy(wrong_path, DType::i32, {3, 2}, ids32.data());

  InputOptions options;
  options.specs = {"ids=" + ids_path};
  CHECK(error_of([&] { load_inputs(graph, options); }, ExitCode::invalid_input) ==
        "missing input: 'image' (float32 1x3x4x4); give --input NAME=FILE.npy (or an image), or --random-input");
  options.random = true;
  options.seed = 9;
  const auto arrays = load_inputs(graph, options);
  REQUIRE(arrays.size() == 2);
  CHECK(arrays[0].shape == Shape{1, 3, 4, 4});
  CHECK(std::memcmp(arrays[0].data.data(), random_array(DType::f32, {1, 3, 4, 4}, 9).data.data(), 192) == 0);
  CHECK(arrays[1].as<int64_t>()[5] == 6);

  options.random = false;
  options.specs = {};
  CHECK(error_of([&] { load_inputs(graph, options); }, ExitCode::invalid_input) ==
        "missing inputs: 'image' (float32 1x3x4x4), 'ids' (int64 2x3); give --input NAME=FILE.npy (or an image), or "
        "--random-input");
  options.random = true;
  options.specs = {"ids=" + wrong_path};
  CHECK(error_of([&] { load_inputs(graph, options); }, ExitCode::invalid_input) ==
        "input 'ids': " + wrong_path + " holds int32 3x2, the model expects int64 2x3");
  options.specs = {"ids=" + ids_path, "ids=" + ids_path};
  CHECK(error_of([&] { load_inputs(graph, options); }, ExitCode::usage).find("given twice") != std::string::npos);
  options.specs = {"ids=" + dir + "_picture.png"};
  CHECK(error_of([&] { load_inputs(graph, options); }, ExitCode::invalid_input) ==
        "input 'ids' is int64 2x3: an image can only feed a float32 4-D input; give a .npy file");
  options.specs = {"image=" + dir + "_missing.png"};
  CHECK(error_of([&] { load_inputs(graph, options); }, ExitCode::invalid_input) == dir + "_missing.png: no such file");
  std::remove(ids_path.c_str());
  std::remove(wrong_path.c_str());
}

TEST_CASE("output specs, file names and labels") {
  const Graph graph = two_input_graph();
  CHECK(parse_output_spec(graph, "ref.npy", "--compare").index == 0);
  CHECK(parse_output_spec(graph, "out=ref.npy", "--compare").path == "ref.npy");
  CHECK(error_of([&] { parse_output_spec(graph, "out=", "--output"); }, ExitCode::usage) == "--output out=: no file named");
  CHECK(output_file_name("/classifier/Gemm_output_0") == "_classifier_Gemm_output_0.npy");
  CHECK(output_file_name("logits:0") == "logits_0.npy");
  CHECK(output_file_name("..") == "_...npy");

  const std::string path = "/tmp/mt_test_labels_" + std::to_string(::getpid()) + ".txt";
  std::ofstream(path) << "cat\r\ndog\n\nbird\n";
  CHECK(read_labels(path) == std::vector<std::string>{"cat", "dog", "", "bird"});
  std::remove(path.c_str());
}

TEST_CASE("top_k per row along the last axis") {
  const HostArray scores = floats({2, 4}, {0.1f, 0.7f, 0.7f, -1.0f, 5.0f, 4.0f, 3.0f, 6.0f});
  const auto rows = top_k(scores, 2);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0][0].index == 1);  // ties keep the lower index first
  CHECK(rows[0][1].index == 2);
  CHECK(rows[1][0].index == 3);
  CHECK(rows[1][0].value == 6.0);
  CHECK(rows[1][1].index == 0);
  CHECK(top_k(scores, 10)[0].size() == 4);
}

TEST_CASE("check_output: absolute, range-relative and cosine tolerances") {
  const HostArray ref = floats({4}, {0, 10, -10, 5});
  const HostArray close = floats({4}, {0.001f, 10, -10, 5});
  CheckOptions options;  // atol 1e-4, rtol 1e-4: 0.001 fails at index 0
  CheckResult r = check_output("y", close, ref, "ref.npy", options);
  CHECK_FALSE(r.passed);
  CHECK(r.failure.find("1 of 4 elements exceed") != std::string::npos);
  CHECK(r.failure.find("first at [0]") != std::string::npos);
  options.atol_range = 1e-4;  // range 20 -> atol 2e-3
  options.rtol = 0;
  r = check_output("y", close, ref, "ref.npy", options);
  CHECK(r.atol == doctest::Approx(2e-3));
  CHECK(r.passed);
  options.min_cosine = 0.9999999999;
  r = check_output("y", close, ref, "ref.npy", options);
  CHECK_FALSE(r.passed);
  CHECK(r.failure.find("cosine") != std::string::npos);
  CHECK(error_of([&] { check_output("y", floats({2, 2}, {0, 10, -10, 5}), ref, "ref.npy", {}); }, ExitCode::invalid_input) ==
        "output 'y' is float32 2x2 but the reference ref.npy is float32 4");
}

}  // namespace mt
