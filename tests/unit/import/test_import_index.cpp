// Indexing and layout rules: DepthToSpace (DCR and CRD, ONNX's examples) and SpaceToDepth as
// reshape-transpose-reshape, MeanVarianceNormalization as its function body, EyeLike folded to a
// constant, Trilu's k kept as a run-time operand, and the operands that must be constant.
#include <cmath>
#include <cstring>
#include <numeric>

#include "tests/unit/import/onnx_test_util.h"

namespace mt::test {
namespace {

std::vector<float> iota(size_t count) {
  std::vector<float> values(count);
  std::iota(values.begin(), values.end(), 0.0f);
  return values;
}

std::vector<float> depth_to_space(const std::string& mode) {
  OnnxBuilder b(13);
  b.input("x", {1, 8, 2, 3}).output("y");
  auto& node = b.node("DepthToSpace", {"x"}, {"y"});
  attr_int(node, "blocksize", 2);
  attr_string(node, "mode", mode);
  Graph g = b.import();
  CHECK(g.tensor("y").shape == Shape{1, 2, 4, 6});
  CHECK(ops_of(g) == std::vector<std::string>{"reshape", "transpose", "reshape"});
  return run_graph(g, {iota(48)});
}

TEST_CASE("DepthToSpace: DCR and CRD as ONNX's examples") {
  check_close(depth_to_space("DCR"),
              {0, 12, 1, 13, 2, 14, 24, 36, 25, 37, 26, 38, 3, 15, 4,  16, 5,  17, 27, 39, 28, 40, 29, 41,
               6, 18, 7, 19, 8, 20, 30, 42, 31, 43, 32, 44, 9, 21, 10, 22, 11, 23, 33, 45, 34, 46, 35, 47});
  check_close(depth_to_space("CRD"),
              {0,  6,  1,  7,  2,  8,  12, 18, 13, 19, 14, 20, 3,  9,  4,  10, 5,  11, 15, 21, 16, 22, 17, 23,
               24, 30, 25, 31, 26, 32, 36, 42, 37, 43, 38, 44, 27, 33, 28, 34, 29, 35, 39, 45, 40, 46, 41, 47});
  OnnxBuilder bad(13);
  bad.input("x", {1, 6, 2, 2}).output("y");
  attr_int(bad.node("DepthToSpace", {"x"}, {"y"}, "d"), "blocksize", 2);
  CHECK(std::string(import_error(bad).what()).find("6 channels are not a multiple of blocksize^2 = 4") !=
        std::string::npos);
}

TEST_CASE("SpaceToDepth undoes DepthToSpace in DCR mode") {
  OnnxBuilder b(13);
  b.input("x", {1, 8, 2, 3}).output("y");
  attr_int(b.node("DepthToSpace", {"x"}, {"s"}), "blocksize", 2);
  attr_int(b.node("SpaceToDepth", {"s"}, {"y"}), "blocksize", 2);
  Graph g = b.import();
  CHECK(g.tensor("y").shape == Shape{1, 8, 2, 3});
  check_close(run_graph(g, {iota(48)}), iota(48));
}

TEST_CASE("MeanVarianceNormalization: zero mean, unit variance over axes 0, 2, 3") {
  OnnxBuilder b(13);
  b.input("x", {2, 2, 1, 2}).output("y");
  b.node("MeanVarianceNormalization", {"x"}, {"y"});
  Graph g = b.import();
  // Channel 0 holds 0, 1, 4, 5 (mean 2.5), channel 1 holds 2, 3, 6, 7 (mean 4.5); both have
  // variance 4.25.
  const double deviation = std::sqrt(4.25);
  const float a = static_cast<float>(-2.5 / deviation), c = static_cast<float>(-1.5 / deviation);
  check_close(run_graph(g, {iota(8)}), {a, c, a, c, -c, -a, -c, -a}, 1e-5);
}

TEST_CASE("EyeLike folds to a constant of the input's shape") {
  OnnxBuilder b(13);
  b.input("x", {3, 4}, onnx::TensorProto::INT32).output("y");
  auto& node = b.node("EyeLike", {"x"}, {"y"});
  attr_int(node, "k", 1);
  attr_int(node, "dtype", onnx::TensorProto::FLOAT);
  Graph g = b.import();
  const TensorInfo& y = g.tensor("y");
  REQUIRE(y.is_constant());
  CHECK(y.dtype == DType::f32);
  std::vector<float> values(12);
  std::memcpy(values.data(), y.data.data(), y.byte_size());
  CHECK(values == std::vector<float>{0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1});

  OnnxBuilder dbl(13);
  dbl.input("x", {2, 2}).output("y");
  attr_int(dbl.node("EyeLike", {"x"}, {"y"}, "e"), "dtype", onnx::TensorProto::DOUBLE);
  const Error e = import_error(dbl);
  CHECK(e.code() == ExitCode::unsupported);
  CHECK(std::string(e.what()).find("output element type DOUBLE") != std::string::npos);
}

TEST_CASE("Trilu keeps k a run-time operand; Tile needs constant repeats") {
  OnnxBuilder b(14);
  b.input("x", {3, 3}).input("k", {}, onnx::TensorProto::INT64).output("y");
  attr_int(b.node("Trilu", {"x", "k"}, {"y"}), "upper", 0);
  Graph g = b.import();
  CHECK(ops_of(g) == std::vector<std::string>{"trilu"});
  CHECK(g.nodes[0].inputs.size() == 2);

  OnnxBuilder tile(13);
  tile.input("x", {2, 3}).input("r", {2}, onnx::TensorProto::INT64).output("y");
  tile.node("Tile", {"x", "r"}, {"y"}, "t");
  const Error e = import_error(tile);
  CHECK(e.code() == ExitCode::unsupported);
  CHECK(std::string(e.what()).find("input 'r' (repeats) must be known at conversion") != std::string::npos);
}

}  // namespace
}  // namespace mt::test
