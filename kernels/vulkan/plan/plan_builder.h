// Planning a graph for the Vulkan backend: where every tensor lives (arena, weights, staging), in the
// packed layout, and the list of dispatches (pipeline, buffers, parameters, workgroups) that computes
// it. Op planners (kernel_table.h) talk to it through NodeContext; vulkan_plan.cpp then places the
// buffers in device memory and records the dispatches into one command buffer.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "kernels/vulkan/runtime/context.h"
#include "kernels/vulkan/plan/packed_layout.h"
#include "lib/ir/graph.h"
#include "lib/ir/stored_layout.h"

namespace mt::vulkan {

enum class Region {
  arena,           // intermediate tensors, placed by liveness
  weights,         // constants packed at planning, uploaded once
  params,          // the parameter words of each dispatch, uploaded once
  input_staging,   // host-visible: graph inputs, row-major fp32, written by run()
  output_staging,  // host-visible: graph outputs, row-major fp32, read by run()
};

// A range of device memory the dispatches use; placed (buffer, offset) after planning.
struct Buffer {
  Region region = Region::arena;
  size_t bytes = 0;
  size_t first = SIZE_MAX, last = 0;  // dispatch indices that use it (arena liveness)
  std::vector<std::byte> data;        // weights and params: the bytes to upload
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
};

// A tensor as the plan stores it: a whole buffer in the packed layout.
struct Tensor {
  int buffer = -1;
  PackedLayout layout;
  View view() const { return view_of(layout); }
};

// How a shader reads a buffer through a uniform texel buffer (texelFetch) instead of a storage
// buffer: vec4 texels in the plan's precision, or 32-bit integers four or one to a texel. Mesa's
// lavapipe gathers texel buffer reads across a SIMD batch in one go, where it loads storage buffers
// invocation by invocation and component by component (several times slower); GPUs read both
// through their caches.
enum class Texels : uint8_t { none, floats, int4, int1 };

struct Binding {
  int buffer = -1;
  bool writes = false;
  Texels texels = Texels::none;  // reads only
};

struct Dispatch {
  PipelineKey key;
  std::vector<Binding> bindings;  // binding 1, 2, ... (binding 0 is `params`)
  int params = -1;                // buffer of the parameter words
  std::array<uint32_t, 3> groups{1, 1, 1};
  size_t node_index = 0;
};

// Parameter words of a dispatch (ints and floats by their bits, in order).
class Params {
 public:
  Params& i(int64_t value);
  Params& f(double value);
  Params& view(const View& view);
  Params& append(const Params& more);
  const std::vector<uint32_t>& words() const { return words_; }

 private:
  std::vector<uint32_t> words_;
};

// Workgroups covering `count` invocations of `local` each, spread over y past the device limit.
std::array<uint32_t, 3> linear_groups(int64_t count, uint32_t local = 64);

class PlanBuilder {
 public:
  // int8_dot: the int8 conv/linear shaders may use the device's int8 dot products (the plan
  // option and the device feature both).
  PlanBuilder(const Graph& graph, bool fp16, bool int8_dot, const DeviceInfo* device);

  // Plans every node, then the graph outputs (unpacked into output staging).
  void build();

  const Graph& graph;
  const bool fp16;
  const bool int8_dot;
  const DeviceInfo* device;  // nullptr: no limits to respect (not used by check_node)
  std::vector<Buffer> buffers;
  std::vector<Dispatch> dispatches;
  std::vector<int> input_staging;   // buffer per graph input
  std::vector<int> output_staging;  // buffer per graph output
  // Graph outputs that are constants in the model (shape computations folded at import, any
  // dtype): written into their output staging once at planning, exactly, with no dispatch.
  std::vector<size_t> constant_outputs;

  // --- used by op planners through NodeContext ---
  const Tensor& value(const std::string& name, size_t node_index);
  Tensor new_tensor(const Shape& shape);
  int new_buffer(Region region, size_t bytes, std::vector<std::byte> data = {});
  void define(const std::string& name, const Tensor& tensor);
  void add_dispatch(Dispatch dispatch, const Params& params);

