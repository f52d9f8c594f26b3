#include "kernels/vulkan/plan/plan_builder.h"

#include <algorithm>
#include <cstring>

#include "kernels/vulkan/plan/kernel_table.h"
#include "kernels/vulkan/plan/weight_layout.h"
#include "lib/core/error.h"
#include "lib/core/float16.h"
#include "lib/ir/stored_layout.h"

namespace mt::vulkan {

Params& Params::i(int64_t value) {
  if (value < INT32_MIN || value > INT32_MAX) fail(ExitCode::unsupported, "vulkan: parameter {} exceeds 32 bits", value);
  const int32_t v = static_cast<int32_t>(value);
  uint32_t word;
  std::memcpy(&word, &v, 4);
  words_.push_back(word);
  return *this;
}

Params& Params::f(double value) {
  const float v = static_cast<float>(value);
  uint32_t word;
  std::memcpy(&word, &v, 4);
  words_.push_back(word);
  return *this;
}

Params& Params::view(const View& view) {
  view.append_to(words_);
  return *this;
}

Params& Params::append(const Params& more) {
  words_.insert(words_.end(), more.words_.begin(), more.words_.end());
  return *this;
}

std::array<uint32_t, 3> linear_groups(int64_t count, uint32_t local) {
  const int64_t groups = std::max<int64_t>(1, (count + local - 1) / local);
  const int64_t x = std::min<int64_t>(groups, 65535);
  const int64_t y = (groups + x - 1) / x;
  if (y > 65535) fail(ExitCode::unsupported, "vulkan: {} invocations are more than one dispatch covers", count);
  return {static_cast<uint32_t>(x), static_cast<uint32_t>(y), 1};
}

namespace {

// Staging bytes of a graph input or output: float32 for computed bool tensors (0.0 / 1.0, converted
// by the host); int8 ones are read and written by whole 32-bit words; a constant output keeps its
// own bytes.
size_t staging_bytes(const TensorInfo& info) {
  if (info.dtype == DType::boolean && !info.is_constant()) return static_cast<size_t>(info.numel()) * 4;
  return (info.byte_size() + 3) / 4 * 4;
}

// Row-major int8 values as floats (the integers), as int8 tensors are stored on the device.
std::vector<float> int8_as_floats(std::span<const int8_t> values) { return {values.begin(), values.end()}; }

}  // namespace

PlanBuilder::PlanBuilder(const Graph& g, bool use_fp16, bool use_int8_dot, const DeviceInfo* info)
    : graph(g), fp16(use_fp16), int8_dot(use_int8_dot), device(info) {
  for (const auto& name : graph.inputs)
    input_staging.push_back(new_buffer(Region::input_staging, staging_bytes(graph.tensor(name))));
  for (const auto& name : graph.outputs)
    output_staging.push_back(new_buffer(Region::output_staging, staging_bytes(graph.tensor(name))));
}

int PlanBuilder::new_buffer(Region region, size_t bytes, std::vector<std::byte> data) {
  if (device != nullptr && region != Region::params && bytes > device->max_storage_buffer_range)
    fail(ExitCode::unsupported, "vulkan: a tensor of {} bytes exceeds device '{}''s storage buffer range ({} bytes)", bytes,
         device->name, device->max_storage_buffer_range);
  Buffer buffer;
  buffer.region = region;
  buffer.bytes = std::max<size_t>(bytes, 4);
  buffer.data = std::move(data);
  buffers.push_back(std::move(buffer));
  return static_cast<int>(buffers.size() - 1);
}

Tensor PlanBuilder::new_tensor(const Shape& shape) {
  Tensor tensor;
  tensor.layout = packed_layout(shape);
  if (tensor.layout.dims.size() > static_cast<size_t>(kMaxRank))
    fail(ExitCode::unsupported, "vulkan: rank {} tensors are not supported (at most {})", tensor.layout.dims.size(), kMaxRank);
  if (tensor.layout.texels * 4 > INT32_MAX)
    fail(ExitCode::unsupported, "vulkan: a tensor of shape {} is too large (2^31 elements at most)", shape_str(shape));
  tensor.buffer = new_buffer(Region::arena, tensor.layout.bytes(fp16));
  return tensor;
}

void PlanBuilder::define(const std::string& name, const Tensor& tensor) { values_[name] = tensor; }

void PlanBuilder::add_dispatch(Dispatch dispatch, const Params& params) {
  const auto& words = params.words();
  std::vector<std::byte> bytes(words.size() * 4);
  std::memcpy(bytes.data(), words.data(), bytes.size());
  const size_t size = bytes.size();  // not in the call: the argument may be moved from first
  dispatch.params = new_buffer(Region::params, size, std::move(bytes));
  const size_t index = dispatches.size();
  auto use = [&](int b) {
    Buffer& buffer = buffers[static_cast<size_t>(b)];
    buffer.first = std::min(buffer.first, index);
    buffer.last = std::max(buffer.last, index);
  };
  use(dispatch.params);
  for (const Binding& binding : dispatch.bindings) use(binding.buffer);
  dispatches.push_back(std::move(dispatch));
}

const Tensor& PlanBuilder::value(const std::string& name, size_t node_index) {
  if (auto it = values_.find(name); it != values_.end()) return it->second;
  const TensorInfo& info = graph.tensor(name);
  // int8 tensors are stored as floats holding their integer values (exact in fp16 too), computed
  // bool ones as 0.0 / 1.0.
  const bool int8 = info.dtype == DType::i8;
  if (info.dtype != DType::f32 && !int8 && !(info.dtype == DType::boolean && !info.is_constant()))
    fail(ExitCode::unsupported, "vulkan: tensor '{}' is {}; only float32, int8 and computed bool tensors are supported", name,
         dtype_name(info.dtype));
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    if (graph.inputs[i] != name) continue;
    // A graph input: packed from its staging buffer when first used.
    const Tensor tensor = new_tensor(info.shape);
    Dispatch dispatch;
    dispatch.key = {"pack", fp16, {64, 1, 1}, {int8 ? 1u : 0u}, 3};
    dispatch.bindings = {{input_staging[i], false}, {tensor.buffer, true}};
    dispatch.groups = linear_groups(tensor.layout.texels);
    dispatch.node_index = node_index;
    add_dispatch(std::move(dispatch), Params().i(tensor.layout.texels).view(tensor.view()));
    define(name, tensor);
    return values_.at(name);
  }
  if (!info.is_constant()) fail(ExitCode::failure, "vulkan: tensor '{}' is used before it is computed", name);
  Tensor tensor;
  tensor.layout = packed_layout(info.shape);
  const std::vector<float> values =
      int8 ? int8_as_floats(info.data.as<int8_t>())
           : std::vector<float>(info.data.as<float>().begin(), info.data.as<float>().end());
  tensor.buffer = new_buffer(Region::weights, tensor.layout.bytes(fp16),
                             encode_floats(pack_tensor(values.data(), info.shape), fp16));
  define(name, tensor);
  return values_.at(name);
}

