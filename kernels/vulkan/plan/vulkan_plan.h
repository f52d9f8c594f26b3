// A graph planned for the Vulkan backend: its buffers placed in device memory (the arena shared by
// liveness), every pipeline and descriptor set created, and the whole graph recorded once into one
// command buffer. run() copies inputs into staging (with reuse_unchanged_inputs, only those bound again
// since the last run), submits, waits and copies outputs back.
#pragma once

#include <memory>
#include <vector>

#include "kernels/vulkan/runtime/context.h"
#include "kernels/vulkan/plan/plan_builder.h"
#include "lib/runtime/backend.h"

namespace mt::vulkan {

class VulkanPlan final : public ExecutionPlan {
 public:
  VulkanPlan(const Graph& graph, const PlanOptions& options, std::shared_ptr<Context> context);
  ~VulkanPlan() override;

  void bind_input(size_t index, const void* data) override;
  void bind_output(size_t index, void* data) override;
  const void* output_data(size_t index) const override;
  void run() override;
  void reuse_unchanged_inputs(bool on) override { reuse_inputs_ = on; }
  MemoryStats memory() const override { return stats_; }
  std::vector<NodeTiming> last_profile() const override;

 private:
  void place(PlanBuilder& builder);
  void create_descriptors(const PlanBuilder& builder);
  void record(const PlanBuilder& builder);
  void release();

  std::shared_ptr<Context> context_;
  VkDevice device_ = VK_NULL_HANDLE;
  std::vector<Allocation> allocations_;
  std::vector<std::byte*> input_staging_;   // mapped, per graph input
  std::vector<size_t> input_bytes_;
  std::vector<const void*> inputs_;
  std::vector<bool> input_bound_;  // bind_input called since the last run
  bool reuse_inputs_ = false;
  std::vector<std::byte*> output_staging_;  // mapped, per graph output
  std::vector<size_t> output_bytes_;
  std::vector<void*> outputs_;              // caller buffers (nullptr: read from staging)
  // bool inputs and outputs: staging holds them as float32 0.0 / 1.0, the caller as bytes.
  std::vector<bool> input_bool_, output_bool_;
  std::vector<std::vector<uint8_t>> bool_outputs_;  // the bytes of unbound bool outputs, after a run
  std::vector<std::string> input_names_;

  VkDescriptorPool descriptor_pool_ = VK_NULL_HANDLE;
  std::vector<VkDescriptorSet> sets_;
  std::vector<VkBufferView> views_;  // of the uniform texel buffer bindings
  std::vector<const Pipeline*> pipelines_;
  VkCommandPool command_pool_ = VK_NULL_HANDLE;
  VkCommandBuffer commands_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;

  // Profiling: one pair of timestamps around each run of consecutive dispatches of one node.
  VkQueryPool queries_ = VK_NULL_HANDLE;
  std::vector<size_t> segment_nodes_;
  std::vector<uint64_t> timestamps_;
  std::vector<double> node_seconds_;
  size_t node_count_ = 0;
  bool profile_ = false;
  MemoryStats stats_;
};

}  // namespace mt::vulkan
