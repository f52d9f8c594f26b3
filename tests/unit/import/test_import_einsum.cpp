// Einsum's lowering (translate_einsum.cpp) against a direct evaluation of the equation: every
// assignment of the labels, summed. Covers the forms exporters write (batched products, attention's
// transposed product, inner and outer products, transposes, sums, diagonals), "...", implicit
// outputs, broadcasting size-1 axes and three operands; and the refusals of malformed equations.
#include <map>
#include <random>

#include "tests/unit/import/onnx_test_util.h"

namespace mt::test {
namespace {

// sum over every assignment of the labels of prod_k x_k[labels of term k], per output index; the
// oracle equation has explicit letters only (no "..."), and a size-1 axis broadcasts.
std::vector<float> naive_einsum(const std::string& equation, const std::vector<Shape>& shapes,
                                const std::vector<std::vector<float>>& xs, Shape& out_shape) {
  const size_t arrow = equation.find("->");
  std::vector<std::string> terms(1);
  for (char c : equation.substr(0, arrow)) {
    if (c == ',') terms.emplace_back();
    else terms.back() += c;
  }
  const std::string out = equation.substr(arrow + 2);
  std::map<char, int64_t> sizes;
  for (size_t k = 0; k < terms.size(); ++k)
    for (size_t a = 0; a < terms[k].size(); ++a) sizes[terms[k][a]] = std::max(sizes[terms[k][a]], shapes[k][a]);
  std::vector<char> labels;
  for (const auto& [l, n] : sizes) labels.push_back(l);
  out_shape.clear();
  for (char c : out) out_shape.push_back(sizes[c]);
  std::vector<float> y(static_cast<size_t>(numel(out_shape)), 0.0f);
  std::map<char, int64_t> at;
  for (char l : labels) at[l] = 0;
  while (true) {
    double product = 1.0;
    for (size_t k = 0; k < terms.size(); ++k) {
      int64_t offset = 0;
      for (size_t a = 0; a < terms[k].size(); ++a)
        offset = offset * shapes[k][a] + (shapes[k][a] == 1 ? 0 : at[terms[k][a]]);
      product *= xs[k][static_cast<size_t>(offset)];
    }
    int64_t o = 0;
    for (char c : out) o = o * sizes[c] + at[c];
    y[static_cast<size_t>(o)] += static_cast<float>(product);
    size_t d = labels.size();
    while (d > 0 && ++at[labels[d - 1]] == sizes[labels[d - 1]]) at[labels[--d]] = 0;
    if (d == 0) break;
  }
  return y;
}

void check_einsum(const std::string& equation, const std::vector<Shape>& shapes, const std::string& oracle) {
  INFO("equation ", equation);
  OnnxBuilder b(13);
  std::vector<std::string> names;
  std::vector<std::vector<float>> xs;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> real(-1.0f, 1.0f);
  for (size_t k = 0; k < shapes.size(); ++k) {
    names.push_back(fmt::format("x{}", k));
    std::vector<Dim> dims(shapes[k].begin(), shapes[k].end());
    b.input(names.back(), dims);
    xs.emplace_back(static_cast<size_t>(numel(shapes[k])));
    for (float& v : xs.back()) v = real(rng);
  }
  b.output("y");
  attr_string(b.node("Einsum", names, {"y"}, "einsum"), "equation", equation);
  const Graph g = b.import();
  Shape want_shape;
  const std::vector<float> want = naive_einsum(oracle, shapes, xs, want_shape);
  CHECK(g.tensor(g.outputs[0]).shape == want_shape);
  check_close(run_graph(g, xs), want, 1e-5);
}

TEST_CASE("Einsum: the equations exporters write, lowered to matmul, transpose, reduce_sum and gather") {
  check_einsum("bij, bjk -> bik", {{5, 2, 3}, {5, 3, 4}}, "bij,bjk->bik");
  check_einsum("bhqd,bhkd->bhqk", {{2, 3, 4, 8}, {2, 3, 6, 8}}, "bhqd,bhkd->bhqk");
  check_einsum("i,i", {{5}, {5}}, "i,i->");
  check_einsum("i,j->ij", {{3}, {4}}, "i,j->ij");
  check_einsum("ij->ji", {{3, 4}}, "ij->ji");
  check_einsum("ij->i", {{3, 4}}, "ij->i");
  check_einsum("bij->", {{2, 3, 4}}, "bij->");
  check_einsum("ij,jk", {{2, 3}, {3, 4}}, "ij,jk->ik");  // implicit: letters once, alphabetical
  check_einsum("ij,ij->ij", {{3, 4}, {3, 4}}, "ij,ij->ij");
}

TEST_CASE("Einsum: diagonals, ellipses, broadcasting and chains") {
  check_einsum("...ii ->...i", {{3, 5, 5}}, "aii->ai");
  check_einsum("ii", {{4, 4}}, "ii->");  // the trace
  check_einsum("iij->ji", {{3, 3, 2}}, "iij->ji");
  check_einsum("...ij,...jk->...ik", {{2, 1, 3, 4}, {5, 4, 2}}, "abij,bjk->abik");
  check_einsum("bid,bjd->bij", {{1, 7, 8}, {3, 5, 8}}, "bid,bjd->bij");
  check_einsum("abc,cd,de->abe", {{2, 3, 4}, {4, 5}, {5, 6}}, "abc,cd,de->abe");
  check_einsum("bn,anm,bm->ba", {{2, 3}, {4, 3, 5}, {2, 5}}, "bn,anm,bm->ba");
}

TEST_CASE("Einsum: malformed equations are refused, naming the node") {
  auto error_of = [](const std::string& equation, const std::vector<Shape>& shapes) {
    OnnxBuilder b(13);
    std::vector<std::string> names;
    for (size_t k = 0; k < shapes.size(); ++k) {
      names.push_back(fmt::format("x{}", k));
      b.input(names.back(), std::vector<Dim>(shapes[k].begin(), shapes[k].end()));
    }
    b.output("y");
    attr_string(b.node("Einsum", names, {"y"}, "einsum"), "equation", equation);
    const Error e = import_error(b);
    CHECK(e.code() == ExitCode::invalid_input);
    return std::string(e.what());
  };
  CHECK(error_of("ij,jk->ik", {{2, 3}}).find("node 'einsum'") != std::string::npos);
  CHECK(error_of("ijk->i", {{2, 3}}).find("names 3 axes for an operand of rank 2") != std::string::npos);
  CHECK(error_of("ij,jk->ik", {{2, 3}, {4, 5}}).find("label 'j' has size 3") != std::string::npos);
  CHECK(error_of("ij->iz", {{2, 3}}).find("output label 'z' is in no operand") != std::string::npos);
  CHECK(error_of("i1->i", {{2, 3}}).find("neither a letter") != std::string::npos);
}

}  // namespace
}  // namespace mt::test
