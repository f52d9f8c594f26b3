// Loop and Scan, unrolled at import (translate_loop.cpp): Scan with reversed inputs and outputs on
// other axes, Loop with a constant trip count reading its iteration number, a body condition
// that stops it early; and the refusals: a condition computed at run time, too many iterations,
// opset 8's Scan.
#include "tests/unit/import/onnx_test_util.h"

namespace mt::test {
namespace {

void set_body(onnx::NodeProto& node, OnnxBuilder body) {
  new_attr(node, "body", onnx::AttributeProto::GRAPH)->mutable_g()->CopyFrom(body.graph());
}

// body(s [2], x_t [2]) -> (s + x_t, 2 (s + x_t)).
OnnxBuilder accumulate_body() {
  OnnxBuilder body(11);
  body.input("s_in", {2}).input("x_t", {2}).output("s_out").output("doubled");
  body.init("two", {}, {2.0f});
  body.node("Add", {"s_in", "x_t"}, {"s_out"});
  body.node("Mul", {"s_out", "two"}, {"doubled"});
  return body;
}

TEST_CASE("Scan: unrolled over its scan axis, reversed input, output stacked on another axis") {
  OnnxBuilder b(11);
  b.input("s", {2}).input("x", {3, 2}).output("final").output("trace");
  auto& node = b.node("Scan", {"s", "x"}, {"final", "trace"}, "scan");
  attr_int(node, "num_scan_inputs", 1);
  attr_ints(node, "scan_input_directions", {1});
  attr_ints(node, "scan_output_axes", {1});
  set_body(node, accumulate_body());
  const Graph g = b.import();
  CHECK(g.tensor("trace").shape == Shape{2, 3});
  const std::vector<std::vector<float>> inputs{{10, 20}, {1, 2, 3, 4, 5, 6}};
  // Rows taken last first: s = 10,20 -> 15,26 -> 18,30 -> 19,32.
  check_close(run_graph(g, inputs, 0), {19, 32}, 0.0);
  check_close(run_graph(g, inputs, 1), {30, 36, 38, 52, 60, 64}, 0.0);
}

// body(i, cond, v [1]) -> (i < 3, v + i, v + i): stops after iteration 3 whatever the trip count.
OnnxBuilder counting_body() {
  OnnxBuilder body(11);
  body.input("i", {}, onnx::TensorProto::INT64).input("cond_in", {}, onnx::TensorProto::BOOL).input("v_in", {1});
  body.output("cond_out", onnx::TensorProto::BOOL).output("v_out").output("seen");
  init_typed<int64_t>(body, "three", onnx::TensorProto::INT64, {}, {3});
  body.node("Less", {"i", "three"}, {"cond_out"});
  attr_int(body.node("Cast", {"i"}, {"i_float"}), "to", onnx::TensorProto::FLOAT);
  body.node("Add", {"v_in", "i_float"}, {"v_out"});
  body.node("Identity", {"v_out"}, {"seen"});
  return body;
}

TEST_CASE("Loop: a constant trip count unrolls it; a constant body condition stops it early") {
  for (int64_t trips : {2, 10}) {
    INFO("trip count ", trips);
    OnnxBuilder b(11);
    b.input("v", {1}).output("final").output("seen");
    init_typed<int64_t>(b, "m", onnx::TensorProto::INT64, {}, {trips});
    init_typed<uint8_t>(b, "cond", onnx::TensorProto::BOOL, {}, {1});
    set_body(b.node("Loop", {"m", "cond", "v"}, {"final", "seen"}, "loop"), counting_body());
    const Graph g = b.import();
    // Iterations 0, 1 (trip count 2), or 0..3 (the condition after iteration 3 is false).
    const std::vector<float> seen = trips == 2 ? std::vector<float>{5, 6} : std::vector<float>{5, 6, 8, 11};
    CHECK(g.tensor("seen").shape == Shape{static_cast<int64_t>(seen.size()), 1});
    check_close(run_graph(g, {{5}}, 1), seen, 0.0);
    check_close(run_graph(g, {{5}}, 0), {seen.back()}, 0.0);
  }
}

TEST_CASE("Loop and Scan: what cannot be unrolled is refused, naming the node") {
  OnnxBuilder runtime(11);
  runtime.input("v", {1}).input("cond", {}, onnx::TensorProto::BOOL).output("final").output("seen");
  init_typed<int64_t>(runtime, "m", onnx::TensorProto::INT64, {}, {4});
  set_body(runtime.node("Loop", {"m", "cond", "v"}, {"final", "seen"}, "loop"), counting_body());
  Error e = import_error(runtime);
  CHECK(e.code() == ExitCode::unsupported);
  CHECK(std::string(e.what()).find("node 'loop' (Loop): its condition 'cond' is computed at run time") !=
        std::string::npos);

  // A condition that stays true and a trip count of 2^40: unrolling stops at the limit.
  OnnxBuilder forever_body(11);
  forever_body.input("i", {}, onnx::TensorProto::INT64)
      .input("cond_in", {}, onnx::TensorProto::BOOL)
      .input("v_in", {1});
  forever_body.output("cond_out", onnx::TensorProto::BOOL).output("v_out");
  forever_body.node("Identity", {"cond_in"}, {"cond_out"});
  forever_body.node("Identity", {"v_in"}, {"v_out"});
  OnnxBuilder huge(11);
  huge.input("v", {1}).output("final");
  init_typed<int64_t>(huge, "m", onnx::TensorProto::INT64, {}, {int64_t{1} << 40});
  set_body(huge.node("Loop", {"m", "", "v"}, {"final"}, "loop"), forever_body);
  e = import_error(huge);
  CHECK(e.code() == ExitCode::unsupported);
  CHECK(std::string(e.what()).find("exceed its limit") != std::string::npos);

  OnnxBuilder old_scan(8);
  old_scan.input("s", {1, 2}).input("x", {1, 3, 2}).output("final").output("trace");
  auto& node = old_scan.node("Scan", {"", "s", "x"}, {"final", "trace"}, "scan");
  attr_int(node, "num_scan_inputs", 1);
  set_body(node, accumulate_body());
  e = import_error(old_scan);
  CHECK(e.code() == ExitCode::unsupported);
  CHECK(std::string(e.what()).find("node 'scan': Scan of opset 8") != std::string::npos);
}

}  // namespace
}  // namespace mt::test
