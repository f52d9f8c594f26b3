// Cases of the recurrent family (rnn, gru, lstm): forward, reverse and bidirectional, odd hidden and
// input sizes, batches above 1, initial states, sequence lengths shorter than the input (and zero),
// biases absent, weights computed at run time (packed per run instead of at planning), and gru's
// two linear_before_reset forms and lstm's peepholes.
#include "tests/ops/op_cases.h"

namespace mt::optest {
namespace {

// Sequence lengths of `batch` sequences, whole numbers drawn from [low, T].
CaseInput lengths(int64_t batch, int64_t low, int64_t seq_len) {
  return typed(DType::i32, {batch}, static_cast<double>(low), static_cast<double>(seq_len + 1));
}

// The cases every recurrent op gets; `gates` is 1 (rnn), 3 (gru) or 4 (lstm). Weights in
// [-0.5, 0.5) keep the gates out of saturation, where every kernel would agree trivially.
void add_common(CaseTable& t, const std::string& op, int64_t gates, const Attributes& extra,
                const std::string& suffix) {
  auto attrs = [&](int64_t hidden, const char* direction) {
    Attributes a = extra;
    a["hidden_size"] = hidden;
    a["direction"] = std::string(direction);
    return a;
  };
  auto w = [&](int64_t d, int64_t h, int64_t i) { return weight({d, gates * h, i}, -0.5, 0.5); };
  auto bias = [&](int64_t d, int64_t h) { return weight({d, 2 * gates * h}, -0.5, 0.5); };
  const int outputs = op == "lstm" ? 3 : 2;
  auto add = [&](OpCase c) {
    c.name += suffix;
    t.add(op, std::move(c));
  };

  add({.name = "forward, T 5, B 1, I 4, H 8, no bias",
       .inputs = {in({5, 1, 4}), w(1, 8, 4), w(1, 8, 8)},
       .attrs = attrs(8, "forward"),
       .num_outputs = outputs});
  add({.name = "forward, odd sizes T 7, B 3, I 5, H 13, bias",
       .inputs = {in({7, 3, 5}), w(1, 13, 5), w(1, 13, 13), bias(1, 13)},
       .attrs = attrs(13, "forward"),
       .num_outputs = outputs});
  add({.name = "reverse, T 6, B 2, I 3, H 5, bias",
       .inputs = {in({6, 2, 3}), w(1, 5, 3), w(1, 5, 5), bias(1, 5)},
       .attrs = attrs(5, "reverse"),
       .num_outputs = outputs});
  add({.name = "bidirectional, T 4, B 2, I 6, H 7, bias",
       .inputs = {in({4, 2, 6}), w(2, 7, 6), w(2, 7, 7), bias(2, 7)},
       .attrs = attrs(7, "bidirectional"),
       .num_outputs = outputs});
  std::vector<CaseInput> with_lengths{in({6, 4, 3}), w(2, 9, 3),       w(2, 9, 9),
                                      bias(2, 9),    lengths(4, 0, 6), in({2, 4, 9})};
  if (op == "lstm") with_lengths.push_back(in({2, 4, 9}));
  add({.name = "bidirectional, sequence_lens in [0, T], initial states",
       .inputs = with_lengths,
       .attrs = attrs(9, "bidirectional"),
       .num_outputs = outputs});
  add({.name = "reverse, sequence_lens in [1, T], no bias",
       .inputs = {in({5, 3, 4}), w(1, 6, 4), w(1, 6, 6), absent(), lengths(3, 1, 5)},
       .attrs = attrs(6, "reverse"),
       .num_outputs = outputs});
  add({.name = "weights computed at run time, initial_h",
       .inputs = {in({3, 2, 5}), in({1, gates * 4, 5}, -0.5, 0.5), in({1, gates * 4, 4}, -0.5, 0.5),
                  in({1, 2 * gates * 4}, -0.5, 0.5), absent(), in({1, 2, 4})},
       .attrs = attrs(4, "forward"),
       .num_outputs = outputs});
  add({.name = "large enough to split the step GEMM across threads: T 3, B 8, I 16, H 64",
       .inputs = {in({3, 8, 16}), w(1, 64, 16), w(1, 64, 64), bias(1, 64)},
       .attrs = attrs(64, "forward"),
       .num_outputs = outputs});
}

}  // namespace

void add_recurrent_cases(CaseTable& t) {
  add_common(t, "rnn", 1, {}, "");
  add_common(t, "gru", 3, {{"linear_before_reset", int64_t{0}}}, " (linear_before_reset 0)");
  add_common(t, "gru", 3, {{"linear_before_reset", int64_t{1}}}, " (linear_before_reset 1)");
  add_common(t, "lstm", 4, {}, "");
  t.add("lstm", {.name = "peepholes, initial states, sequence_lens",
                 .inputs = {in({4, 3, 5}), weight({1, 24, 5}, -0.5, 0.5), weight({1, 24, 6}, -0.5, 0.5),
                            weight({1, 48}, -0.5, 0.5), lengths(3, 1, 4), in({1, 3, 6}), in({1, 3, 6}),
                            weight({1, 18}, -0.5, 0.5)},
                 .attrs = {{"hidden_size", int64_t{6}}},
                 .num_outputs = 3});
  t.add("lstm", {.name = "bidirectional peepholes computed at run time",
                 .inputs = {in({3, 2, 4}), weight({2, 20, 4}, -0.5, 0.5), weight({2, 20, 5}, -0.5, 0.5), absent(),
                            absent(), absent(), absent(), in({2, 15}, -0.5, 0.5)},
                 .attrs = {{"hidden_size", int64_t{5}}, {"direction", std::string("bidirectional")}},
                 .num_outputs = 3});
}

}  // namespace mt::optest
