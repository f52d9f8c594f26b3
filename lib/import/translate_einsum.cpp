// Einsum, lowered to mt's transpose, reshape, gather, reduce_sum and matmul: the contractions
// exporters emit (batched matrix products "bij,bjk->bik", attention's "bhqd,bhkd->bhqk", inner and
// outer products, transposes, sums, diagonals "...ii->...i") and any other equation of that
// language, with "..." and implicit outputs. Each operand first loses its repeated labels (the
// diagonal, gathered exactly), its size-1 axes that meet a larger size in another operand
// (broadcasting), and the labels no one else needs (summed). Operands then combine left to right,
// each pair as one batched matmul [batch, left, contracted] x [batch, contracted, right]; the result
// is transposed to the output's order. Every product and sum is one mt op; nothing is approximated.
#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <set>

#include "lib/import/translators.h"

namespace mt::onnx_import {
namespace {

// An axis label: a letter's code, or kEllipsis + j for the j-th axis that "..." covers (aligned to
// the right across operands, as numpy broadcasts them).
using Label = int;
constexpr Label kEllipsis = 1000;

// One operand as the lowering carries it: its mt tensor and the label of each of its axes.
struct Term {
  std::string tensor;
  std::vector<Label> labels;
};

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// The labels of one side of the equation, "..." expanded to `ellipsis_rank` axes (the last ones of
// the ellipsis labels when this side covers fewer of them).
std::vector<Label> parse_term(const OnnxNode& node, const std::string& term, size_t rank, size_t ellipsis_rank,
                              bool output) {
  std::vector<Label> labels;
  bool ellipsis = false;
  size_t letters = 0;
  for (char c : term) letters += is_letter(c) ? 1 : 0;
  for (size_t i = 0; i < term.size(); ++i) {
    if (term.compare(i, 3, "...") == 0) {
      if (ellipsis) node.invalid("equation term '{}' has two ellipses", term);
      ellipsis = true;
      const size_t covered = output ? ellipsis_rank : rank - letters;
      if (!output && rank < letters)
        node.invalid("equation term '{}' names more axes than its operand's rank {}", term, rank);
      for (size_t j = ellipsis_rank - covered; j < ellipsis_rank; ++j)
        labels.push_back(kEllipsis + static_cast<int>(j));
      i += 2;
    } else if (is_letter(term[i])) {
      labels.push_back(term[i]);
    } else {
      node.invalid("equation term '{}' holds '{}', which is neither a letter nor part of '...'", term, term[i]);
    }
  }
  if (!output && labels.size() != rank)
    node.invalid("equation term '{}' names {} axes for an operand of rank {}", term, labels.size(), rank);
  return labels;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts(1);
  for (char c : text) {
    if (c == separator) parts.emplace_back();
    else parts.back() += c;
  }
  return parts;
}

class EinsumLowering {
 public:
  EinsumLowering(ImportContext& ctx, const OnnxNode& node) : ctx_(ctx), node_(node) {}

  void run() {
    parse();
    for (Term& term : terms_) {
      take_diagonals(term);
      squeeze_broadcast(term);
    }
    Term result = terms_[0];
    result = sum_unneeded(result, 0);
    for (size_t k = 1; k < terms_.size(); ++k) result = contract(result, sum_unneeded(terms_[k], k), k);
    finish(result);
  }

 private:
  void parse() {
    std::string equation;
    for (char c : node_.attr_string("equation", ""))
      if (c != ' ') equation += c;
    if (equation.empty()) node_.invalid("attribute 'equation' is required");
    const size_t arrow = equation.find("->");
    const std::string lhs = equation.substr(0, arrow);
    const std::vector<std::string> terms = split(lhs, ',');
    if (terms.size() != node_.num_inputs())
      node_.invalid("equation '{}' has {} operands, the node {} inputs", equation, terms.size(), node_.num_inputs());
    size_t ellipsis_rank = 0;
    for (size_t k = 0; k < terms.size(); ++k) {
      const size_t rank = ctx_.input_info(node_, k).shape.size();
      size_t letters = 0;
      for (char c : terms[k]) letters += is_letter(c) ? 1 : 0;
      if (terms[k].find("...") != std::string::npos && rank >= letters)
        ellipsis_rank = std::max(ellipsis_rank, rank - letters);
    }
    for (size_t k = 0; k < terms.size(); ++k) {
      const TensorInfo& info = ctx_.input_info(node_, k);
      Term term{ctx_.input(node_, k), parse_term(node_, terms[k], info.shape.size(), ellipsis_rank, false)};
      for (size_t a = 0; a < term.labels.size(); ++a) {
        const int64_t size = info.shape[a];
        auto [it, inserted] = sizes_.emplace(term.labels[a], size);
        if (!inserted && it->second != size) {
          if (it->second == 1) it->second = size;
          else if (size != 1)
            node_.invalid("label '{}' has size {} in one operand and {} in another", label_name(term.labels[a]),
                          it->second, size);
        }
      }
      terms_.push_back(std::move(term));
    }
    if (arrow != std::string::npos) {
      output_ = parse_term(node_, equation.substr(arrow + 2), 0, ellipsis_rank, true);
      std::set<Label> seen;
      for (Label l : output_) {
        if (!seen.insert(l).second)
          node_.invalid("equation '{}' names output label '{}' twice", equation, label_name(l));
        if (!sizes_.count(l))
          node_.invalid("equation '{}': output label '{}' is in no operand", equation, label_name(l));
      }
    } else {
      // Implicit: the ellipsis axes, then the letters that appear once, in alphabetical order.
      std::map<Label, int> counts;
      for (const Term& t : terms_)
        for (Label l : t.labels) ++counts[l];
      for (size_t j = 0; j < ellipsis_rank; ++j) output_.push_back(kEllipsis + static_cast<int>(j));
      for (const auto& [l, n] : counts)
        if (l < kEllipsis && n == 1) output_.push_back(l);
    }
  }