void PlanBuilder::build() {
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    const VulkanKernel* kernel = find_vulkan_kernel(graph, node);
    if (kernel == nullptr) fail(ExitCode::unsupported, "vulkan: node '{}': op {} not implemented", node.name, node.op);
    NodeContext context(*this, n);
    kernel->plan(context);
  }
  const auto producers = graph.producers();
  for (size_t o = 0; o < graph.outputs.size(); ++o) {
    const std::string& name = graph.outputs[o];
    if (const TensorInfo& info = graph.tensor(name); info.is_constant() && info.layout.empty()) {
      constant_outputs.push_back(o);
      continue;
    }
    auto it = producers.find(name);
    const size_t node_index = it != producers.end() ? it->second : 0;
    const Tensor tensor = value(name, node_index);
    const bool int8 = graph.tensor(name).dtype == DType::i8;
    Dispatch dispatch;
    dispatch.key = {"unpack", fp16, {64, 1, 1}, {int8 ? 1u : 0u}, 3};
    dispatch.bindings = {{tensor.buffer, false}, {output_staging[o], true}};
    const int64_t count = numel(tensor.layout.dims);
    dispatch.groups = linear_groups(int8 ? (count + 3) / 4 : count);
    dispatch.node_index = node_index;
    add_dispatch(std::move(dispatch), Params().i(count).view(tensor.view()));
  }
}

NodeContext::NodeContext(PlanBuilder& builder, size_t node_index)
    : builder_(builder), index_(node_index), node_(builder.graph.nodes[node_index]) {}

Tensor NodeContext::output(size_t i) {
  const Tensor tensor = builder_.new_tensor(output_info(i).shape);
  builder_.define(node_.outputs.at(i), tensor);
  return tensor;
}

