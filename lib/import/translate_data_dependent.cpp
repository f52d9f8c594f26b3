// Rules for ops whose output size depends on their data: NonMaxSuppression, NonZero, Compress,
// Unique. mt plans static shapes, so:
// - NonMaxSuppression becomes non_max_suppression, planned at its largest output (every batch and
//   class keeping min(max_output_boxes_per_class, boxes)); the count of valid rows is its second
//   output (lib/ops/valid_rows.h). max_output_boxes_per_class sizes the output: it must be known
//   at conversion. The thresholds are read at run time.
// - NonZero and Unique on data known at conversion (constants, or graph inputs pinned with
//   --input-value) are evaluated here; Compress with a condition known at conversion is a gather
//   by the indices it selects. On run-time data they are refused: their result's size is the data.
#include <algorithm>
#include <cmath>
#include <map>
#include <type_traits>
#include <vector>

#include "lib/import/constant_values.h"
#include "lib/import/translators.h"

namespace mt::onnx_import {
namespace {

void non_max_suppression(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  int64_t max_boxes = 0;  // ONNX's default: no output
  if (node.has_input(2)) {
    const auto values = ctx.const_ints(node, 2, "max_output_boxes_per_class");
    if (values.size() != 1) node.invalid("max_output_boxes_per_class must be one value, got {}", values.size());
    max_boxes = std::max<int64_t>(values[0], 0);
  }
  for (size_t i : {size_t{3}, size_t{4}})
    if (node.has_input(i) && ctx.input_info(node, i).dtype != DType::f32)
      node.invalid("input '{}' must be float32", node.input(i));
  // Never folded, even on constants (lib/ops/valid_rows.h): a run computes it.
  const std::string& selected = node.output(0);
  ctx.emit(node, "non_max_suppression",
           {ctx.input(node, 0), ctx.input(node, 1), ctx.input(node, 3), ctx.input(node, 4)},
           {{"max_output_boxes_per_class", max_boxes}, {"center_point_box", node.attr_int("center_point_box", 0)}},
           {selected, ctx.fresh_name(selected + ".valid_rows")});
}

// NonZero of a constant: the int64 coordinates [rank, count] of its non-zero elements (NaN counts),
// in row-major order.
void non_zero(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  ctx.require_known(node, {{0, "X, whose non-zero elements decide the output's size"}});
  const TensorInfo& x = ctx.input_info(node, 0);
  const std::vector<double> values = read_doubles(x);
  std::vector<int64_t> positions;
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i] != 0) positions.push_back(static_cast<int64_t>(i));
  const auto rank = static_cast<int64_t>(x.shape.size());
  const auto count = static_cast<int64_t>(positions.size());
  if (rank * count > kMaxShapeOpElements) node.unsupported("would create {} x {} indices at conversion", rank, count);
  std::vector<int64_t> coordinates(static_cast<size_t>(rank * count));
  for (int64_t k = 0; k < count; ++k) {
    int64_t rest = positions[static_cast<size_t>(k)];
    for (int64_t d = rank; d-- > 0;) {
      coordinates[static_cast<size_t>(d * count + k)] = rest % x.shape[static_cast<size_t>(d)];
      rest /= x.shape[static_cast<size_t>(d)];
    }
  }
  ctx.add_constant(make_constant(node.output(0), DType::i64, {rank, count}, coordinates));
}

// Compress: the slices along `axis` (of the flattened input without one) where the condition is
// true, a gather by their indices. The condition decides the output's size: it must be known.
void compress(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  ctx.require_known(node, {{1, "condition, which decides the output's size"}});
  const TensorInfo& condition = ctx.input_info(node, 1);
  if (condition.shape.size() != 1) node.invalid("condition must be 1-D, got shape {}", shape_str(condition.shape));
  const TensorInfo& x = ctx.input_info(node, 0);
  std::string data = ctx.input(node, 0);
  int64_t axis = 0, length = x.numel();
  if (node.has_attr("axis")) {
    axis = node_axis(node, node.attr_int("axis", 0), x.shape.size());
    length = x.shape[static_cast<size_t>(axis)];
  } else {
    data = ctx.emit1(node, "reshape", {data}, {{"shape", std::vector<int64_t>{length}}},
                     ctx.fresh_name(node.output(0) + "/flat"));
  }
  const std::vector<int64_t> flags = read_ints(condition);
  if (static_cast<int64_t>(flags.size()) > length)
    node.invalid("condition has {} values for an axis of {}", flags.size(), length);
  std::vector<int64_t> picked;
  for (size_t i = 0; i < flags.size(); ++i)
    if (flags[i] != 0) picked.push_back(static_cast<int64_t>(i));
  const std::string indices = ctx.add_constant(make_constant(ctx.fresh_name(node.output(0) + "/indices"), DType::i64,
                                                             {static_cast<int64_t>(picked.size())}, picked));
  ctx.emit1(node, "gather", {data, indices}, {{"axis", axis}}, node.output(0));
}

