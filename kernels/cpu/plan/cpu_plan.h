// A graph planned for the cpu backend: the steps in order, one arena for every intermediate
// tensor, and the caller's input/output buffers, rebinding only the steps that touch a buffer
// when the caller moves it.
#pragma once

#include <memory>
#include <vector>

#include "kernels/cpu/plan/plan_builder.h"

namespace mt::cpu {

class CpuPlan final : public ExecutionPlan {
 public:
  CpuPlan(const Graph& graph, const PlanOptions& options);
  ~CpuPlan() override;

  void bind_input(size_t index, const void* data) override;
  void bind_output(size_t index, void* data) override;
  const void* output_data(size_t index) const override;
  void run() override;
  MemoryStats memory() const override { return stats_; }
  std::vector<NodeTiming> last_profile() const override;

 private:
  void point(size_t buffer, void* data);
  void bind_step(size_t step);

  std::unique_ptr<ThreadPool> pool_;  // none for 1 thread
  std::vector<std::string> input_names_;
  std::vector<ConstData> constants_;  // keeps the graph's weights (memory map) alive
  std::vector<Buffer> buffers_;
  std::vector<PlannedStep> steps_;
  std::vector<OwnedBlock> owned_;
  std::vector<int> input_buffers_;
  std::vector<Value> outputs_;
  std::vector<void*> arena_pointers_;              // per output: its place in the arena when unbound
  std::vector<std::vector<size_t>> steps_of_buffer_;
  std::vector<bool> stale_;                        // per step: must be bound again before running
  bool any_stale_ = false;
  OwnedBlock arena_{0};
  std::vector<void*> scratch_pointers_;            // reused by bind_step
  MemoryStats stats_;
  bool profile_ = false;
  std::vector<double> step_seconds_;
  size_t node_count_ = 0;
};

}  // namespace mt::cpu
