// Cases of the shape family: reshape, flatten at every axis, transposes of ranks 2 to 5 (NCHW <->
// NHWC included), concat along each axis with 1 to 4 inputs and constant operands, split, slices
// with negative indices, clamping and negative steps, squeeze/unsqueeze, expand, gather with
// scalar, 1-D, 2-D and negative indices, identity; a few with integer dtypes.
#include <cstdint>
#include <limits>

#include "tests/ops/op_cases.h"

namespace mt::optest {

void add_shape_cases(CaseTable& t) {
  t.add("reshape", {.name = "4-D to 2-D", .inputs = {in({2, 3, 4, 5})}, .attrs = {{"shape", Ints{6, 20}}}});
  t.add("reshape", {.name = "2-D to 5-D", .inputs = {in({6, 10})}, .attrs = {{"shape", Ints{1, 2, 3, 5, 2}}}});
  t.add("reshape", {.name = "to scalar", .inputs = {in({1, 1})}, .attrs = {{"shape", Ints{}}}});
  t.add("reshape", {.name = "int64", .inputs = {typed(DType::i64, {2, 6}, -50, 50)}, .attrs = {{"shape", Ints{3, 4}}}});

  for (int64_t axis : {0, 1, 2, 3, 4})
    t.add("flatten", {.name = "axis " + std::to_string(axis), .inputs = {in({2, 3, 4, 5})}, .attrs = {{"axis", axis}}});
  t.add("flatten", {.name = "axis -1", .inputs = {in({2, 3, 4})}, .attrs = {{"axis", int64_t{-1}}}});

  t.add("transpose", {.name = "2-D", .inputs = {in({7, 13})}, .attrs = {{"perm", Ints{1, 0}}}});
  t.add("transpose", {.name = "default reverses", .inputs = {in({2, 3, 4})}});
  t.add("transpose", {.name = "NCHW to NHWC", .inputs = {in({2, 5, 4, 3})}, .attrs = {{"perm", Ints{0, 2, 3, 1}}}});
  t.add("transpose", {.name = "NHWC to NCHW", .inputs = {in({1, 4, 3, 7})}, .attrs = {{"perm", Ints{0, 3, 1, 2}}}});
  t.add("transpose", {.name = "swap middle axes", .inputs = {in({2, 3, 4, 5})}, .attrs = {{"perm", Ints{0, 2, 1, 3}}}});
  t.add("transpose", {.name = "rank 5 (channel shuffle)", .inputs = {in({1, 2, 4, 10, 12})}, .attrs = {{"perm", Ints{0, 3, 1, 4, 2}}}});
  t.add("transpose", {.name = "identity perm", .inputs = {in({3, 4})}, .attrs = {{"perm", Ints{0, 1}}}});
  t.add("transpose", {.name = "int32", .inputs = {typed(DType::i32, {2, 3, 4}, -9, 9)}, .attrs = {{"perm", Ints{2, 0, 1}}}});

  t.add("concat", {.name = "channels, 2 inputs", .inputs = {in({1, 3, 4, 4}), in({1, 5, 4, 4})}, .attrs = {{"axis", int64_t{1}}}});
  t.add("concat", {.name = "channels, 4 inputs odd", .inputs = {in({2, 1, 3, 3}), in({2, 2, 3, 3}), in({2, 7, 3, 3}), in({2, 3, 3, 3})},
                   .attrs = {{"axis", int64_t{1}}}});
  t.add("concat", {.name = "axis 0", .inputs = {in({2, 3}), in({4, 3})}, .attrs = {{"axis", int64_t{0}}}});
  t.add("concat", {.name = "last axis -1", .inputs = {in({2, 3, 2}), in({2, 3, 5})}, .attrs = {{"axis", int64_t{-1}}}});
  t.add("concat", {.name = "height", .inputs = {in({1, 2, 3, 4}), in({1, 2, 1, 4})}, .attrs = {{"axis", int64_t{2}}}});
  t.add("concat", {.name = "with a constant", .inputs = {in({1, 2, 2, 2}), weight({1, 3, 2, 2})}, .attrs = {{"axis", int64_t{1}}}});
  t.add("concat", {.name = "single input", .inputs = {in({3, 4})}, .attrs = {{"axis", int64_t{0}}}});
  t.add("concat", {.name = "int64", .inputs = {typed(DType::i64, {2}, 0, 9), typed(DType::i64, {3}, 0, 9)}, .attrs = {{"axis", int64_t{0}}}});

  t.add("split", {.name = "channels 2,5,1", .inputs = {in({1, 8, 3, 3})}, .attrs = {{"axis", int64_t{1}}, {"split", Ints{2, 5, 1}}}, .num_outputs = 3});
  t.add("split", {.name = "halves on the last axis", .inputs = {in({2, 3, 10})}, .attrs = {{"axis", int64_t{-1}}, {"split", Ints{5, 5}}}, .num_outputs = 2});
  t.add("split", {.name = "axis 0", .inputs = {in({6, 4})}, .attrs = {{"split", Ints{1, 2, 3}}}, .num_outputs = 3});
  t.add("split", {.name = "one part", .inputs = {in({4, 4})}, .attrs = {{"axis", int64_t{1}}, {"split", Ints{4}}}, .num_outputs = 1});

  const int64_t kMax = std::numeric_limits<int64_t>::max(), kMin = std::numeric_limits<int64_t>::min();
  const Shape s = {2, 6, 7, 5};
  t.add("slice", {.name = "spatial crop", .inputs = {in(s)}, .attrs = {{"starts", Ints{1, 2}}, {"ends", Ints{5, 4}}, {"axes", Ints{2, 3}}}});
  t.add("slice", {.name = "channels with step 2", .inputs = {in(s)}, .attrs = {{"starts", Ints{1}}, {"ends", Ints{6}}, {"axes", Ints{1}}, {"steps", Ints{2}}}});
  t.add("slice", {.name = "negative indices", .inputs = {in(s)}, .attrs = {{"starts", Ints{-4}}, {"ends", Ints{-1}}, {"axes", Ints{-2}}}});
  t.add("slice", {.name = "reverse with step -1", .inputs = {in(s)}, .attrs = {{"starts", Ints{-1}}, {"ends", Ints{kMin}}, {"axes", Ints{3}}, {"steps", Ints{-1}}}});
  t.add("slice", {.name = "step -2 from the end", .inputs = {in(s)}, .attrs = {{"starts", Ints{6}}, {"ends", Ints{0}}, {"axes", Ints{2}}, {"steps", Ints{-2}}}});
  t.add("slice", {.name = "ends clamped (INT64_MAX)", .inputs = {in(s)}, .attrs = {{"starts", Ints{3}}, {"ends", Ints{kMax}}, {"axes", Ints{1}}}});
  t.add("slice", {.name = "all axes, default axes", .inputs = {in({4, 5})}, .attrs = {{"starts", Ints{1, 0}}, {"ends", Ints{3, 5}}}});
  t.add("slice", {.name = "step 3 on two axes", .inputs = {in(s)}, .attrs = {{"starts", Ints{0, 1}}, {"ends", Ints{7, 5}}, {"axes", Ints{2, 3}}, {"steps", Ints{3, 2}}}});
  t.add("slice", {.name = "batch axis", .inputs = {in(s)}, .attrs = {{"starts", Ints{1}}, {"ends", Ints{2}}, {"axes", Ints{0}}}});
  t.add("slice", {.name = "int64", .inputs = {typed(DType::i64, {8}, -9, 9)}, .attrs = {{"starts", Ints{2}}, {"ends", Ints{-1}}}});

  t.add("squeeze", {.name = "all size-1 dims", .inputs = {in({1, 3, 1, 4})}});
  t.add("squeeze", {.name = "one axis", .inputs = {in({1, 3, 1, 4})}, .attrs = {{"axes", Ints{2}}}});
  t.add("squeeze", {.name = "negative axes", .inputs = {in({2, 1, 5, 1})}, .attrs = {{"axes", Ints{-1, 1}}}});
  t.add("unsqueeze", {.name = "front", .inputs = {in({3, 4})}, .attrs = {{"axes", Ints{0}}}});
  t.add("unsqueeze", {.name = "several, negative", .inputs = {in({3, 4})}, .attrs = {{"axes", Ints{1, -1}}}});
  t.add("unsqueeze", {.name = "scalar to 1-D", .inputs = {in({})}, .attrs = {{"axes", Ints{0}}}});

  t.add("expand", {.name = "channel to NCHW", .inputs = {in({1, 3, 1, 1})}, .attrs = {{"shape", Ints{2, 3, 4, 5}}}});
  t.add("expand", {.name = "adds leading dims", .inputs = {in({4, 1})}, .attrs = {{"shape", Ints{2, 3, 4, 6}}}});
  t.add("expand", {.name = "shape smaller than input (bidirectional)", .inputs = {in({2, 1, 6})}, .attrs = {{"shape", Ints{3, 1}}}});
  t.add("expand", {.name = "middle axis", .inputs = {in({1, 8, 1, 12})}, .attrs = {{"shape", Ints{1, 8, 10, 12}}}});

  t.add("gather", {.name = "rows by 1-D indices", .inputs = {in({5, 4}), typed(DType::i64, {3}, 0, 5, true)}});
  t.add("gather", {.name = "scalar index, axis 1", .inputs = {in({2, 6, 3}), typed(DType::i64, {}, 0, 6, true)}, .attrs = {{"axis", int64_t{1}}}});
  t.add("gather", {.name = "2-D negative indices, last axis", .inputs = {in({3, 7}), typed(DType::i64, {2, 4}, -7, 7, true)},
                   .attrs = {{"axis", int64_t{-1}}}});
  t.add("gather", {.name = "int32 indices as input", .inputs = {in({6, 2, 2}), typed(DType::i32, {4}, -6, 6)}});
  t.add("gather", {.name = "int64 data", .inputs = {typed(DType::i64, {4}, -99, 99), typed(DType::i64, {2}, 0, 4, true)}});

  t.add("identity", {.name = "4-D", .inputs = {in({1, 3, 4, 5})}});
  t.add("identity", {.name = "int64", .inputs = {typed(DType::i64, {3}, -5, 5)}});
}

}  // namespace mt::optest
