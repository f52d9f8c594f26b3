// Cases of the norm family: batch_norm with constant statistics on 4-D and 2-D inputs; layer_norm
// over the last axis or several, with and without scale and bias; lrn with odd and even windows.
#include "tests/ops/op_cases.h"

namespace mt::optest {

void add_norm_cases(CaseTable& t) {
  auto bn = [&](const std::string& name, Shape x, int64_t c, Attributes attrs = {}) {
    t.add("batch_norm", {.name = name,
                         .inputs = {in(x, -3, 3), weight({c}, 0.5, 2), weight({c}), weight({c}), weight({c}, 0.2, 2)},
                         .attrs = attrs});
  };
  bn("1x7x5x3", {1, 7, 5, 3}, 7);
  bn("batch 2, 16 channels", {2, 16, 4, 4}, 16);
  bn("2-D [N,C]", {3, 5}, 5);
  bn("epsilon 1e-3", {1, 3, 2, 2}, 3, {{"epsilon", 1e-3}});
  t.add("batch_norm", {.name = "statistics as inputs",
                       .inputs = {in({1, 3, 2, 2}), in({3}, 0.5, 2), in({3}), in({3}), in({3}, 0.2, 2)}});

  t.add("layer_norm", {.name = "last axis with scale and bias", .inputs = {in({2, 5, 16}, -3, 3), weight({16}), weight({16})}});
  t.add("layer_norm", {.name = "no scale, no bias", .inputs = {in({4, 33}, -3, 3)}});
  t.add("layer_norm", {.name = "scale only", .inputs = {in({4, 10}), weight({10})}});
  t.add("layer_norm", {.name = "bias only", .inputs = {in({4, 10}), absent(), weight({10})}});
  t.add("layer_norm", {.name = "axis 1 of 3 (two dims)", .inputs = {in({2, 3, 8}), weight({3, 8}), weight({3, 8})},
                       .attrs = {{"axis", int64_t{1}}}});
  t.add("layer_norm", {.name = "axis -2, epsilon 1e-6", .inputs = {in({2, 4, 6}), weight({4, 6}), weight({4, 6})},
                       .attrs = {{"axis", int64_t{-2}}, {"epsilon", 1e-6}}});
  t.add("layer_norm", {.name = "broadcast bias [1]", .inputs = {in({3, 4, 6}), weight({6}), weight({1})},
                       .attrs = {{"axis", int64_t{-1}}}});

  t.add("lrn", {.name = "size 3, defaults", .inputs = {in({2, 7, 3, 4}, -3, 3)}, .attrs = {{"size", int64_t{3}}}});
  t.add("lrn", {.name = "size 4 (asymmetric window), AlexNet's", .inputs = {in({1, 9, 5, 5}, -3, 3)},
                .attrs = {{"size", int64_t{4}}, {"alpha", 1e-2}, {"beta", 0.5}, {"bias", 2.0}}});
  t.add("lrn", {.name = "rank 3, window wider than the channels", .inputs = {in({2, 3, 6})}, .attrs = {{"size", int64_t{7}}, {"alpha", 0.5}}});
}

}  // namespace mt::optest
