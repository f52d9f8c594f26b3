// Convolution and pooling: auto_pad and output_shape become explicit pads, attributes carry
// over, and what mt lacks (4-D windows, pooling indices of 1-D and 3-D windows) is reported.
#include "tests/unit/import/onnx_test_util.h"

namespace mt::test {
namespace {

std::vector<int64_t> ints_attr(const Node& node, const std::string& name) {
  return std::get<std::vector<int64_t>>(node.attrs.at(name));
}

Graph conv_model(const std::string& auto_pad, std::vector<int64_t> input = {1, 1, 6, 6}) {
  OnnxBuilder b(13);
  b.input("x", {input[0], input[1], input[2], input[3]}).output("y");
  b.init("w", {2, 1, 3, 3}, std::vector<float>(18, 1.0f));
  b.init("bias", {2}, {0.5f, -0.5f});
  auto& conv = b.node("Conv", {"x", "w", "bias"}, {"y"}, "conv");
  attr_ints(conv, "strides", {2, 2});
  attr_ints(conv, "kernel_shape", {3, 3});
  if (!auto_pad.empty()) attr_string(conv, "auto_pad", auto_pad);
  return b.import();
}

TEST_CASE("Conv: attributes carry over; auto_pad SAME_UPPER/SAME_LOWER/VALID become pads") {
  Graph g = conv_model("");
  REQUIRE(ops_of(g) == std::vector<std::string>{"conv2d"});
  const Node& conv = g.nodes[0];
  CHECK(conv.name == "conv");
  CHECK(conv.inputs == std::vector<std::string>{"x", "w", "bias"});
  CHECK(ints_attr(conv, "strides") == std::vector<int64_t>{2, 2});
  CHECK(ints_attr(conv, "pads") == std::vector<int64_t>{0, 0, 0, 0});
  CHECK(std::get<int64_t>(conv.attrs.at("group")) == 1);
  CHECK(g.tensor("y").shape == Shape{1, 2, 2, 2});

  // 6 wide, stride 2, kernel 3: output 3 needs 1 pixel of padding.
  g = conv_model("SAME_UPPER");
  CHECK(ints_attr(g.nodes[0], "pads") == std::vector<int64_t>{0, 0, 1, 1});
  CHECK(g.tensor("y").shape == Shape{1, 2, 3, 3});
  g = conv_model("SAME_LOWER");
  CHECK(ints_attr(g.nodes[0], "pads") == std::vector<int64_t>{1, 1, 0, 0});
  g = conv_model("SAME_UPPER", {1, 1, 5, 7});
  CHECK(ints_attr(g.nodes[0], "pads") == std::vector<int64_t>{1, 1, 1, 1});
  CHECK(g.tensor("y").shape == Shape{1, 2, 3, 4});
  g = conv_model("VALID");
  CHECK(ints_attr(g.nodes[0], "pads") == std::vector<int64_t>{0, 0, 0, 0});
}

TEST_CASE("Conv numeric: a 3x3 box filter with padding") {
  OnnxBuilder b(11);
  b.input("x", {1, 1, 2, 2}).output("y");
  b.init("w", {1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  attr_ints(b.node("Conv", {"x", "w"}, {"y"}), "pads", {1, 1, 1, 1});
  Graph g = b.import();
  check_close(run_graph(g, {{1, 2, 3, 4}}), {10, 10, 10, 10});
}

TEST_CASE("Conv: a kernel_shape that disagrees with the weight is invalid; 4-D windows are unsupported") {
  OnnxBuilder b(13);
  b.input("x", {1, 1, 4, 4}).output("y");
  b.init("w", {1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  attr_ints(b.node("Conv", {"x", "w"}, {"y"}, "c"), "kernel_shape", {2, 2});
  Error e = import_error(b);
  CHECK(e.code() == ExitCode::invalid_input);
  CHECK(std::string(e.what()).find("node 'c' (Conv): kernel_shape does not match") != std::string::npos);

  OnnxBuilder four_d(13);
  four_d.input("x", {1, 1, 2, 2, 2, 2}).output("y");
  attr_ints(four_d.node("MaxPool", {"x"}, {"y"}, "p4"), "kernel_shape", {1, 1, 1, 1});
  e = import_error(four_d);
  CHECK(e.code() == ExitCode::unsupported);
  CHECK(std::string(e.what()).find("node 'p4' (MaxPool): input 'x' has shape 1x1x2x2x2x2; mt supports 1-D, 2-D and "
                                   "3-D windows only") != std::string::npos);
}

Graph conv_transpose_model(const std::function<void(onnx::NodeProto&)>& attrs) {
  OnnxBuilder b(13);
  b.input("x", {1, 1, 3, 3}).output("y");
  b.init("w", {1, 2, 3, 3}, std::vector<float>(18, 1.0f));
  auto& node = b.node("ConvTranspose", {"x", "w"}, {"y"});
  attr_ints(node, "strides", {2, 2});
  attrs(node);
  return b.import();
}

TEST_CASE("ConvTranspose: output_shape and auto_pad become pads (ONNX's rule for the odd pixel)") {
  // Unpadded output: (3-1)*2 + 3 = 7; asking for 6 leaves 1 pixel of padding.
  Graph g = conv_transpose_model([](auto& n) { attr_ints(n, "output_shape", {6, 6}); });
  REQUIRE(ops_of(g) == std::vector<std::string>{"conv_transpose2d"});
  CHECK(ints_attr(g.nodes[0], "pads") == std::vector<int64_t>{1, 1, 0, 0});
  CHECK(g.tensor("y").shape == Shape{1, 2, 6, 6});

  g = conv_transpose_model([](auto& n) {
    attr_ints(n, "output_shape", {1, 2, 6, 6});
    attr_string(n, "auto_pad", "SAME_UPPER");
  });
  CHECK(ints_attr(g.nodes[0], "pads") == std::vector<int64_t>{0, 0, 1, 1});

  g = conv_transpose_model([](auto& n) { attr_string(n, "auto_pad", "SAME_LOWER"); });  // output 3*2 = 6
  CHECK(ints_attr(g.nodes[0], "pads") == std::vector<int64_t>{1, 1, 0, 0});
  CHECK(g.tensor("y").shape == Shape{1, 2, 6, 6});

  g = conv_transpose_model([](auto& n) { attr_ints(n, "output_shape", {8, 7}); });  // beyond 7: output padding
  CHECK(ints_attr(g.nodes[0], "pads") == std::vector<int64_t>{0, 0, 0, 0});
  CHECK(ints_attr(g.nodes[0], "output_padding") == std::vector<int64_t>{1, 0});
  CHECK(g.tensor("y").shape == Shape{1, 2, 8, 7});
}

TEST_CASE("MaxPool and AveragePool: auto_pad, ceil_mode, count_include_pad; indices are unsupported") {
  OnnxBuilder b(12);
  b.input("x", {1, 1, 6, 6}).output("m").output("a");
  auto& max = b.node("MaxPool", {"x"}, {"m"});
  attr_ints(max, "kernel_shape", {3, 3});
  attr_ints(max, "strides", {2, 2});
  attr_string(max, "auto_pad", "SAME_UPPER");
  auto& avg = b.node("AveragePool", {"x"}, {"a"});
  attr_ints(avg, "kernel_shape", {2, 2});
  attr_ints(avg, "strides", {2, 2});
  attr_ints(avg, "pads", {1, 1, 1, 1});
  attr_int(avg, "ceil_mode", 1);
  attr_int(avg, "count_include_pad", 1);
  Graph g = b.import();
  const Node& m = producer(g, "m");
  CHECK(m.op == "max_pool2d");
  CHECK(ints_attr(m, "pads") == std::vector<int64_t>{0, 0, 1, 1});
  CHECK(ints_attr(m, "dilations") == std::vector<int64_t>{1, 1});
  CHECK(g.tensor("m").shape == Shape{1, 1, 3, 3});
  const Node& a = producer(g, "a");
  CHECK(a.op == "avg_pool2d");
  CHECK(std::get<int64_t>(a.attrs.at("ceil_mode")) == 1);
  CHECK(std::get<int64_t>(a.attrs.at("count_include_pad")) == 1);
  CHECK(a.attrs.count("dilations") == 0);

  // The indices output: max_pool2d_indices beside max_pool2d, for 2-D windows only.
  OnnxBuilder indices(12);
  indices.input("x", {1, 1, 4, 4}).output("m").output("i", onnx::TensorProto::INT64);
  attr_ints(indices.node("MaxPool", {"x"}, {"m", "i"}, "pool"), "kernel_shape", {2, 2});
  Graph with_indices = indices.import();
  CHECK(producer(with_indices, "m").op == "max_pool2d");
  CHECK(producer(with_indices, "m").name == "pool");
  CHECK(producer(with_indices, "i").op == "max_pool2d_indices");
  CHECK(with_indices.tensor("i").dtype == DType::i64);
  CHECK(with_indices.tensor("i").shape == Shape{1, 1, 3, 3});

  OnnxBuilder signal_indices(12);
  signal_indices.input("x", {1, 1, 8}).output("m").output("i", onnx::TensorProto::INT64);
  attr_ints(signal_indices.node("MaxPool", {"x"}, {"m", "i"}, "pool"), "kernel_shape", {2});
  Error e = import_error(signal_indices);
  CHECK(e.code() == ExitCode::unsupported);
  CHECK(std::string(e.what()).find("node 'pool' (MaxPool): output 1 ('i', the pooling indices) is used, and mt "
                                   "computes them for 2-D windows only") != std::string::npos);
}

TEST_CASE("MaxPool numeric and global pools") {
  OnnxBuilder b(11);
  b.input("x", {1, 1, 2, 4}).output("m").output("g").output("gm");
  auto& max = b.node("MaxPool", {"x"}, {"m"});
  attr_ints(max, "kernel_shape", {2, 2});
  attr_ints(max, "strides", {2, 2});
  b.node("GlobalAveragePool", {"x"}, {"g"});
  b.node("GlobalMaxPool", {"x"}, {"gm"});
  Graph g = b.import();
  const std::vector<float> x{1, 5, 2, 0, 3, 4, 8, 7};
  check_close(run_graph(g, {x}, 0), {5, 8});
  check_close(run_graph(g, {x}, 1), {30.0f / 8});
  check_close(run_graph(g, {x}, 2), {8});
  CHECK(producer(g, "g").op == "global_avg_pool");
  CHECK(producer(g, "gm").op == "global_max_pool");
}

}  // namespace
}  // namespace mt::test