int NodeContext::graph_input_staging(size_t i) const {
  const auto& inputs = builder_.graph.inputs;
  const auto it = std::find(inputs.begin(), inputs.end(), node_.inputs.at(i));
  return it == inputs.end() ? -1 : builder_.input_staging[static_cast<size_t>(it - inputs.begin())];
}

void NodeContext::alias_output(size_t i, const Tensor& source) {
  Tensor tensor = source;
  tensor.layout = packed_layout(output_info(i).shape);
  builder_.define(node_.outputs.at(i), tensor);
}

std::vector<float> NodeContext::constant_values(size_t i) const {
  const TensorInfo& info = input_info(i);
  if (info.dtype == DType::i8) return int8_as_floats(info.data.as<int8_t>());
  const auto values = info.data.as<float>();
  return {values.begin(), values.end()};
}

VulkanStorage NodeContext::prepacked_storage(size_t i) const {
  const TensorInfo& info = input_info(i);
  const std::optional<VulkanStorage> storage = parse_vulkan_layout(info.layout);
  if (!storage) fail(ExitCode::failure, "vulkan: tensor '{}' has layout '{}', not a vulkan one", info.name, info.layout);
  if (!is_int8_layout(storage->layout) && storage->fp16 != builder_.fp16)
    invalid_input("vulkan: tensor '{}' is stored in {} (layout '{}') but the model is planned in {}", info.name,
                  storage->fp16 ? "fp16" : "fp32", info.layout, builder_.fp16 ? "fp16" : "fp32");
  return *storage;
}

int NodeContext::prepacked_weights(size_t i) {
  prepacked_storage(i);
  const auto bytes = input_info(i).data.bytes();
  return builder_.new_buffer(Region::weights, bytes.size(), std::vector<std::byte>(bytes.begin(), bytes.end()));
}

std::vector<float> NodeContext::prepacked_values(size_t i) const {
  const VulkanStorage storage = prepacked_storage(i);
  const auto bytes = input_info(i).data.bytes();
  std::vector<float> values(bytes.size() / (storage.fp16 ? 2 : 4));
  if (!storage.fp16) {
    std::memcpy(values.data(), bytes.data(), values.size() * 4);
    return values;
  }
  for (size_t k = 0; k < values.size(); ++k) {
    uint16_t half = 0;
    std::memcpy(&half, bytes.data() + 2 * k, 2);
    values[k] = half_to_float(half);
  }
  return values;
}

int NodeContext::scratch(int64_t texels) {
  return builder_.new_buffer(Region::arena, static_cast<size_t>(texels) * (builder_.fp16 ? 8 : 16));
}

int NodeContext::weights(const std::vector<float>& values) {
  std::vector<std::byte> bytes = encode_floats(values, builder_.fp16);
  const size_t size = bytes.size();
  return builder_.new_buffer(Region::weights, size, std::move(bytes));
}

int NodeContext::weights_fp32(const std::vector<float>& values) {
  std::vector<std::byte> bytes = encode_floats(values, false);
  const size_t size = bytes.size();
  return builder_.new_buffer(Region::weights, size, std::move(bytes));
}

int NodeContext::weights_words(const std::vector<int32_t>& values) {
  std::vector<std::byte> bytes(values.size() * 4);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  const size_t size = bytes.size();
  return builder_.new_buffer(Region::weights, size, std::move(bytes));
}

int NodeContext::weights_int8(const std::vector<int8_t>& values) {
  std::vector<std::byte> bytes((values.size() + 3) / 4 * 4, std::byte{0});
  std::memcpy(bytes.data(), values.data(), values.size());
  const size_t size = bytes.size();
  return builder_.new_buffer(Region::weights, size, std::move(bytes));
}

void NodeContext::dispatch(const std::string& shader, std::array<uint32_t, 3> local, std::vector<uint32_t> spec,
                           std::initializer_list<Binding> bindings, const Params& params, std::array<uint32_t, 3> groups) {
  Dispatch d;
  uint32_t texel_bindings = 0;
  uint32_t b = 1;
  for (const Binding& binding : bindings) texel_bindings |= (binding.texels != Texels::none ? 1u : 0u) << b++;
  d.key = {shader, builder_.fp16, local, std::move(spec), static_cast<uint32_t>(bindings.size() + 1), texel_bindings};
  d.bindings.assign(bindings.begin(), bindings.end());
  d.groups = groups;
  d.node_index = index_;
  builder_.add_dispatch(std::move(d), params);
}

}  // namespace mt::vulkan
