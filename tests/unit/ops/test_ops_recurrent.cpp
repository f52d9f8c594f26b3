// Shape inference of the recurrent family: rnn, gru and lstm outputs Y [T, D, B, H] and the final
// states [D, B, H]; every operand's shape checked against X, hidden_size and the direction.
#include <doctest/doctest.h>

#include "lib/ops/registry.h"
#include "tests/unit/ops/infer_node_util.h"

using namespace mt;
using namespace mt::test;

namespace {

Attributes hidden(int64_t size, const char* direction = "forward") {
  return {{"hidden_size", size}, {"direction", std::string(direction)}};
}

}  // namespace

TEST_CASE("recurrent: output shapes") {
  // rnn: T 5, B 2, I 3, H 4.
  auto rnn = infer("rnn", {tensor({5, 2, 3}), tensor({1, 4, 3}), tensor({1, 4, 4})}, hidden(4), 2);
  REQUIRE(rnn.size() == 2);
  CHECK(rnn[0].shape == Shape{5, 1, 2, 4});
  CHECK(rnn[1].shape == Shape{1, 2, 4});
  // gru, bidirectional, every optional input.
  auto gru = infer(
      "gru",
      {tensor({5, 2, 3}), tensor({2, 12, 3}), tensor({2, 12, 4}), tensor({2, 24}), tensor({2}, DType::i32),
       tensor({2, 2, 4})},
      {{"hidden_size", int64_t{4}}, {"direction", std::string("bidirectional")}, {"linear_before_reset", int64_t{1}}},
      2);
  CHECK(gru[0].shape == Shape{5, 2, 2, 4});
  CHECK(gru[1].shape == Shape{2, 2, 4});
  // lstm with peepholes: three outputs.
  auto lstm = infer("lstm",
                    {tensor({6, 1, 2}), tensor({1, 12, 2}), tensor({1, 12, 3}), std::nullopt, std::nullopt,
                     tensor({1, 1, 3}), tensor({1, 1, 3}), tensor({1, 9})},
                    hidden(3, "reverse"), 3);
  REQUIRE(lstm.size() == 3);
  CHECK(lstm[0].shape == Shape{6, 1, 1, 3});
  CHECK(lstm[2].shape == Shape{1, 1, 3});
}

TEST_CASE("recurrent: failures") {
  MT_CHECK_INFER_FAILS("W 'in1' must have shape 1x12x3, got 1x8x3", "lstm",
                       {tensor({5, 2, 3}), tensor({1, 8, 3}), tensor({1, 12, 3})}, hidden(3), 3);
  MT_CHECK_INFER_FAILS("R 'in2' must have shape 2x4x4, got 1x4x4", "rnn",
                       {tensor({5, 2, 3}), tensor({2, 4, 3}), tensor({1, 4, 4})}, hidden(4, "bidirectional"), 2);
  MT_CHECK_INFER_FAILS("B 'in3' must have shape 1x18, got 1x9", "gru",
                       {tensor({5, 2, 3}), tensor({1, 9, 3}), tensor({1, 9, 3}), tensor({1, 9})}, hidden(3), 2);
  MT_CHECK_INFER_FAILS("sequence_lens 'in4' must be int32, got int64", "rnn",
                       {tensor({5, 2, 3}), tensor({1, 4, 3}), tensor({1, 4, 4}), std::nullopt, tensor({2}, DType::i64)},
                       hidden(4), 2);
  MT_CHECK_INFER_FAILS(
      "initial_h 'in5' must have shape 1x2x4, got 1x3x4", "rnn",
      {tensor({5, 2, 3}), tensor({1, 4, 3}), tensor({1, 4, 4}), std::nullopt, std::nullopt, tensor({1, 3, 4})},
      hidden(4), 2);
  MT_CHECK_INFER_FAILS("direction 'sideways' is not forward, reverse or bidirectional", "rnn",
                       {tensor({5, 2, 3}), tensor({1, 4, 3}), tensor({1, 4, 4})}, hidden(4, "sideways"), 2);
  MT_CHECK_INFER_FAILS("hidden_size must be in [1, 1099511627776], got 0", "rnn",
                       {tensor({5, 2, 3}), tensor({1, 0, 3}), tensor({1, 0, 0})}, hidden(0), 2);
  MT_CHECK_INFER_FAILS("input 'in0' must have rank 3, got shape 5x3", "rnn",
                       {tensor({5, 3}), tensor({1, 4, 3}), tensor({1, 4, 4})}, hidden(4), 2);
  MT_CHECK_INFER_FAILS("missing required attribute 'hidden_size'", "rnn",
                       {tensor({5, 2, 3}), tensor({1, 4, 3}), tensor({1, 4, 4})}, {}, 2);
  MT_CHECK_INFER_FAILS("produces 3 outputs, the node lists 2", "lstm",
                       {tensor({5, 2, 3}), tensor({1, 16, 3}), tensor({1, 16, 4})}, hidden(4), 2);
}
