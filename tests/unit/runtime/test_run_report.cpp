// mt-run's report of one inference (lib/runtime/run_report): the text summary and the JSON object
// from one result, with files, top-k with labels, and passing and failing checks.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "lib/core/error.h"
#include "lib/runtime/run_report.h"

namespace mt {
namespace {

HostArray floats(Shape shape, std::vector<float> values) {
  return {.dtype = DType::f32, .shape = std::move(shape), .data = ConstData::copy_of(values.data(), values.size() * 4)};
}

Graph two_output_graph() {
  Graph graph;
  graph.add_tensor({.name = "x", .dtype = DType::f32, .shape = {1, 3}});
  graph.add_tensor({.name = "scores", .dtype = DType::f32, .shape = {1, 3}});
  graph.add_tensor({.name = "aux", .dtype = DType::f32, .shape = {2}});
  graph.inputs = {"x"};
  graph.outputs = {"scores", "aux"};
  return graph;
}

RunResult result_of(std::vector<HostArray> outputs) {
  RunResult result;
  result.outputs = std::move(outputs);
  result.plan_seconds = 0.002;
  result.run_seconds = 0.0005;
  result.memory = {.arena_bytes = 64, .intermediate_bytes = 96, .weight_bytes = 12, .packed_weight_bytes = 0};
  return result;
}

}  // namespace

TEST_CASE("run report: summaries, files and top-k with labels, as text and JSON") {
  const Graph graph = two_output_graph();
  const RunResult result = result_of({floats({1, 3}, {0.5f, 2.0f, -1.0f}), floats({2}, {1.0f, 3.0f})});
  const RunReport report = run_report(graph, result,
                                      {.model_name = "m.mt", .device = "cpu", .threads = 2, .written = {"s.npy", ""},
                                       .topk = 2, .labels = {"cat", "dog", "eel"}, .labels_path = "labels.txt"});
  CHECK(report.passed);
  CHECK(report.text ==
        "scores float32 1x3: min -1 max 2 mean 0.5\n"
        "  top 2:\n"
        "    1.      1            2  dog\n"
        "    2.      0          0.5  cat\n"
        "aux float32 2: min 1 max 3 mean 2\n"
        "  top 2:\n"
        "    1.      1            3  dog\n"
        "    2.      0            1  cat\n");
  const nlohmann::json& json = report.json;
  CHECK(json["model"] == "m.mt");
  CHECK(json["device"] == "cpu");
  CHECK(json["threads"] == 2);
  CHECK(json["plan_ms"] == doctest::Approx(2.0));
  CHECK(json["memory"]["arena_bytes"] == 64);
  REQUIRE(json["outputs"].size() == 2);
  CHECK(json["outputs"][0]["file"] == "s.npy");
  CHECK_FALSE(json["outputs"][1].contains("file"));
  CHECK(json["outputs"][0]["topk"][0][0] == nlohmann::json{{"index", 1}, {"value", 2.0}, {"label", "dog"}});
  CHECK(json["outputs"][1]["mean"] == 2.0);
  CHECK_FALSE(json.contains("compare"));
  CHECK_FALSE(json.contains("passed"));
}

TEST_CASE("run report: checks against references pass, fail, or are invalid input") {
  const Graph graph = two_output_graph();
  const RunResult result = result_of({floats({1, 3}, {0.5f, 2.0f, -1.0f}), floats({2}, {1.0f, 3.0f})});
  RunReportRequest request{.model_name = "m.mt", .device = "reference", .written = {"", ""}};
  request.compares = {{.index = 0, .path = "good.npy"}, {.index = 1, .path = "bad.npy"}};
  request.references = {floats({1, 3}, {0.5f, 2.0f, -1.0f}), floats({2}, {1.0f, 3.5f})};
  const RunReport report = run_report(graph, result, request);
  CHECK_FALSE(report.passed);
  CHECK(report.json["passed"] == false);
  REQUIRE(report.json["compare"].size() == 2);
  CHECK(report.json["compare"][0]["passed"] == true);
  CHECK(report.json["compare"][1]["passed"] == false);
  CHECK(report.json["compare"][1]["max_abs_error"] == doctest::Approx(0.5));
  CHECK(report.text.find("compare scores with good.npy: max abs error 0, ") != std::string::npos);
  CHECK(report.text.find("compare aux with bad.npy: max abs error 0.5, ") != std::string::npos);
  CHECK(report.text.find("): FAILED: ") != std::string::npos);

  request.references[1] = floats({3}, {1.0f, 3.0f, 0.0f});
  try {
    run_report(graph, result, request);
    FAIL("a reference of another shape was accepted");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::invalid_input);
  }
}

}  // namespace mt
