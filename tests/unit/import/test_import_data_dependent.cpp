// Ops whose output size depends on their data: NonMaxSuppression runs at its largest size with a
// count of valid rows that row-wise consumers share and that becomes a graph output; NonZero,
// Compress and Unique fold on values known at conversion and are refused on run-time data.
#include "lib/ops/valid_rows.h"
#include "tests/unit/import/onnx_test_util.h"

namespace mt::test {
namespace {

// boxes [1, 6, 4] and scores [1, 2, 6] inputs; NMS keeping at most 3 boxes per class.
OnnxBuilder nms_model() {
  OnnxBuilder b(11);
  b.input("boxes", {1, 6, 4}).input("scores", {1, 2, 6});
  b.init_i64("max", {1}, {3});
  b.init("iou", {1}, {0.5f});
  b.node("NonMaxSuppression", {"boxes", "scores", "max", "iou"}, {"selected"}, "nms");
  return b;
}

TEST_CASE("NonMaxSuppression: planned at its largest size, the count of valid rows a graph output") {
  OnnxBuilder b = nms_model();
  b.output("selected");
  Graph g = b.import();
  REQUIRE(g.nodes.size() == 1);
  CHECK(g.nodes[0].op == "non_max_suppression");
  CHECK(std::get<int64_t>(g.nodes[0].attrs.at("max_output_boxes_per_class")) == 3);
  CHECK(g.tensor("selected").shape == Shape{6, 3});  // 1 batch x 2 classes x min(3, 6)
  CHECK(g.outputs == std::vector<std::string>{"selected", "selected.valid_rows"});
  CHECK(g.tensor("selected.valid_rows").dtype == DType::i64);
  CHECK(g.tensor("selected.valid_rows").shape.empty());
}

TEST_CASE("NonMaxSuppression: row-wise consumers share the count, named after the output they reach") {
  // The torchvision tail: the box indices (column 2), then the boxes they select.
  OnnxBuilder b = nms_model();
  b.output("kept");
  b.init_i64("column", {1}, {2});
  b.init_i64("zero", {}, {0});
  attr_int(b.node("Gather", {"selected", "column"}, {"index_2d"}), "axis", 1);
  attr_ints(b.node("Squeeze", {"index_2d"}, {"index"}), "axes", {1});  // opset 11: axes an attribute
  b.node("Gather", {"boxes", "zero"}, {"boxes_2d"});
  b.node("Gather", {"boxes_2d", "index"}, {"kept"});
  Graph g = b.import();
  CHECK(g.tensor("kept").shape == Shape{6, 4});
  CHECK(g.outputs == std::vector<std::string>{"kept", "kept.valid_rows"});
  CHECK(valid_row_counts(g, ExitCode::invalid_input).at("kept") == "kept.valid_rows");
}

TEST_CASE("NonMaxSuppression: an op that is not row-wise on the selected rows is refused") {
  OnnxBuilder b = nms_model();
  b.output("total");
  attr_int(b.node("ReduceSum", {"selected"}, {"total"}, "sum_rows"), "keepdims", 0);
  const Error e = import_error(b);
  CHECK(e.code() == ExitCode::unsupported);
  CHECK(std::string(e.what()).find("node 'sum_rows' (reduce_sum) reads 'selected', whose number of valid rows is "
                                   "known only at run time (the count in 'selected.valid_rows'") != std::string::npos);
}

TEST_CASE("NonMaxSuppression: max_output_boxes_per_class must be known at conversion; constants do not fold") {
  OnnxBuilder runtime(11);
  runtime.input("boxes", {1, 2, 4}).input("scores", {1, 1, 2}).input("max", {1}, onnx::TensorProto::INT64);
  runtime.output("selected");
  runtime.node("NonMaxSuppression", {"boxes", "scores", "max"}, {"selected"}, "nms");
  CHECK(std::string(import_error(runtime).what()).find("--input-value max=FILE.npy") != std::string::npos);

  // A constant could not say which of its rows are valid: the node stays, computed by a run.
  OnnxBuilder constant(11);
  constant.input("x", {1}).output("selected").output("y");
  constant.init("boxes", {1, 3, 4}, {0, 0, 1, 1, 5, 5, 6, 6, 0, 0.1f, 1, 1.1f});
  constant.init("scores", {1, 1, 3}, {0.9f, 0.8f, 0.7f});
  constant.init_i64("max", {1}, {4});
  constant.node("NonMaxSuppression", {"boxes", "scores", "max"}, {"selected"});
  constant.node("Relu", {"x"}, {"y"});
  Graph g = constant.import();
  CHECK(!g.tensor("selected").is_constant());
  CHECK(g.tensor("selected").shape == Shape{3, 3});
  CHECK(g.outputs == std::vector<std::string>{"selected", "y", "selected.valid_rows"});
}

TEST_CASE("NonZero, Compress and Unique: folded on known values, refused on run-time data") {
  OnnxBuilder nonzero(13);
  nonzero.input("x", {2, 3}).output("y");
  nonzero.node("NonZero", {"x"}, {"y"}, "nz");
  Error e = import_error(nonzero);
  CHECK(e.code() == ExitCode::unsupported);
  CHECK(std::string(e.what()).find("node 'nz' (NonZero): input 'x' (X, whose non-zero elements decide the output's "
                                   "size) must be known at conversion") != std::string::npos);

  OnnxBuilder compress(11);
  compress.input("x", {3, 2}).output("y");
  compress.init_i64("keep", {3}, {0, 1, 1});
  attr_int(compress.node("Compress", {"x", "keep"}, {"y"}), "axis", 0);
  Graph g = compress.import();
  REQUIRE(g.nodes.size() == 1);
  CHECK(g.nodes[0].op == "gather");
  CHECK(g.tensor("y").shape == Shape{2, 2});

  OnnxBuilder unique(11);
  unique.input("z", {1}).output("u").output("inverse").output("w");
  unique.init("x", {6}, {2, 1, 1, 3, 4, 3});
  unique.node("Unique", {"x"}, {"u", "", "inverse"});
  unique.node("Relu", {"z"}, {"w"});
  g = unique.import();
  CHECK(g.tensor("u").shape == Shape{4});
  CHECK(std::vector<float>(g.tensor("u").data.as<float>().begin(), g.tensor("u").data.as<float>().end()) ==
        std::vector<float>{1, 2, 3, 4});
  CHECK(std::vector<int64_t>(g.tensor("inverse").data.as<int64_t>().begin(),
                             g.tensor("inverse").data.as<int64_t>().end()) == std::vector<int64_t>{1, 0, 0, 2, 3, 2});
}

}  // namespace
}  // namespace mt::test
