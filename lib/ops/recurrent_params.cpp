#include "lib/ops/recurrent_params.h"

#include "lib/core/error.h"
#include "lib/ops/registry.h"

namespace mt {

RecurrentKind recurrent_kind(std::string_view op) {
  if (op == "rnn") return RecurrentKind::rnn;
  if (op == "gru") return RecurrentKind::gru;
  if (op == "lstm") return RecurrentKind::lstm;
  throw Error(ExitCode::failure, fmt::format("internal: '{}' is not a recurrent op", op));
}

RecurrentParams recurrent_params(const Node& node, const Shape& x) {
  RecurrentParams p;
  p.kind = recurrent_kind(node.op);
  p.gates = p.kind == RecurrentKind::lstm ? 4 : p.kind == RecurrentKind::gru ? 3 : 1;
  if (x.size() != 3)
    invalid_input("node '{}' ({}): X must have rank 3 [seq_length, batch, input_size], got shape {}", node.name,
                  node.op, shape_str(x));
  p.seq_len = x[0];
  p.batch = x[1];
  p.input_size = x[2];
  p.hidden = attr_int(node, "hidden_size");
  // Bounded so that gates * hidden_size and the weights' sizes cannot overflow.
  if (p.hidden < 1 || p.hidden > kMaxElements)
    invalid_input("node '{}' ({}): hidden_size must be in [1, {}], got {}", node.name, node.op, kMaxElements,
                  p.hidden);
  const std::string& direction = attr_string(node, "direction");
  if (direction == "bidirectional") {
    p.directions = 2;
  } else if (direction == "reverse") {
    p.reverse = true;
  } else if (direction != "forward") {
    invalid_input("node '{}' ({}): direction '{}' is not forward, reverse or bidirectional", node.name, node.op,
                  direction);
  }
  if (p.kind == RecurrentKind::gru) {
    const int64_t flag = attr_int(node, "linear_before_reset");
    if (flag != 0 && flag != 1)
      invalid_input("node '{}' ({}): linear_before_reset must be 0 or 1, got {}", node.name, node.op, flag);
    p.linear_before_reset = flag == 1;
  }
  return p;
}

}  // namespace mt