  std::string label_name(Label l) const {
    return l >= kEllipsis ? fmt::format("...[{}]", l - kEllipsis) : std::string(1, static_cast<char>(l));
  }

  std::string name(const char* hint) { return ctx_.fresh_name(node_.output(0) + "/" + hint); }
  const Shape& shape_of(const std::string& tensor) { return ctx_.graph().tensor(tensor).shape; }

  std::string transpose(const std::string& tensor, const std::vector<int64_t>& perm) {
    bool identity = true;
    for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<int64_t>(i);
    return identity ? tensor : ctx_.emit1(node_, "transpose", {tensor}, {{"perm", perm}}, name("transposed"));
  }
  std::string reshape(const std::string& tensor, const std::vector<int64_t>& shape) {
    return shape_of(tensor) == shape ? tensor
                                     : ctx_.emit1(node_, "reshape", {tensor}, {{"shape", shape}}, name("reshaped"));
  }

  // Moves the axes of `term` into the order `labels` (a permutation of its labels).
  void reorder(Term& term, const std::vector<Label>& labels) {
    std::vector<int64_t> perm;
    for (Label l : labels) perm.push_back(std::find(term.labels.begin(), term.labels.end(), l) - term.labels.begin());
    term.tensor = transpose(term.tensor, perm);
    term.labels = labels;
  }

  // "ii": the diagonal of the two axes, gathered from the flattened pair (indices k * (n + 1)).
  void take_diagonals(Term& term) {
    for (size_t a = 0; a < term.labels.size(); ++a) {
      const auto b = std::find(term.labels.begin() + static_cast<int64_t>(a) + 1, term.labels.end(), term.labels[a]);
      if (b == term.labels.end()) continue;
      const Label label = term.labels[a];
      const Shape& shape = shape_of(term.tensor);
      if (shape[a] != shape[static_cast<size_t>(b - term.labels.begin())])
        node_.invalid("label '{}' repeats in one operand over axes of sizes {} and {}", label_name(label), shape[a],
                      shape[static_cast<size_t>(b - term.labels.begin())]);
      std::vector<Label> order;
      for (Label l : term.labels)
        if (l != label) order.push_back(l);
      order.push_back(label);
      order.push_back(label);
      // reorder() cannot tell the two axes apart; they are equal in size, so either order works.
      std::vector<int64_t> perm;
      for (size_t i = 0; i < term.labels.size(); ++i)
        if (term.labels[i] != label) perm.push_back(static_cast<int64_t>(i));
      perm.push_back(static_cast<int64_t>(a));
      perm.push_back(b - term.labels.begin());
      term.tensor = transpose(term.tensor, perm);
      Shape flat = shape_of(term.tensor);
      const int64_t n = flat.back();
      flat.pop_back();
      flat.back() = n * n;
      term.tensor = reshape(term.tensor, flat);
      std::vector<int64_t> indices(static_cast<size_t>(n));
      for (int64_t k = 0; k < n; ++k) indices[static_cast<size_t>(k)] = k * (n + 1);
      TensorInfo index_info{.name = name("diagonal_indices"), .dtype = DType::i64, .shape = {n}};
      index_info.data = ConstData::copy_of(indices.data(), indices.size() * sizeof(int64_t));
      const std::string index_tensor = ctx_.add_constant(std::move(index_info));
      term.tensor = ctx_.emit1(node_, "gather", {term.tensor, index_tensor},
                               {{"axis", static_cast<int64_t>(flat.size()) - 1}}, name("diagonal"));
      order.pop_back();
      term.labels = order;
      a = static_cast<size_t>(-1);  // start again: labels moved
    }
  }