 private:
  std::map<std::string, Tensor, std::less<>> values_;
};

// What one op planner sees: the node, its inputs as device tensors, its outputs.
class NodeContext {
 public:
  NodeContext(PlanBuilder& builder, size_t node_index);

  const Graph& graph() const { return builder_.graph; }
  const Node& node() const { return node_; }
  bool fp16() const { return builder_.fp16; }
  bool int8_dot() const { return builder_.int8_dot; }

  bool has_input(size_t i) const { return i < node_.inputs.size() && !node_.inputs[i].empty(); }
  const TensorInfo& input_info(size_t i) const { return builder_.graph.tensor(node_.inputs.at(i)); }
  const TensorInfo& output_info(size_t i) const { return builder_.graph.tensor(node_.outputs.at(i)); }
  bool is_constant(size_t i) const { return has_input(i) && input_info(i).is_constant(); }
  // A constant float32 input's values, row-major.
  const float* constant(size_t i) const { return input_info(i).data.as<float>().data(); }
  // A constant int8 / int32 input's values, row-major.
  const int8_t* constant_int8(size_t i) const { return input_info(i).data.as<int8_t>().data(); }
  const int32_t* constant_int32(size_t i) const { return input_info(i).data.as<int32_t>().data(); }
  // A constant float32 or int8 input's values as floats (int8: the integers), row-major.
  std::vector<float> constant_values(size_t i) const;

  // Input i on the device (graph inputs and constants are packed on first use).
  const Tensor& input(size_t i) { return builder_.value(node_.inputs.at(i), index_); }
  // The staging buffer of input i when it is a graph input (row-major, in its dtype), or -1.
  int graph_input_staging(size_t i) const;
  // A new arena tensor for output i.
  Tensor output(size_t i);
  // Output i is `source`'s memory (same placement, checked by the caller).
  void alias_output(size_t i, const Tensor& source);

  // Input i is a constant stored in a vulkan layout (mt-prepack --backend vulkan; check_node has
  // checked that this node reads it in that layout). int8 layouts keep their bytes in every precision.
  bool prepacked(size_t i) const { return has_input(i) && !input_info(i).layout.empty(); }
  // A prepacked input's bytes as a weights buffer, copied as they are. Throws Error(invalid_input)
  // when they are stored in another precision than the plan's.
  int prepacked_weights(size_t i);

  // A prepacked input's stored values (either precision) as floats, in its stored layout.
  std::vector<float> prepacked_values(size_t i) const;
  // A buffer of `texels` texels in the plan's precision that only this node's dispatches use
  // (placed in the arena by their liveness).
  int scratch(int64_t texels);

  // Constants computed by the planner: floats (stored in the plan's precision) or raw words.
  int weights(const std::vector<float>& values);
  int weights_fp32(const std::vector<float>& values);
  int weights_words(const std::vector<int32_t>& values);
  int weights_int8(const std::vector<int8_t>& values);  // padded with zeros to whole 32-bit words

  // One dispatch of `shader` (its fp32 or fp16 variant) with these storage buffers after the params.
  void dispatch(const std::string& shader, std::array<uint32_t, 3> local, std::vector<uint32_t> spec,
                std::initializer_list<Binding> bindings, const Params& params, std::array<uint32_t, 3> groups);

  static Binding read(const Tensor& t) { return {t.buffer, false}; }
  // A tensor or buffer read with texelFetch: texels in the plan's precision, or int32 words (ivec4
  // or int texels: int8 weights, 4 to a word).
  static Binding fetch(const Tensor& t) { return {t.buffer, false, Texels::floats}; }
  static Binding fetch(int buffer) { return {buffer, false, Texels::floats}; }
  static Binding fetch_int4(int buffer) { return {buffer, false, Texels::int4}; }
  static Binding fetch_int1(int buffer) { return {buffer, false, Texels::int1}; }
  static Binding read(int buffer) { return {buffer, false}; }
  static Binding write(const Tensor& t) { return {t.buffer, true}; }
  static Binding write(int buffer) { return {buffer, true}; }

 private:
  // A prepacked input's stored layout; throws unless it is a vulkan layout in the plan's precision.
  VulkanStorage prepacked_storage(size_t i) const;

  PlanBuilder& builder_;
  size_t index_;
  const Node& node_;
};

}  // namespace mt::vulkan
