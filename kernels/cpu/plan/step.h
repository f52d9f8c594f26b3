// One unit of work in a cpu plan: an XNNPACK operator or a portable kernel. Steps are pointed at
// their buffers once (bind) and then run any number of times without allocating.
#pragma once

#include <xnnpack.h>

#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cpu/plan/thread_pool.h"

namespace mt::cpu {

// The buffers of a step, in the order its planner listed them.
using Pointers = std::span<void* const>;

class Step {
 public:
  virtual ~Step() = default;
  // Called at planning and again whenever a caller-bound buffer the step uses changes.
  virtual void bind(Pointers pointers) = 0;
  virtual void run(ThreadPool* pool) = 0;
};

// A portable kernel: fn(pointers, pool) on every run.
template <typename Fn>
class KernelStep final : public Step {
 public:
  KernelStep(Fn fn, size_t count) : fn_(std::move(fn)), pointers_(count, nullptr) {}
  void bind(Pointers pointers) override { std::copy(pointers.begin(), pointers.end(), pointers_.begin()); }
  void run(ThreadPool* pool) override { fn_(Pointers(pointers_), pool); }

 private:
  Fn fn_;
  std::vector<void*> pointers_;
};

struct XnnDeleter {
  void operator()(xnn_operator_t op) const { xnn_delete_operator(op); }
};
using XnnOperator = std::unique_ptr<xnn_operator, XnnDeleter>;

// Output bytes below which an XNNPACK operator runs on the calling thread alone, the plan's workers
// spinning on: splitting it would save less than parking them and waking XNNPACK's threads costs
// (EfficientNet-B0 int8's 16 squeeze-excitation sigmoids of 1 x C).
constexpr size_t kXnnOnCallerBytes = size_t{64} << 10;

// An XNNPACK operator created (weights packed) at planning; setup(op, pointers) calls the
// matching xnn_setup_* with the buffers and is repeated only when they move. With a null `pool`
// it runs on the calling thread; with XNNPACK's pool, through run_xnnpack.
template <typename Setup>
class XnnStep final : public Step {
 public:
  XnnStep(XnnOperator op, Setup setup, pthreadpool_t pool, std::string what)
      : op_(std::move(op)), setup_(std::move(setup)), pool_(pool), what_(std::move(what)) {}
  void bind(Pointers pointers) override;
  void run(ThreadPool* pool) override { run_xnnpack(op_.get(), pool_ == nullptr ? nullptr : pool); }

 private:
  XnnOperator op_;
  Setup setup_;
  pthreadpool_t pool_;  // XNNPACK's threads: xnn_setup_* sizes its tiles for them
  std::string what_;  // for error messages: "xnn_setup for node 'conv_3'"
};

// Throws Error(failure) naming the XNNPACK call if it did not succeed.
void check_xnn(xnn_status status, const char* what);

template <typename Setup>
void XnnStep<Setup>::bind(Pointers pointers) {
  check_xnn(setup_(op_.get(), pointers, pool_), what_.c_str());
}

}  // namespace mt::cpu
