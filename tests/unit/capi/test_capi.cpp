// The C API (include/mt/mt.h) through libmt.so, as an app sees it: every error path returns its
// class and a message naming what is wrong; results equal the reference backend's; one model runs
// in many sessions on many threads with the results of a single-threaded run.
#include <doctest/doctest.h>
#include <mt/mt.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "lib/format/model_file.h"
#include "tests/unit/test_graph.h"

namespace {

constexpr size_t kInputFloats = 3 * 16 * 16, kOutputFloats = 10;

using mt::test::random_floats;

// x[1,3,16,16] -> conv 3x3 (8 channels) -> relu -> max pool -> reshape [1,512] -> linear (10 outputs) = y.
std::vector<std::byte> model_bytes() {
  using namespace mt;
  test::TestGraph g;
  std::vector<int64_t> pads{1, 1, 1, 1}, two{2, 2};
  auto h =
      g.node("conv", "conv2d", {g.input("x", {1, 3, 16, 16}), g.constant("w1", {8, 3, 3, 3}), g.constant("b1", {8})},
             {{"pads", pads}});
  h = g.node("relu", "relu", {h});
  h = g.node("pool", "max_pool2d", {h}, {{"kernel_shape", two}, {"strides", two}});
  h = g.node("flat", "reshape", {h}, {{"shape", std::vector<int64_t>{1, 512}}});
  h = g.node("y", "linear", {h, g.constant("w2", {10, 512}), g.constant("b2", {10})});
  return encode_model(g.finish({h}));
}

mt_model* open_test_model() {
  const auto bytes = model_bytes();
  mt_model* model = nullptr;
  REQUIRE(mt_model_open_memory(bytes.data(), bytes.size(), &model) == MT_OK);
  return model;
}

mt_session* make_session(const mt_model* model, const char* device = "cpu", int threads = 1) {
  mt_options options;
  mt_options_init(&options);
  options.device = device;
  options.threads = threads;
  mt_session* session = nullptr;
  INFO(mt_last_error());
  REQUIRE(mt_session_create(model, &options, &session) == MT_OK);
  return session;
}

std::vector<float> run(mt_session* session, const std::vector<float>& input) {
  std::vector<float> output(kOutputFloats, -1.0f);
  REQUIRE(mt_session_bind_input(session, "x", MT_FLOAT32, input.data(), input.size() * sizeof(float)) == MT_OK);
  REQUIRE(mt_session_bind_output(session, "y", MT_FLOAT32, output.data(), output.size() * sizeof(float)) == MT_OK);
  INFO(mt_last_error());
  REQUIRE(mt_session_run(session) == MT_OK);
  return output;
}

// The status, and that the message mentions `needle`.
void check_error(mt_status got, mt_status expected, const std::string& needle) {
  const std::string message = mt_last_error();
  INFO("message: ", message);
  CHECK(got == expected);
  CHECK(message.find(needle) != std::string::npos);
  CHECK(message.find('\n') == std::string::npos);
}

TEST_CASE("capi: version, names") {
  CHECK(std::string(mt_version()).find('.') != std::string::npos);
  CHECK(std::string(mt_status_name(MT_ERROR_UNSUPPORTED)) == "unsupported");
  CHECK(std::string(mt_dtype_name(MT_INT8)) == "int8");
  CHECK(std::string(mt_dtype_name(static_cast<mt_dtype>(42))) == "unknown dtype");
  CHECK(std::string(mt_status_name(static_cast<mt_status>(42))) == "unknown status");
}

TEST_CASE("capi: a model's inputs and outputs") {
  mt_model* model = open_test_model();
  REQUIRE(mt_model_input_count(model) == 1);
  REQUIRE(mt_model_output_count(model) == 1);
  mt_tensor_info info;
  REQUIRE(mt_model_input(model, 0, &info) == MT_OK);
  CHECK(std::string(info.name) == "x");
  CHECK(info.dtype == MT_FLOAT32);
  REQUIRE(info.rank == 4);
  CHECK(std::vector<int64_t>(info.shape, info.shape + 4) == std::vector<int64_t>{1, 3, 16, 16});
  CHECK(info.byte_size == kInputFloats * sizeof(float));
  REQUIRE(mt_model_output(model, 0, &info) == MT_OK);
  CHECK(std::string(info.name) == "y");
  CHECK(std::vector<int64_t>(info.shape, info.shape + info.rank) == std::vector<int64_t>{1, 10});
  CHECK(info.byte_size == kOutputFloats * sizeof(float));
  check_error(mt_model_input(model, 1, &info), MT_ERROR_USAGE, "input index 1 is out of range");
  check_error(mt_model_output(model, 0, nullptr), MT_ERROR_USAGE, "NULL");
  mt_model_close(model);
}

TEST_CASE("capi: opening errors") {
  mt_model* model = reinterpret_cast<mt_model*>(&model);  // must be reset to NULL on failure
  SUBCASE("missing file") {
    check_error(mt_model_open("/nonexistent/model.mt", &model), MT_ERROR_INVALID_INPUT, "/nonexistent/model.mt: no such file");
  }
  SUBCASE("empty path") { check_error(mt_model_open("", &model), MT_ERROR_USAGE, "path is empty"); }
  SUBCASE("bad model bytes") {
    const char junk[] = "this is not a model file, only some text of a plausible length for a header....";
    check_error(mt_model_open_memory(junk, sizeof junk, &model), MT_ERROR_INVALID_INPUT, "<memory>");
  }
  SUBCASE("truncated model") {
    auto bytes = model_bytes();
    bytes.resize(bytes.size() / 2);
    check_error(mt_model_open_memory(bytes.data(), bytes.size(), &model), MT_ERROR_INVALID_INPUT, "<memory>");
  }
  SUBCASE("a corrupted weight") {
    auto bytes = model_bytes();
    bytes[bytes.size() - 5] ^= std::byte{0x40};  // inside the last constant: the data checksum catches it
    check_error(mt_model_open_memory(bytes.data(), bytes.size(), &model), MT_ERROR_INVALID_INPUT, "<memory>");
  }
  CHECK(model == nullptr);
}

TEST_CASE("capi: a model file opens like its bytes and runs alike") {
  const auto bytes = model_bytes();
  const auto path = std::filesystem::temp_directory_path() / ("mt_capi_" + std::to_string(::getpid()) + ".mt");
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  mt_model* from_file = nullptr;
  REQUIRE(mt_model_open(path.c_str(), &from_file) == MT_OK);
  mt_model* from_memory = open_test_model();
  mt_session* a = make_session(from_file);
  mt_session* b = make_session(from_memory);
  // Closing the models first: the sessions keep what they need.
  mt_model_close(from_file);
  mt_model_close(from_memory);
  std::filesystem::remove(path);
  const auto input = random_floats(kInputFloats, 5);
  CHECK(run(a, input) == run(b, input));
  mt_session_destroy(a);
  mt_session_destroy(b);
}

TEST_CASE("capi: session errors") {
  mt_model* model = open_test_model();
  mt_options options;
  mt_options_init(&options);
  mt_session* session = nullptr;
  SUBCASE("unknown device") {
    options.device = "tpu";
    check_error(mt_session_create(model, &options, &session), MT_ERROR_UNSUPPORTED, "device 'tpu' is not built");
  }
  SUBCASE("vulkan device out of range (or no vulkan at all)") {
    options.device = "vulkan";
    options.gpu_index = 99;
    check_error(mt_session_create(model, &options, &session), MT_ERROR_UNSUPPORTED, "vulkan");
  }
  SUBCASE("bad threads") {
    options.threads = 0;
    check_error(mt_session_create(model, &options, &session), MT_ERROR_USAGE, "threads 0");
  }
  SUBCASE("bad precision") {
    options.device = "vulkan";
    options.precision = "fp8";
    check_error(mt_session_create(model, &options, &session), MT_ERROR_USAGE, "precision 'fp8'");
  }
  SUBCASE("a cpu kernel path in the environment that is neither 0 nor 1 (mt(3), ENVIRONMENT)") {
    setenv("MT_CPU_WINOGRAD", "off", 1);
    check_error(mt_session_create(model, &options, &session), MT_ERROR_USAGE, "MT_CPU_WINOGRAD must be 0 or 1, got 'off'");
    unsetenv("MT_CPU_WINOGRAD");
  }
  CHECK(session == nullptr);
  mt_model_close(model);
}

TEST_CASE("capi: binding and running errors") {
  mt_model* model = open_test_model();
  mt_session* session = make_session(model);
  std::vector<float> input(kInputFloats), output(kOutputFloats);
  const size_t in_bytes = input.size() * sizeof(float), out_bytes = output.size() * sizeof(float);
  check_error(mt_session_run(session), MT_ERROR_USAGE, "input 'x' is not bound");
  check_error(mt_session_bind_input(session, "image", MT_FLOAT32, input.data(), in_bytes), MT_ERROR_USAGE,
              "no input 'image' (its inputs: x)");
  check_error(mt_session_bind_input(session, "y", MT_FLOAT32, input.data(), in_bytes), MT_ERROR_USAGE, "no input 'y'");
  check_error(mt_session_bind_input(session, "x", MT_FLOAT32, input.data(), in_bytes - 4), MT_ERROR_USAGE,
              "takes 3072 bytes, the buffer has 3068");
  check_error(mt_session_bind_input(session, "x", MT_FLOAT16, input.data(), in_bytes), MT_ERROR_USAGE,
              "input 'x' is float32, the buffer is float16");
  check_error(mt_session_bind_input(session, "x", MT_FLOAT32, nullptr, in_bytes), MT_ERROR_USAGE, "NULL");
  check_error(mt_session_bind_output(session, "y", MT_INT8, output.data(), out_bytes), MT_ERROR_USAGE, "float32");
  // The failed bindings bound nothing.
  check_error(mt_session_run(session), MT_ERROR_USAGE, "input 'x' is not bound");
  REQUIRE(mt_session_bind_input(session, "x", MT_FLOAT32, input.data(), in_bytes) == MT_OK);
  check_error(mt_session_run(session), MT_ERROR_USAGE, "output 'y' is not bound");
  REQUIRE(mt_session_bind_output(session, "y", MT_FLOAT32, output.data(), out_bytes) == MT_OK);
  CHECK(mt_session_run(session) == MT_OK);
  check_error(mt_session_run(nullptr), MT_ERROR_USAGE, "NULL");
  mt_session_destroy(session);
  mt_model_close(model);
}

TEST_CASE("capi: the valid rows of an output whose row count depends on the data") {
  // boxes [1, 3, 4] -> non_max_suppression (at most 3 per class, IoU 0.5) -> selected [3, 3] and its count.
  mt::Graph graph;
  graph.add_tensor({.name = "boxes", .dtype = mt::DType::f32, .shape = {1, 3, 4}});
  graph.add_tensor({.name = "scores", .dtype = mt::DType::f32, .shape = {1, 1, 3}});
  graph.add_tensor({.name = "selected", .dtype = mt::DType::i64, .shape = {3, 3}});
  graph.add_tensor({.name = "count", .dtype = mt::DType::i64, .shape = {}});
  const float half[] = {0.5f};
  mt::TensorInfo iou{.name = "iou", .dtype = mt::DType::f32, .shape = {1}};
  iou.data = mt::ConstData::copy_of(half, sizeof half);
  graph.add_tensor(iou);
  graph.inputs = {"boxes", "scores"};
  graph.nodes.push_back({.name = "nms",
                         .op = "non_max_suppression",
                         .inputs = {"boxes", "scores", "iou"},
                         .outputs = {"selected", "count"},
                         .attrs = {{"max_output_boxes_per_class", int64_t{3}}}});
  graph.outputs = {"selected", "count"};
  const auto bytes = mt::encode_model(graph);
  mt_model* model = nullptr;
  REQUIRE(mt_model_open_memory(bytes.data(), bytes.size(), &model) == MT_OK);
  for (const char* device : {"reference", "cpu"}) {
    INFO(device);
    mt_session* session = make_session(model, device);
    int64_t rows = -1;
    check_error(mt_session_output_rows(session, "selected", &rows), MT_ERROR_USAGE, "run the session first");
    check_error(mt_session_output_rows(session, "count", &rows), MT_ERROR_USAGE, "output 'count' is a scalar");
    check_error(mt_session_output_rows(session, "nope", &rows), MT_ERROR_USAGE, "no output 'nope'");
    // The first and third boxes overlap (IoU 0.9): the third, scoring lower, is suppressed.
    const float boxes[] = {0, 0, 1, 1, 5, 5, 6, 6, 0, 0, 1, 0.9f}, scores[] = {0.9f, 0.8f, 0.7f};
    int64_t selected[9], count = -1;
    REQUIRE(mt_session_bind_input(session, "boxes", MT_FLOAT32, boxes, sizeof boxes) == MT_OK);
    REQUIRE(mt_session_bind_input(session, "scores", MT_FLOAT32, scores, sizeof scores) == MT_OK);
    REQUIRE(mt_session_bind_output(session, "selected", MT_INT64, selected, sizeof selected) == MT_OK);
    REQUIRE(mt_session_bind_output(session, "count", MT_INT64, &count, sizeof count) == MT_OK);
    REQUIRE(mt_session_run(session) == MT_OK);
    REQUIRE(mt_session_output_rows(session, "selected", &rows) == MT_OK);
    CHECK(rows == 2);
    CHECK(count == 2);
    CHECK(std::vector<int64_t>(selected, selected + 6) == std::vector<int64_t>{0, 0, 0, 0, 0, 1});
    CHECK(std::vector<int64_t>(selected + 6, selected + 9) == std::vector<int64_t>{0, 0, 0});  // padding
    mt_session_destroy(session);
  }
  mt_model_close(model);

  // An output of static shape has all its rows.
  model = open_test_model();
  mt_session* session = make_session(model);
  int64_t rows = -1;
  REQUIRE(mt_session_output_rows(session, "y", &rows) == MT_OK);
  CHECK(rows == 1);
  mt_session_destroy(session);
  mt_model_close(model);
}

TEST_CASE("capi: cpu results equal the reference backend's") {
  mt_model* model = open_test_model();
  mt_session* cpu = make_session(model, "cpu", 2);
  mt_session* reference = make_session(model, "reference");
  for (uint32_t seed = 0; seed < 3; ++seed) {
    const auto input = random_floats(kInputFloats, 10 + seed);
    const auto got = run(cpu, input), expected = run(reference, input);
    for (size_t i = 0; i < kOutputFloats; ++i) CHECK(got[i] == doctest::Approx(expected[i]).epsilon(1e-4).scale(1.0));
  }
  mt_session_destroy(cpu);
  mt_session_destroy(reference);
  mt_model_close(model);
}

TEST_CASE("capi: vulkan sessions (gpu_index, precision) match the reference backend") {
  mt_model* model = open_test_model();
  mt_session* reference = make_session(model, "reference");
  const auto input = random_floats(kInputFloats, 21);
  const auto expected = run(reference, input);
  for (const char* precision : {"fp32", "fp16"}) {
    mt_options options;
    mt_options_init(&options);
    options.device = "vulkan";
    options.gpu_index = 0;
    options.precision = precision;
    mt_session* session = nullptr;
    if (mt_session_create(model, &options, &session) != MT_OK) {
      MESSAGE("SKIP: no vulkan session here: " << std::string(mt_last_error()));
      break;
    }
    // fp16 stores activations and weights in half precision (about 3 decimal digits).
    const double tolerance = std::string(precision) == "fp16" ? 2e-2 : 1e-4;
    const auto got = run(session, input);
    for (size_t i = 0; i < kOutputFloats; ++i) CHECK(got[i] == doctest::Approx(expected[i]).epsilon(tolerance).scale(1.0));
    mt_session_destroy(session);
  }
  mt_session_destroy(reference);
  mt_model_close(model);
}

TEST_CASE("capi: one model, one session per thread, results equal a single-threaded run") {
  mt_model* model = open_test_model();
  constexpr int kThreads = 4, kRunsPerThread = 6;
  std::vector<std::vector<float>> inputs, expected;
  {
    mt_session* session = make_session(model);
    for (int i = 0; i < kThreads * kRunsPerThread; ++i) {
      inputs.push_back(random_floats(kInputFloats, 100 + static_cast<uint32_t>(i)));
      expected.push_back(run(session, inputs.back()));
    }
    mt_session_destroy(session);
  }
  REQUIRE(expected[0] != expected[1]);  // the output depends on the input, so equality means something

  // Sessions are created concurrently too; each thread binds once and refills its input in place.
  std::vector<std::vector<std::vector<float>>> got(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      mt_options options;
      mt_options_init(&options);
      mt_session* session = nullptr;
      std::vector<float> input(kInputFloats), output(kOutputFloats);
      if (mt_session_create(model, &options, &session) != MT_OK ||
          mt_session_bind_input(session, "x", MT_FLOAT32, input.data(), input.size() * sizeof(float)) != MT_OK ||
          mt_session_bind_output(session, "y", MT_FLOAT32, output.data(), output.size() * sizeof(float)) != MT_OK) {
        errors[t] = mt_last_error();
        mt_session_destroy(session);
        return;
      }
      for (int r = 0; r < kRunsPerThread; ++r) {
        input = inputs[static_cast<size_t>(r * kThreads + t)];
        if (mt_session_run(session) != MT_OK) errors[t] = mt_last_error();
        got[t].push_back(output);
      }
      mt_session_destroy(session);
    });
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    INFO("thread ", t, ": ", errors[t]);
    CHECK(errors[t].empty());
    REQUIRE(got[t].size() == kRunsPerThread);
    for (int r = 0; r < kRunsPerThread; ++r) CHECK(got[t][r] == expected[static_cast<size_t>(r * kThreads + t)]);
  }
  mt_model_close(model);
}

TEST_CASE("capi: error messages are per thread") {
  mt_model* model = nullptr;
  REQUIRE(mt_model_open("/nonexistent/a.mt", &model) != MT_OK);
  std::string other;
  std::thread([&] {
    mt_model* m = nullptr;
    mt_model_open("/nonexistent/b.mt", &m);
    other = mt_last_error();
  }).join();
  CHECK(other.find("b.mt") != std::string::npos);
  CHECK(std::string(mt_last_error()).find("a.mt") != std::string::npos);
}

}  // namespace