  // A size-1 axis whose label has a larger size elsewhere broadcasts: it leaves the operand.
  void squeeze_broadcast(Term& term) {
    const Shape shape = shape_of(term.tensor);
    std::vector<int64_t> kept_shape;
    std::vector<Label> kept;
    for (size_t a = 0; a < term.labels.size(); ++a) {
      if (shape[a] == 1 && sizes_.at(term.labels[a]) != 1) continue;
      kept.push_back(term.labels[a]);
      kept_shape.push_back(shape[a]);
    }
    if (kept.size() == term.labels.size()) return;
    term.tensor = reshape(term.tensor, kept_shape);
    term.labels = kept;
  }

  // Whether `label` is needed after operand `k` joins: in the output or in a later operand.
  bool needed_after(Label label, size_t k) const {
    if (std::find(output_.begin(), output_.end(), label) != output_.end()) return true;
    for (size_t j = k + 1; j < terms_.size(); ++j)
      if (std::find(terms_[j].labels.begin(), terms_[j].labels.end(), label) != terms_[j].labels.end()) return true;
    return false;
  }

  // Sums the axes of operand `k` (or of the result so far, k = 0) that neither the output, a later
  // operand nor, for k > 0, the result so far needs.
  Term sum_unneeded(Term term, size_t k) {
    std::vector<int64_t> axes;
    std::vector<Label> kept;
    for (size_t a = 0; a < term.labels.size(); ++a) {
      const Label l = term.labels[a];
      bool needed = needed_after(l, k);
      for (size_t j = 0; j < k && !needed; ++j)
        needed = std::find(terms_[j].labels.begin(), terms_[j].labels.end(), l) != terms_[j].labels.end();
      if (needed) kept.push_back(l);
      else axes.push_back(static_cast<int64_t>(a));
    }
    if (axes.empty()) return term;
    term.tensor =
        ctx_.emit1(node_, "reduce_sum", {term.tensor}, {{"axes", axes}, {"keepdims", int64_t{0}}}, name("summed"));
    term.labels = kept;
    return term;
  }

  int64_t product(const std::vector<Label>& labels) const {
    int64_t n = 1;
    for (Label l : labels) n *= sizes_.at(l);
    return n;
  }

  // a (the result so far) and b (operand k) as one batched matmul.
  Term contract(Term a, Term b, size_t k) {
    auto in = [](const Term& t, Label l) { return std::find(t.labels.begin(), t.labels.end(), l) != t.labels.end(); };
    std::vector<Label> batch, contracted, left, right;
    for (Label l : a.labels) {
      if (!in(b, l)) left.push_back(l);
      else if (needed_after(l, k)) batch.push_back(l);
      else contracted.push_back(l);
    }
    for (Label l : b.labels)
      if (!in(a, l)) right.push_back(l);
    // Labels of a that no one needs any more were summed by sum_unneeded; so were b's.
    std::vector<Label> a_order = batch, b_order = batch;
    a_order.insert(a_order.end(), left.begin(), left.end());
    a_order.insert(a_order.end(), contracted.begin(), contracted.end());
    b_order.insert(b_order.end(), contracted.begin(), contracted.end());
    b_order.insert(b_order.end(), right.begin(), right.end());
    reorder(a, a_order);
    reorder(b, b_order);
    const int64_t nb = product(batch), nl = product(left), nk = product(contracted), nr = product(right);
    const std::string a3 = reshape(a.tensor, {nb, nl, nk});
    const std::string b3 = reshape(b.tensor, {nb, nk, nr});
    const std::string y = ctx_.emit1(node_, "matmul", {a3, b3}, {}, name("product"));
    Term result;
    result.labels = batch;
    result.labels.insert(result.labels.end(), left.begin(), left.end());
    result.labels.insert(result.labels.end(), right.begin(), right.end());
    std::vector<int64_t> shape;
    for (Label l : result.labels) shape.push_back(sizes_.at(l));
    result.tensor = reshape(y, shape);
    return result;
  }

  // Every label left is an output label: the others were summed or contracted on the way.
  void finish(Term result) {
    // Output labels that no operand kept (a size-1 broadcast axis of every operand) come back as 1.
    for (Label l : output_)
      if (std::find(result.labels.begin(), result.labels.end(), l) == result.labels.end()) {
        std::vector<int64_t> shape;
        for (Label r : result.labels) shape.push_back(sizes_.at(r));
        shape.push_back(1);
        result.tensor = reshape(result.tensor, shape);
        result.labels.push_back(l);
      }
    reorder(result, output_);
    ctx_.alias(node_.output(0), result.tensor);
  }

  ImportContext& ctx_;
  const OnnxNode& node_;
  std::vector<Term> terms_;
  std::vector<Label> output_;
  std::map<Label, int64_t> sizes_;
};

void einsum(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  if (node.num_inputs() < 1) node.invalid("Einsum needs at least one input");
  EinsumLowering(ctx, node).run();
}

}  // namespace

void add_einsum_translators(TranslatorTable& table) { table.add("Einsum", einsum); }

}  // namespace mt::onnx_import
