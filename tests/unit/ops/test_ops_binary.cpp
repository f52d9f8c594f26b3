// Shape inference of the binary family: numpy broadcasting, dtype agreement, add's fused clamp.
#include <doctest/doctest.h>

#include "lib/ops/registry.h"
#include "tests/unit/ops/infer_node_util.h"

using namespace mt;
using namespace mt::test;

TEST_CASE("binary: numpy broadcasting") {
  for (const char* op : {"add", "sub", "mul", "div", "pow", "max", "min"}) {
    INFO("op ", std::string(op));
    REQUIRE(find_op(op) != nullptr);
    CHECK(infer_shape(op, {tensor({2, 3}), tensor({2, 3})}) == Shape{2, 3});
    CHECK(infer_shape(op, {tensor({2, 3}), tensor({3})}) == Shape{2, 3});
    CHECK(infer_shape(op, {tensor({3}), tensor({2, 1})}) == Shape{2, 3});
    CHECK(infer_shape(op, {tensor({1, 4, 1, 5}), tensor({3, 1})}) == Shape{1, 4, 3, 5});
    CHECK(infer_shape(op, {tensor({}), tensor({2, 2})}) == Shape{2, 2});
    CHECK(infer_shape(op, {tensor({0, 3}), tensor({1, 3})}) == Shape{0, 3});
    MT_CHECK_INFER_FAILS("inputs 'in0' (2x3) and 'in1' (4) do not broadcast", op, {tensor({2, 3}), tensor({4})});
    MT_CHECK_INFER_FAILS("do not broadcast", op, {tensor({2, 3}), tensor({3, 3})});
    MT_CHECK_INFER_FAILS("input 'in1' is int64 but input 'in0' is float32; both must have the same dtype", op,
                         {tensor({2}), tensor({2}, DType::i64)});
    MT_CHECK_INFER_FAILS("expects 2 to 2 inputs, got 1", op, {tensor({2})});
  }
}

TEST_CASE("binary: output dtype is the inputs' dtype") {
  CHECK(infer("add", {tensor({2}, DType::i64), tensor({}, DType::i64)})[0].dtype == DType::i64);
  CHECK(infer("div", {tensor({2}, DType::i32), tensor({2}, DType::i32)})[0].dtype == DType::i32);
  CHECK(infer("mul", {tensor({2}, DType::f16), tensor({2}, DType::f16)})[0].dtype == DType::f16);
}

TEST_CASE("binary: add's act_min/act_max") {
  CHECK(infer_shape("add", {tensor({2}), tensor({2})}, {{"act_min", 0.0}, {"act_max", 6.0}}) == Shape{2});
  CHECK(infer_shape("add", {tensor({2}), tensor({2})}, {{"act_min", 1.0}, {"act_max", 1.0}}) == Shape{2});
  MT_CHECK_INFER_FAILS("attribute 'act_min' (6) is greater than 'act_max' (0)", "add", {tensor({2}), tensor({2})},
                       {{"act_min", 6.0}, {"act_max", 0.0}});
  MT_CHECK_INFER_FAILS("unknown attribute 'act_min'", "mul", {tensor({2}), tensor({2})}, {{"act_min", 0.0}});
  MT_CHECK_INFER_FAILS("attribute 'act_max' must be float, got int", "add", {tensor({2}), tensor({2})},
                       {{"act_max", int64_t{6}}});
}

TEST_CASE("binary: mod's fmod and bit_shift's direction and dtype") {
  CHECK(infer_shape("mod", {tensor({2, 3}, DType::i32), tensor({3}, DType::i32)}) == Shape{2, 3});
  CHECK(infer_shape("mod", {tensor({2}), tensor({2})}, {{"fmod", int64_t{1}}}) == Shape{2});
  MT_CHECK_INFER_FAILS("attribute 'fmod' must be 1 for float32 operands", "mod", {tensor({2}), tensor({2})});
  MT_CHECK_INFER_FAILS("attribute 'fmod' must be 0 or 1, got 2", "mod",
                       {tensor({2}, DType::i64), tensor({2}, DType::i64)}, {{"fmod", int64_t{2}}});
  const std::vector<std::optional<TensorInfo>> bytes = {tensor({2, 2}, DType::u8), tensor({2}, DType::u8)};
  CHECK(infer_shape("bit_shift", bytes, {{"direction", std::string("left")}}) == Shape{2, 2});
  CHECK(infer_shape("bit_shift", bytes, {{"direction", std::string("right")}}) == Shape{2, 2});
  MT_CHECK_INFER_FAILS("attribute 'direction' must be \"left\" or \"right\", got \"up\"", "bit_shift", bytes,
                       {{"direction", std::string("up")}});
  MT_CHECK_INFER_FAILS("bit_shift takes uint8", "bit_shift", {tensor({2}, DType::i32), tensor({2}, DType::i32)},
                       {{"direction", std::string("left")}});
}