// Total order for Unique: numbers by value, NaN after every number and equal to NaN.
template <typename T>
bool value_less(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return !std::isnan(a) && std::isnan(b);
  }
  return a < b;
}

template <typename T>
struct SliceLess {
  bool operator()(const std::vector<T>& a, const std::vector<T>& b) const {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), value_less<T>);
  }
};

// Unique of a constant: the distinct elements (or slices along `axis`), sorted or in order of
// first appearance, with the index of each one's first appearance, the index each element maps
// to, and the counts.
template <typename T>
void unique_of(ImportContext& ctx, const OnnxNode& node, const TensorInfo& x, const std::vector<T>& values) {
  const bool has_axis = node.has_attr("axis");
  const size_t axis = has_axis ? static_cast<size_t>(node_axis(node, node.attr_int("axis", 0), x.shape.size())) : 0;
  int64_t outer = 1, slices = x.numel(), inner = 1;
  if (has_axis) {
    slices = x.shape[axis];
    for (size_t d = 0; d < axis; ++d) outer *= x.shape[d];
    for (size_t d = axis + 1; d < x.shape.size(); ++d) inner *= x.shape[d];
  }
  auto slice = [&](int64_t s) {
    std::vector<T> elements;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) elements.push_back(values[static_cast<size_t>((o * slices + s) * inner + i)]);
    return elements;
  };
  std::map<std::vector<T>, int64_t, SliceLess<T>> first_seen;  // slice -> its unique id (order of appearance)
  std::vector<int64_t> first_index, id_of_slice, counts;
  for (int64_t s = 0; s < slices; ++s) {
    auto [it, inserted] = first_seen.emplace(slice(s), static_cast<int64_t>(first_index.size()));
    if (inserted) {
      first_index.push_back(s);
      counts.push_back(0);
    }
    id_of_slice.push_back(it->second);
    ++counts[static_cast<size_t>(it->second)];
  }
  // The output order (slot k holds unique id order[k]): by value when sorted, else by first appearance.
  const size_t unique = first_index.size();
  std::vector<size_t> order(unique), position(unique);
  if (node.attr_int("sorted", 1) != 0) {
    size_t k = 0;
    for (const auto& [elements, id] : first_seen) order[k++] = static_cast<size_t>(id);
  } else {
    for (size_t u = 0; u < unique; ++u) order[u] = u;
  }
  for (size_t k = 0; k < unique; ++k) position[order[k]] = k;

  Shape y_shape = has_axis ? x.shape : Shape{static_cast<int64_t>(unique)};
  if (has_axis) y_shape[axis] = static_cast<int64_t>(unique);
  std::vector<T> y;
  for (int64_t o = 0; o < outer; ++o)
    for (size_t k = 0; k < unique; ++k)
      for (int64_t i = 0; i < inner; ++i)
        y.push_back(values[static_cast<size_t>((o * slices + first_index[order[k]]) * inner + i)]);
  std::vector<int64_t> indices, inverse, sorted_counts;
  for (size_t k = 0; k < unique; ++k) {
    indices.push_back(first_index[order[k]]);
    sorted_counts.push_back(counts[order[k]]);
  }
  for (int64_t id : id_of_slice) inverse.push_back(static_cast<int64_t>(position[static_cast<size_t>(id)]));
  ctx.add_constant(make_constant(node.output(0), x.dtype, y_shape, y));
  const std::vector<std::vector<int64_t>*> rest{&indices, &inverse, &sorted_counts};
  for (size_t i = 1; i < node.num_outputs() && i < 4; ++i)
    if (!node.output(i).empty())
      ctx.add_constant(
          make_constant(node.output(i), DType::i64, {static_cast<int64_t>(rest[i - 1]->size())}, *rest[i - 1]));
}

void unique(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  ctx.require_known(node, {{0, "X, whose distinct values decide the output's size"}});
  const TensorInfo& x = ctx.input_info(node, 0);
  // Each element becomes a slice in a map: a smaller bound than other shape computations.
  constexpr int64_t kMaxUniqueElements = int64_t{1} << 20;
  if (x.numel() > kMaxUniqueElements)
    node.unsupported("input of {} elements is larger than mt evaluates at conversion ({})", x.numel(), kMaxUniqueElements);
  if (is_float(x.dtype)) unique_of(ctx, node, x, read_doubles(x));
  else unique_of(ctx, node, x, read_ints(x));
}

}  // namespace

void add_data_dependent_translators(TranslatorTable& table) {
  table.add("NonMaxSuppression", non_max_suppression);
  table.add("NonZero", non_zero);
  table.add("Compress", compress);
  table.add("Unique", unique);
}

}  // namespace mt::onnx_import
